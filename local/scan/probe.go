package scan

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
)

// MarkerDir and MarkerFile name CodeGraph's index. CodeGraph 1.6.1 adopts a
// directory only when its own .codegraph/ holds codegraph.db; anything looser
// would hand out roots that CodeGraph silently replaces by a parent index.
const (
	MarkerDir  = ".codegraph"
	MarkerFile = "codegraph.db"
	// minDBSize: an SQLite file is at least one 100-byte header.
	minDBSize = 100
)

var sqliteMagic = []byte("SQLite format 3\x00")

// Verdict is what a direct look at one directory says.
type Verdict struct {
	Project      bool
	Availability local.Availability
	IndexState   local.IndexState
	Why          string // when not a present project
}

// Probe applies the project rule (R8) to dir: its own .codegraph/ is a real
// directory holding a regular file codegraph.db of at least 100 bytes whose
// first bytes, when readable, are the SQLite magic. The home directory and
// the file-system root are never projects. The database is never opened as
// a database: reading 16 bytes leaves nothing behind, an SQLite open would.
func Probe(dir string) Verdict {
	if pathid.IsFSRoot(dir) || pathid.IsHome(dir) {
		return Verdict{Availability: local.Present, IndexState: local.MarkerMissing, Why: "the home directory and the file-system root are never projects"}
	}
	if _, err := os.Lstat(dir); err != nil {
		return fromErr(err, "project root")
	}
	cg, err := os.Lstat(filepath.Join(dir, MarkerDir))
	if err != nil {
		v := fromErr(err, MarkerDir)
		if v.Availability == local.Missing {
			v.Availability = local.Present // the root is there, its marker is not
			v.IndexState = local.MarkerMissing
		}
		return v
	}
	if !cg.IsDir() {
		return Verdict{Availability: local.Present, IndexState: local.MarkerMissing, Why: MarkerDir + " is not a directory"}
	}
	return probeDB(filepath.Join(dir, MarkerDir, MarkerFile))
}

func probeDB(db string) Verdict {
	st, err := os.Lstat(db)
	if err != nil {
		v := fromErr(err, MarkerDir+"/"+MarkerFile)
		if v.Availability == local.Missing {
			v.Availability, v.IndexState = local.Present, local.MarkerMissing
		}
		return v
	}
	if !st.Mode().IsRegular() {
		return Verdict{Availability: local.Present, IndexState: local.MarkerMissing, Why: MarkerDir + "/" + MarkerFile + " is not a regular file"}
	}
	if st.Size() < minDBSize {
		return Verdict{Availability: local.Present, IndexState: local.MarkerMissing, Why: MarkerDir + "/" + MarkerFile + " is too small to be an index"}
	}
	if f, err := os.Open(db); err == nil {
		head := make([]byte, len(sqliteMagic))
		_, rerr := io.ReadFull(f, head)
		f.Close()
		if rerr == nil && !bytes.Equal(head, sqliteMagic) {
			return Verdict{Availability: local.Present, IndexState: local.MarkerMissing, Why: MarkerDir + "/" + MarkerFile + " is not an SQLite file"}
		}
	}
	return Verdict{Project: true, Availability: local.Present, IndexState: local.MarkerPresent}
}

func fromErr(err error, what string) Verdict {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Verdict{Availability: local.Missing, IndexState: local.MarkerMissing, Why: what + " is gone"}
	case errors.Is(err, fs.ErrPermission):
		return Verdict{Availability: local.Inaccessible, IndexState: local.MarkerUnknown, Why: what + ": permission denied"}
	default:
		return Verdict{Availability: local.Inaccessible, IndexState: local.MarkerUnknown, Why: what + " could not be read (" + errText(err) + ")"}
	}
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
