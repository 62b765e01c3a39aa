//go:build unix

package nofollow

import (
	"io"
	"io/fs"
	"path/filepath"

	"github.com/cgcat/cgcat/local/pathid"
	"golang.org/x/sys/unix"
)

// Dir is an open directory reached without following any symlink. It is
// safe for use by one goroutine at a time.
type Dir struct {
	fd     int
	path   string
	lookup bool // opened for lookups only (O_PATH): List fails
	listed bool // List ran before: the next one rewinds
	id     pathid.ID
	hasID  bool
}

// OpenDir opens the directory at the absolute path p for listing, refusing
// it (ErrSymlink) if any component of p is a symlink.
func OpenDir(p string) (*Dir, error) {
	clean, err := cleanAbs(p)
	if err != nil {
		return nil, err
	}
	fd, err := openPath(clean, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	return &Dir{fd: fd, path: clean}, nil
}

// LookupDir is OpenDir for a directory that is only looked into (its
// entries opened, stat-ed or its identity read), never listed. Where the
// platform allows (Linux O_PATH, macOS O_SEARCH) it needs only search
// permission, as a path lookup does.
func LookupDir(p string) (*Dir, error) {
	clean, err := cleanAbs(p)
	if err != nil {
		return nil, err
	}
	fd, err := openPath(clean, lookupFlag)
	if err != nil {
		return nil, err
	}
	return &Dir{fd: fd, path: clean, lookup: lookupFlag != unix.O_RDONLY}, nil
}

// LookupChain is LookupDir for p that also returns the identities of p's
// ancestors from its parent up to and including top (nearest first), each
// read from the descriptor the walk went through, so they are the real
// ancestors of the directory opened. top must be p or an ancestor of p by
// exact spelling; "" means the file-system root. top itself is opened with
// no symlink in any component, then each name below it with O_NOFOLLOW.
func LookupChain(p, top string) (*Dir, []pathid.ID, error) {
	clean, vol, _, err := splitAbs(p)
	if err != nil {
		return nil, nil, pathErr("open", p, err)
	}
	if top == "" {
		top = vol
	}
	if top, _, _, err = splitAbs(top); err != nil {
		return nil, nil, pathErr("open", top, err)
	}
	parts, ok := below(top, clean)
	if !ok {
		return nil, nil, pathErr("open", p, errNotBelow)
	}
	fd, err := openPath(top, lookupFlag)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]pathid.ID, 0, len(parts))
	cur := top
	for _, name := range parts {
		id, err := fstatID(fd)
		if err != nil {
			unix.Close(fd)
			return nil, nil, pathErr("stat", cur, err)
		}
		ids = append(ids, id)
		cur = filepath.Join(cur, name)
		nfd, err := openAt(fd, name, lookupFlag|unix.O_DIRECTORY|unix.O_NOFOLLOW)
		if err != nil {
			err = symlinkOr(fd, name, err)
			unix.Close(fd)
			return nil, nil, pathErr("open", cur, err)
		}
		unix.Close(fd)
		fd = nfd
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return &Dir{fd: fd, path: clean, lookup: lookupFlag != unix.O_RDONLY}, ids, nil
}

// Path is the path the directory was opened by.
func (d *Dir) Path() string { return d.path }

// Close closes the directory.
func (d *Dir) Close() error {
	if d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// ID is the directory's identity (device and inode), read once from the
// open descriptor.
func (d *Dir) ID() (pathid.ID, error) {
	if !d.hasID {
		id, err := fstatID(d.fd)
		if err != nil {
			return pathid.ID{}, pathErr("stat", d.path, err)
		}
		d.id, d.hasID = id, true
	}
	return d.id, nil
}

// OpenDir opens the directory rel below d for listing: rel is one name or
// several, slash-separated, none of them a symlink, ".." or ".".
func (d *Dir) OpenDir(rel string) (*Dir, error) {
	fd, err := d.walk(rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	return &Dir{fd: fd, path: join(d.path, rel)}, nil
}

// OpenFile opens the file rel below d for reading, as OpenDir does: no
// component may be a symlink. It never blocks on a FIFO and never makes a
// terminal the controlling one; check File.Stat before reading.
func (d *Dir) OpenFile(rel string) (*File, error) {
	fd, err := d.walk(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, err
	}
	return &File{fd: fd, name: join(d.path, rel)}, nil
}

// walk opens rel relative to d with flags (plus O_NOFOLLOW and O_CLOEXEC on
// every component).
func (d *Dir) walk(rel string, flags int) (int, error) {
	parts, err := names(rel)
	if err != nil {
		return -1, pathErr("open", join(d.path, rel), err)
	}
	if fd, err, ok := openBeneath(d.fd, rel, flags); ok {
		if err != nil {
			return -1, pathErr("open", join(d.path, rel), err)
		}
		return fd, nil
	}
	fd := d.fd
	for i, name := range parts {
		last := i == len(parts)-1
		fl := lookupFlag | unix.O_DIRECTORY
		if last {
			fl = flags
		}
		nfd, err := openAt(fd, name, fl|unix.O_NOFOLLOW)
		if err != nil {
			err = symlinkOr(fd, name, err)
		}
		if fd != d.fd {
			unix.Close(fd)
		}
		if err != nil {
			return -1, pathErr("open", join(d.path, rel), err)
		}
		fd = nfd
	}
	return fd, nil
}

// Lstat reports on the entry name of d (one name) without following it.
func (d *Dir) Lstat(name string) (Info, error) {
	if !oneName(name) {
		return Info{}, pathErr("lstat", join(d.path, name), errBadName)
	}
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Info{}, pathErr("lstat", join(d.path, name), err)
		}
		return infoOf(&st), nil
	}
}

// Readlink returns the target of the symlink name in d (one name).
func (d *Dir) Readlink(name string) (string, error) {
	if !oneName(name) {
		return "", pathErr("readlink", join(d.path, name), errBadName)
	}
	for n := 256; n <= 1<<16; n *= 4 {
		buf := make([]byte, n)
		l, err := unix.Readlinkat(d.fd, name, buf)
		if err == unix.EINTR {
			n /= 4
			continue
		}
		if err != nil {
			return "", pathErr("readlink", join(d.path, name), err)
		}
		if l < n {
			return string(buf[:l]), nil
		}
	}
	return "", pathErr("readlink", join(d.path, name), unix.ENAMETOOLONG)
}

// File is a file opened by Dir.OpenFile.
type File struct {
	fd   int
	name string
}

// Read reads from the file; it returns io.EOF at the end.
func (f *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(f.fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, pathErr("read", f.name, err)
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

// Stat reports on the open file.
func (f *File) Stat() (Info, error) {
	var st unix.Stat_t
	if err := fstat(f.fd, &st); err != nil {
		return Info{}, pathErr("stat", f.name, err)
	}
	return infoOf(&st), nil
}

// Close closes the file.
func (f *File) Close() error {
	if f.fd < 0 {
		return nil
	}
	err := unix.Close(f.fd)
	f.fd = -1
	return err
}

// Name is the path the file was opened by.
func (f *File) Name() string { return f.name }

// openAt is openat with O_CLOEXEC, retried on EINTR.
func openAt(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// symlinkOr turns the error of an O_NOFOLLOW open of name in dirfd into
// ErrSymlink when name is a symlink: O_NOFOLLOW with O_DIRECTORY (or
// O_PATH) says ENOTDIR for a symlink, without it ELOOP.
func symlinkOr(dirfd int, name string, err error) error {
	switch err {
	case unix.ELOOP:
		return ErrSymlink
	case unix.ENOTDIR:
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return ErrSymlink
		}
	}
	return err
}

// walkPath opens the absolute, clean path p component by component from
// "/", each with O_NOFOLLOW relative to the one before: the portable way to
// open a path with no symlink in it. Ancestors are opened with lookupFlag;
// p itself with flags.
func walkPath(p string, flags int) (int, error) {
	_, _, parts, err := splitAbs(p)
	if err != nil {
		return -1, pathErr("open", p, err)
	}
	fl := lookupFlag | unix.O_DIRECTORY
	if len(parts) == 0 {
		fl = flags | unix.O_DIRECTORY
	}
	fd, err := openAt(unix.AT_FDCWD, "/", fl)
	if err != nil {
		return -1, pathErr("open", "/", err)
	}
	cur := "/"
	for i, name := range parts {
		cur = filepath.Join(cur, name)
		fl := lookupFlag | unix.O_DIRECTORY
		if i == len(parts)-1 {
			fl = flags | unix.O_DIRECTORY
		}
		nfd, err := openAt(fd, name, fl|unix.O_NOFOLLOW)
		if err != nil {
			err = symlinkOr(fd, name, err)
		}
		unix.Close(fd)
		if err != nil {
			return -1, pathErr("open", cur, err)
		}
		fd = nfd
	}
	return fd, nil
}

func fstat(fd int, st *unix.Stat_t) error {
	for {
		err := unix.Fstat(fd, st)
		if err != unix.EINTR {
			return err
		}
	}
}

func fstatID(fd int) (pathid.ID, error) {
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		return pathid.ID{}, err
	}
	return pathid.ID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, nil
}

func infoOf(st *unix.Stat_t) Info {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFREG:
	default:
		mode |= fs.ModeIrregular
	}
	i := Info{Mode: mode, Size: st.Size, ID: pathid.ID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}}
	i.Mtime, i.Ctime = statTimes(st)
	return i
}
