package hostconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// newFileMode is the mode of a config file this package creates.
const newFileMode fs.FileMode = 0o600

// BackupSuffix starts the name of a backup kept next to its file:
// <file><BackupSuffix><time>.
const BackupSuffix = ".cgcat-backup-"

// Backups says where WriteWithBackup keeps the copies of the files it
// replaces.
type Backups struct {
	// Dir holds the copies, named <file name>.<UTC time>[-N]; it is created
	// (0700) when missing. "" keeps each copy next to its file as
	// <file>.cgcat-backup-<UTC time>[-N].
	Dir string
	// Keep is how many copies of one file name Dir keeps, the newest; zero
	// keeps them all.
	Keep int
}

// backupTime is the UTC time in a backup's name.
const backupTime = "20060102T150405Z"

// WriteWithBackup replaces the file at path with data.
//
// If the file exists, a copy of it is first written as b says (next to it
// as <file>.cgcat-backup-<UTC time of now>[-N], or into b.Dir) with the
// original's permission bits (so a 0600 file gets a 0600 backup), and
// synced; its path is returned. b.Keep then bounds the copies in b.Dir. Then data is written to a temporary file in the same directory,
// given the original's permission bits (0600 for a new file), synced, and
// renamed over the file; the directory is synced last. Readers see the old
// or the new file, never a mix, and no temporary file is left behind.
//
// A symlink at path is followed: the file it points to is replaced and the
// link stays. The directory must exist.
func WriteWithBackup(path string, data []byte, now time.Time, b Backups) (backupPath string, err error) {
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
		base := target + BackupSuffix + now.UTC().Format(backupTime)
		if b.Dir != "" {
			if err := os.MkdirAll(b.Dir, 0o700); err != nil {
				return "", fmt.Errorf("writing backup: %w", err)
			}
			base = filepath.Join(b.Dir, filepath.Base(target)+"."+now.UTC().Format(backupTime))
		}
		backupPath, err = writeBackup(base, orig, mode)
		if err != nil {
			return "", err
		}
		if b.Dir != "" && b.Keep > 0 {
			pruneBackups(b.Dir, filepath.Base(target), b.Keep)
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

func writeBackup(base string, orig []byte, mode fs.FileMode) (string, error) {
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

// pruneBackups removes the oldest copies of the file called name in dir
// beyond keep. Only names of the form <name>.<UTC time>[-N] are touched;
// a failure to remove one leaves it for the next write.
func pruneBackups(dir, name string, keep int) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type copyOf struct {
		name string
		at   string // the time, then the number: sorts oldest first
	}
	var copies []copyOf
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), name+".")
		if !ok || !e.Type().IsRegular() || len(rest) < len(backupTime) {
			continue
		}
		if _, err := time.Parse(backupTime, rest[:len(backupTime)]); err != nil {
			continue
		}
		n := 0
		if suf := rest[len(backupTime):]; suf != "" {
			if n, err = strconv.Atoi(strings.TrimPrefix(suf, "-")); err != nil || !strings.HasPrefix(suf, "-") {
				continue
			}
		}
		copies = append(copies, copyOf{e.Name(), fmt.Sprintf("%s-%06d", rest[:len(backupTime)], n)})
	}
	slices.SortFunc(copies, func(a, b copyOf) int { return strings.Compare(a.at, b.at) })
	for len(copies) > keep {
		_ = os.Remove(filepath.Join(dir, copies[0].name))
		copies = copies[1:]
	}
}

// RemoveWithBackup removes the file at path after writing a copy of it as
// WriteWithBackup does; it returns the copy's path. A missing file is not
// an error (nothing is copied).
func RemoveWithBackup(path string, now time.Time, b Backups) (backupPath string, err error) {
	orig, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	base := path + BackupSuffix + now.UTC().Format(backupTime)
	if b.Dir != "" {
		if err := os.MkdirAll(b.Dir, 0o700); err != nil {
			return "", fmt.Errorf("writing backup: %w", err)
		}
		base = filepath.Join(b.Dir, filepath.Base(path)+"."+now.UTC().Format(backupTime))
	}
	if backupPath, err = writeBackup(base, orig, fi.Mode().Perm()); err != nil {
		return "", err
	}
	if b.Dir != "" && b.Keep > 0 {
		pruneBackups(b.Dir, filepath.Base(path), b.Keep)
	}
	if err := os.Remove(path); err != nil {
		return backupPath, err
	}
	return backupPath, syncDir(filepath.Dir(path))
}
