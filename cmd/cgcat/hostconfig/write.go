package hostconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

// newFileMode is the mode of a config file this package creates.
const newFileMode fs.FileMode = 0o600

// BackupSuffix starts the name of every backup: <file><BackupSuffix><time>.
const BackupSuffix = ".cgcat-backup-"

// WriteWithBackup replaces the file at path with data.
//
// If the file exists, a copy of it is first written next to it as
// <file>.cgcat-backup-<UTC time of now>[-N] with the original's permission
// bits (so a 0600 file gets a 0600 backup), and synced; its path is
// returned. Then data is written to a temporary file in the same directory,
// given the original's permission bits (0600 for a new file), synced, and
// renamed over the file; the directory is synced last. Readers see the old
// or the new file, never a mix, and no temporary file is left behind.
//
// A symlink at path is followed: the file it points to is replaced and the
// link stays. The directory must exist.
func WriteWithBackup(path string, data []byte, now time.Time) (backupPath string, err error) {
	target, err := resolveTarget(path)
	if err != nil {
		return "", err
	}
	mode := newFileMode
	fi, err := os.Stat(target)
	switch {
	case err == nil:
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("%s is not a regular file", target)
		}
		mode = fi.Mode().Perm()
		orig, err := os.ReadFile(target)
		if err != nil {
			return "", err
		}
		backupPath, err = writeBackup(target, orig, mode, now)
		if err != nil {
			return "", err
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return "", err
	}
	if err := atomicWrite(target, data, mode); err != nil {
		return backupPath, err
	}
	return backupPath, nil
}

// resolveTarget follows a symlink at path so that the rename replaces the
// real file, not the link. A path that does not exist is returned as is.
func resolveTarget(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		return "", err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s is a symlink that cannot be followed: %w", path, err)
	}
	return target, nil
}

func writeBackup(target string, orig []byte, mode fs.FileMode, now time.Time) (string, error) {
	base := target + BackupSuffix + now.UTC().Format("20060102T150405Z")
	for n := 0; n < 1000; n++ {
		p := base
		if n > 0 {
			p = base + "-" + strconv.Itoa(n)
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("writing backup: %w", err)
		}
		err = writeSyncClose(f, orig, mode)
		if err != nil {
			os.Remove(p)
			return "", fmt.Errorf("writing backup %s: %w", p, err)
		}
		return p, nil
	}
	return "", fmt.Errorf("writing backup: too many backups named %s*", base)
}

// writeSyncClose writes data, sets mode exactly (the umask does not apply),
// syncs and closes f.
func writeSyncClose(f *os.File, data []byte, mode fs.FileMode) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func atomicWrite(target string, data []byte, mode fs.FileMode) (err error) {
	dir := filepath.Dir(target)
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err := writeSyncClose(f, data, mode); err != nil {
		return err
	}
	if err := os.Rename(tmp, target); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes the rename durable. Windows cannot sync a directory; there
// the rename is as durable as the file system makes it.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
