//go:build !unix

package nofollow

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cgcat/cgcat/local/pathid"
)

// Best effort by path (Windows and platforms without openat): every
// component is Lstat-ed and refused if it is a symlink, a junction or any
// other reparse point, and then the path is opened. A swap between that
// check and the open is not caught; the checks narrow the window, they do
// not close it.

// Dir is a directory reached without following any symlink (see above for
// the limits of this platform).
type Dir struct {
	path  string
	id    pathid.ID
	hasID bool
}

// OpenDir opens the directory at the absolute path p, refusing it
// (ErrSymlink) if any component of p is a symlink or reparse point.
func OpenDir(p string) (*Dir, error) {
	clean, vol, parts, err := splitAbs(p)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	if err := checkComponents(vol, parts); err != nil {
		return nil, err
	}
	return &Dir{path: clean}, nil
}

// LookupDir is OpenDir here.
func LookupDir(p string) (*Dir, error) { return OpenDir(p) }

// LookupChain is LookupDir for p that also returns the identities of p's
// ancestors from its parent up to and including top (nearest first); ""
// means the volume root.
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
	d, err := OpenDir(clean)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]pathid.ID, 0, len(parts))
	cur := clean
	for range parts {
		cur = filepath.Dir(cur)
		id, err := pathid.FileID(cur)
		if err != nil {
			return nil, nil, err
		}
		ids = append(ids, id)
	}
	return d, ids, nil
}

func checkComponents(vol string, parts []string) error {
	cur := vol
	for _, name := range parts {
		cur = filepath.Join(cur, name)
		fi, err := os.Lstat(cur)
		if err != nil {
			return err
		}
		if fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
			return pathErr("open", cur, ErrSymlink)
		}
		if !fi.IsDir() {
			return pathErr("open", cur, syscall.ENOTDIR)
		}
	}
	return nil
}

// Path is the path the directory was opened by.
func (d *Dir) Path() string { return d.path }

// Close releases the directory.
func (d *Dir) Close() error { return nil }

// ID is the directory's identity (volume serial and file id).
func (d *Dir) ID() (pathid.ID, error) {
	if !d.hasID {
		id, err := pathid.FileID(d.path)
		if err != nil {
			return pathid.ID{}, err
		}
		d.id, d.hasID = id, true
	}
	return d.id, nil
}

func (d *Dir) check(rel string) (string, error) {
	parts, err := names(rel)
	if err != nil {
		return "", pathErr("open", join(d.path, rel), err)
	}
	if err := checkComponents(d.path, parts); err != nil {
		return "", err
	}
	return join(d.path, rel), nil
}

// OpenDir opens the directory rel below d: one name or several,
// slash-separated, none of them a symlink, ".." or ".".
func (d *Dir) OpenDir(rel string) (*Dir, error) {
	p, err := d.check(rel)
	if err != nil {
		return nil, err
	}
	return &Dir{path: p}, nil
}

// OpenFile opens the file rel below d for reading; no component may be a
// symlink.
func (d *Dir) OpenFile(rel string) (*File, error) {
	parts, err := names(rel)
	if err != nil {
		return nil, pathErr("open", join(d.path, rel), err)
	}
	if len(parts) > 1 {
		if _, err := d.check(filepath.ToSlash(filepath.Join(parts[:len(parts)-1]...))); err != nil {
			return nil, err
		}
	}
	p := join(d.path, rel)
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return nil, pathErr("open", p, ErrSymlink)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return &File{f: f}, nil
}

// Lstat reports on the entry name of d (one name) without following it.
func (d *Dir) Lstat(name string) (Info, error) {
	if !oneName(name) {
		return Info{}, pathErr("lstat", join(d.path, name), errBadName)
	}
	fi, err := os.Lstat(join(d.path, name))
	if err != nil {
		return Info{}, err
	}
	mode := fi.Mode()
	if mode&fs.ModeIrregular != 0 {
		// A reparse point that is not a symlink (a junction, say): it
		// redirects like one.
		mode = mode&^(fs.ModeIrregular|fs.ModeDir) | fs.ModeSymlink
	}
	return Info{Mode: mode, Size: fi.Size()}, nil
}

// Readlink returns the target of the symlink name in d (one name).
func (d *Dir) Readlink(name string) (string, error) {
	if !oneName(name) {
		return "", pathErr("readlink", join(d.path, name), errBadName)
	}
	return os.Readlink(join(d.path, name))
}

// List calls fn for every entry of d, with its type from the listing.
func (d *Dir) List(fn func(name string, typ fs.FileMode)) error {
	f, err := os.Open(d.path)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		entries, err := f.ReadDir(1024)
		for _, e := range entries {
			fn(e.Name(), e.Type())
		}
		if errors.Is(err, io.EOF) || (err == nil && len(entries) == 0) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// File is a file opened by Dir.OpenFile.
type File struct{ f *os.File }

// Read reads from the file; it returns io.EOF at the end.
func (f *File) Read(p []byte) (int, error) { return f.f.Read(p) }

// Stat reports on the open file.
func (f *File) Stat() (Info, error) {
	fi, err := f.f.Stat()
	if err != nil {
		return Info{}, err
	}
	return Info{Mode: fi.Mode(), Size: fi.Size()}, nil
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Name is the path the file was opened by.
func (f *File) Name() string { return f.f.Name() }
