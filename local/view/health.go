package view

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/search"
)

// The published files heal: a reader that finds one it cannot use answers
// from something else (Follower) and leaves a damage report in the views
// directory; the next writer, before it publishes, checks the chain it
// continues (NeedsBase: one stat per file, and that report) and publishes a
// whole base when anything is amiss. Verify checks everything end to end,
// for `cgcat doctor`.

const damageFile = "damaged"

// ReportDamage notes, for the next writer, that the files ptr publishes
// could not be used and why. Best effort: a reader of a read-only data dir
// cannot leave it, and a writer's own checks still see most damage.
func ReportDamage(dataDir string, ptr Pointer, why error) {
	msg := fmt.Sprintf("%d %d %s\n", ptr.Base, ptr.Head, local.Printable(why.Error()))
	if len(msg) > maxPointerFile {
		msg = msg[:maxPointerFile-1] + "\n"
	}
	_ = os.MkdirAll(Dir(dataDir), 0o755)
	_ = writeFile(Dir(dataDir), damageFile, []byte(msg))
}

// damageReport is the report left for ptr's chain, if any: a report about
// an older base than ptr's was answered by ptr's base.
func damageReport(dataDir string, ptr Pointer) (string, bool) {
	b, err := readBounded(filepath.Join(Dir(dataDir), damageFile), maxPointerFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", false
		}
		return "the damage report is unreadable", true
	}
	f := strings.SplitN(strings.TrimSpace(string(b)), " ", 3)
	if base, err := strconv.ParseUint(f[0], 10, 64); err == nil && base < ptr.Base {
		return "", false
	}
	if len(f) == 3 {
		return f[2], true
	}
	return "a reader reported damage", true
}

// clearDamage removes the report once a whole base answers it. (A reader
// that read the old pointer may still report after this: the next writer
// then publishes one base more than needed.)
func clearDamage(dataDir string) {
	_ = os.Remove(filepath.Join(Dir(dataDir), damageFile))
}

// NeedsBase reports why a writer should publish a whole base rather than
// continue ptr's chain ("" when it need not): a reader reported damage, a
// file of the chain is missing, not a regular file or not of the size it
// was published with, or its index was built by another tokenizer. It
// stats each file of the chain once; checksums are the readers' part.
func NeedsBase(dataDir string, ptr Pointer) string {
	if ptr.Index != search.Derivation() {
		return "the published search index was built by another version of cgcat"
	}
	if why, ok := damageReport(dataDir, ptr); ok {
		return "a reader found the published catalog damaged: " + why
	}
	dir := Dir(dataDir)
	if why := sizeIs(filepath.Join(dir, baseName(ptr.Base)), ptr.BaseBytes); why != "" {
		return why
	}
	var deltas int64
	for seq := ptr.Base + 1; seq <= ptr.Head; seq++ {
		fi, err := os.Lstat(filepath.Join(dir, deltaName(seq)))
		if err != nil || !fi.Mode().IsRegular() {
			return fmt.Sprintf("%s is missing or not a regular file", deltaName(seq))
		}
		deltas += fi.Size()
	}
	if deltas != ptr.DeltaBytes {
		return fmt.Sprintf("the published changes after %s are %d bytes, %d were written", baseName(ptr.Base), deltas, ptr.DeltaBytes)
	}
	return ""
}

func sizeIs(path string, want int64) string {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return fmt.Sprintf("%s is missing", filepath.Base(path))
	case !fi.Mode().IsRegular():
		return fmt.Sprintf("%s is not a regular file", filepath.Base(path))
	case fi.Size() != want:
		return fmt.Sprintf("%s is %d bytes, %d were written", filepath.Base(path), fi.Size(), want)
	}
	return ""
}

// BuildBase makes s (its Records) a base in memory, as a reader holds a
// published one: what a reader answers from when it reads the store
// itself. With from (a base of the same store the reader holds), the index
// is built over it: only records that changed are tokenised again.
func BuildBase(s *Snapshot, from *Base) (*Snapshot, error) {
	var buf alignedBuffer
	err := writeBaseGuarded(&buf, s, from)
	if errors.Is(err, errFault) {
		buf = alignedBuffer{}
		err = writeBase(&buf, s, nil)
	}
	if err != nil {
		return nil, err
	}
	out, _, err := parseBase(buf.bytes(), nil)
	if err != nil {
		return nil, fmt.Errorf("build catalog in memory: %w", err)
	}
	return out, nil
}

// Report is what Verify found.
type Report struct {
	Pointer Pointer
	// Records is the number of records the chain gives (base, deltas).
	Records int
	// Deltas is the number of deltas after the base.
	Deltas int
	// Problems name each damaged or unusable file and what is wrong.
	Problems []string
	// Outdated: the catalog was published by a newer cgcat.
	Outdated bool
	// Unpublished: there is no pointer (or one of an older format).
	Unpublished bool
}

// Verify reads everything the pointer publishes, end to end: the pointer,
// the base (checksum, every bound, every record), every delta after it,
// and a damage report left by a reader.
func Verify(dataDir string) Report {
	var r Report
	ptr, err := readPointer(dataDir)
	if err != nil {
		r.Outdated = errors.Is(err, ErrOutdated)
		r.Unpublished = errors.Is(err, ErrNoView)
		r.Problems = append(r.Problems, err.Error())
		return r
	}
	r.Pointer = ptr
	if why, ok := damageReport(dataDir, ptr); ok {
		r.Problems = append(r.Problems, "a reader reported: "+why)
	}
	s, err := ReadBase(dataDir, ptr.Base)
	switch {
	case err != nil:
		r.Problems = append(r.Problems, err.Error())
	case s.StoreID != ptr.StoreID:
		r.Problems = append(r.Problems, fmt.Sprintf("%s holds another store (%s, the pointer says %s)", baseName(ptr.Base), s.StoreID, ptr.StoreID))
	default:
		ids := map[string]bool{}
		for i := range s.Base.Len() {
			p := s.Base.Record(uint32(i))
			if p == nil {
				r.Problems = append(r.Problems, fmt.Sprintf("%s: record %d is unreadable", baseName(ptr.Base), i))
				break
			}
			ids[p.ID] = true
		}
		if s.Reindexed {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: its search index was built by another version of cgcat", baseName(ptr.Base)))
		}
		for seq := ptr.Base + 1; seq <= ptr.Head; seq++ {
			d, err := ReadDelta(dataDir, seq)
			if err == nil && d.StoreID != ptr.StoreID {
				err = fmt.Errorf("%s: %w (of another store)", deltaName(seq), ErrDamaged)
			}
			if err != nil {
				r.Problems = append(r.Problems, err.Error())
				continue
			}
			r.Deltas++
			for _, p := range d.Records {
				ids[p.ID] = true
			}
			for _, id := range d.Deleted {
				delete(ids, id)
			}
		}
		r.Records = len(ids)
	}
	if why := NeedsBase(dataDir, ptr); why != "" && len(r.Problems) == 0 {
		r.Problems = append(r.Problems, why)
	}
	return r
}
