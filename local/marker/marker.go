// Package marker decides what a project is: a directory whose own
// .codegraph/ is a real directory holding a regular codegraph.db of at
// least 100 bytes that starts like an SQLite file (CodeGraph 1.6.1 adopts
// nothing looser). It looks through directories opened with no symlink in
// their path, never opens the database as a database (that would leave
// files behind in the project), and never claims the home directory or the
// file-system root. Discovery (package scan) and the live re-check before a
// path is handed out (package catalog) both ask it.
package marker

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"syscall"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/cgcat/cgcat/local/pathid"
)

// Dir and File name CodeGraph's index. CodeGraph 1.6.1 adopts a
// directory only when its own .codegraph/ holds codegraph.db; anything looser
// would hand out roots that CodeGraph silently replaces by a parent index.
const (
	Dir  = ".codegraph"
	File = "codegraph.db"
	// minDBSize: an SQLite file is at least one 100-byte header.
	minDBSize = 100
)

var sqliteMagic = []byte("SQLite format 3\x00")

// Verdict is what a direct look at one directory says.
type Verdict struct {
	Project      bool
	Availability local.Availability
	IndexState   local.IndexState
	Why          string    // when not a present project
	DB           pathid.ID // identity of codegraph.db, when it was opened
	// Rejected: a codegraph.db is there but is no index by the rule (not a
	// regular file, under 100 bytes, not SQLite); Why says which. Scan,
	// doctor and config check name such files instead of skipping them in
	// silence.
	Rejected bool
}

// Probe applies the project rule (R8) to dir: its own .codegraph/ is a real
// directory holding a regular file codegraph.db of at least 100 bytes whose
// first bytes, when readable, are the SQLite magic. The home directory and
// the file-system root are never projects. The database is never opened as
// a database: reading 16 bytes leaves nothing behind, an SQLite open would.
//
// dir is opened with no symlink in any component of its path (a root
// swapped for a symlink is missing, not followed), and the marker is looked
// up relative to that directory, never by path again.
func Probe(dir string) Verdict {
	if v, never := neverProject(dir); never {
		return v
	}
	d, err := nofollow.LookupDir(dir)
	if err != nil {
		return rootErr(err)
	}
	defer d.Close()
	return probeMarker(d)
}

// RootCheck is what ProbeRoot saw.
type RootCheck struct {
	Verdict
	ID pathid.ID // the root directory's identity; zero if it could not be opened
	// Ancestors are the identities of the root's parent, its parent, and so
	// on up to and including the top given to ProbeRoot, read on the way
	// down to the root, so they are the ancestors of the directory probed.
	Ancestors []pathid.ID
	// RootTimes and DBInfo are what the root directory and its database
	// looked like when checked, read from the descriptors the check used
	// (a caller may remember a verdict by them). Zero where the platform
	// does not read them (Mtime == 0) or the root is not a project.
	RootTimes nofollow.Times
	DBInfo    nofollow.Info
}

// ProbeRoot is Probe for the answer-time re-check of a record's root: the
// same rule and no-symlink open, plus the identities of the root and of its
// ancestors up to top (a discovery root holding root, by exact spelling;
// "" means the file-system root), so that deny roots can be matched by
// identity (a bind mount or other alias of a deny root among them). One walk
// down from top: on Linux an openat2 of top, then one openat and one fstat
// per name below it, then the marker.
func ProbeRoot(root, top string) RootCheck {
	if v, never := neverProject(root); never {
		return RootCheck{Verdict: v}
	}
	d, anc, err := nofollow.LookupChain(root, top)
	if err != nil {
		return RootCheck{Verdict: rootErr(err)}
	}
	defer d.Close()
	return probeOpenRoot(d, anc)
}

// ProbeRootAlone is ProbeRoot without the ancestors' identities, for a
// caller with no deny root to match them against: the whole path is opened
// in one call with no symlink in any component (openat2 on Linux), instead
// of one directory at a time.
func ProbeRootAlone(root string) RootCheck {
	if v, never := neverProject(root); never {
		return RootCheck{Verdict: v}
	}
	d, err := nofollow.LookupDir(root)
	if err != nil {
		return RootCheck{Verdict: rootErr(err)}
	}
	defer d.Close()
	return probeOpenRoot(d, nil)
}

// probeOpenRoot finishes a root check on the opened root d.
func probeOpenRoot(d *nofollow.Dir, anc []pathid.ID) RootCheck {
	times, terr := d.Times() // the identity too, in the same fstat
	id, err := d.ID()
	if err != nil {
		return RootCheck{Verdict: fromErr(err, "project root")}
	}
	v, db := probeMarkerInfo(d)
	rc := RootCheck{Verdict: v, ID: id, Ancestors: anc}
	if terr == nil && v.Project {
		rc.RootTimes, rc.DBInfo = times, db
	}
	return rc
}

func neverProject(dir string) (Verdict, bool) {
	if pathid.IsFSRoot(dir) || pathid.IsHome(dir) {
		return Verdict{Availability: local.Present, IndexState: local.MarkerMissing, Why: "the home directory and the file-system root are never projects"}, true
	}
	return Verdict{}, false
}

// rootErr is the verdict for a root that could not be opened.
func rootErr(err error) Verdict {
	if nofollow.IsSymlink(err) {
		return Verdict{Availability: local.Missing, IndexState: local.MarkerUnknown, Why: "a symlink now stands in the root's path; it is not followed"}
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return Verdict{Availability: local.Missing, IndexState: local.MarkerUnknown, Why: "the root is no longer a directory"}
	}
	return fromErr(err, "project root")
}

// ProbeDir applies the project rule to an opened directory: the marker is
// opened relative to d, with no symlink in .codegraph/codegraph.db (in one
// openat2 call on Linux).
func ProbeDir(d *nofollow.Dir) Verdict {
	if v, never := neverProject(d.Path()); never {
		return v
	}
	return probeMarker(d)
}

func probeMarker(d *nofollow.Dir) Verdict {
	v, _ := probeMarkerInfo(d)
	return v
}

// probeMarkerInfo is probeMarker and what the database's descriptor said.
func probeMarkerInfo(d *nofollow.Dir) (Verdict, nofollow.Info) {
	const rel = Dir + "/" + File
	f, err := d.OpenFile(rel)
	if err != nil {
		return markerErr(d, err), nofollow.Info{}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fromErr(err, rel), nofollow.Info{}
	}
	switch {
	case !st.IsRegular():
		return Verdict{Availability: local.Present, IndexState: local.MarkerMissing, Why: rel + " is not a regular file", Rejected: true}, st
	case st.Size < minDBSize:
		return Verdict{Availability: local.Present, IndexState: local.MarkerMissing, Why: fmt.Sprintf("%s is too small to be an index (%d bytes; an SQLite file has at least %d)", rel, st.Size, minDBSize), Rejected: true}, st
	}
	head := make([]byte, len(sqliteMagic))
	if _, err := io.ReadFull(f, head); err == nil && !bytes.Equal(head, sqliteMagic) {
		return Verdict{Availability: local.Present, IndexState: local.MarkerMissing, Why: rel + " is not an SQLite file (its first bytes are not the SQLite header)", Rejected: true}, st
	}
	return Verdict{Project: true, Availability: local.Present, IndexState: local.MarkerPresent, DB: st.ID}, st
}

// markerErr says why .codegraph/codegraph.db could not be opened: one more
// look (an fstatat relative to d) tells a missing or odd .codegraph from a
// missing or odd database. Only failures pay for it.
func markerErr(d *nofollow.Dir, err error) Verdict {
	cg, cerr := d.Lstat(Dir)
	switch {
	case cerr != nil:
		v := fromErr(cerr, Dir)
		if v.Availability == local.Missing {
			v.Availability = local.Present // the root is there, its marker is not
		}
		return v
	case !cg.IsDir():
		return Verdict{Availability: local.Present, IndexState: local.MarkerMissing, Why: Dir + " is not a directory"}
	}
	const rel = Dir + "/" + File
	if nofollow.IsSymlink(err) {
		return Verdict{Availability: local.Present, IndexState: local.MarkerMissing, Why: rel + " is not a regular file", Rejected: true}
	}
	v := fromErr(err, rel)
	if v.Availability == local.Missing {
		v.Availability = local.Present
	}
	return v
}

func fromErr(err error, what string) Verdict {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Verdict{Availability: local.Missing, IndexState: local.MarkerMissing, Why: what + " is gone"}
	case errors.Is(err, fs.ErrPermission):
		return Verdict{Availability: local.Inaccessible, IndexState: local.MarkerUnknown, Why: what + ": permission denied"}
	default:
		return Verdict{Availability: local.Inaccessible, IndexState: local.MarkerUnknown, Why: what + " could not be read (" + ErrText(err) + ")"}
	}
}

func ErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
