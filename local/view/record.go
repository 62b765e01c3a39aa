package view

import (
	"encoding/binary"
	"errors"
	"time"
	"unsafe"

	"github.com/cgcat/cgcat/local"
)

// Records in a base are a compact binary encoding of local.Project, decoded
// on demand (a call decodes the few records it answers with, a few hundred
// nanoseconds each, where JSON took tens of microseconds). Strings are
// uvarint-length-prefixed bytes, numbers uvarints, times as JSON would
// give them back (see putTime). The root and the lineage come first: the
// sharing policy decides a record from them alone (rootLineage).
//
// A field added to local.Project must be added here too:
// TestRecordCodecCoversEveryField fills every field and fails otherwise.

var errRecord = errors.New("damaged record")

type recWriter struct{ b []byte }

func (w *recWriter) str(s string) {
	w.b = binary.AppendUvarint(w.b, uint64(len(s)))
	w.b = append(w.b, s...)
}

// strs writes a list; an empty one comes back nil, as from JSON (every
// list of a record is omitempty).
func (w *recWriter) strs(ss []string) {
	if len(ss) == 0 {
		w.b = append(w.b, 0)
		return
	}
	w.b = binary.AppendUvarint(w.b, uint64(len(ss))+1)
	for _, s := range ss {
		w.str(s)
	}
}

func (w *recWriter) u64(v uint64) { w.b = binary.AppendUvarint(w.b, v) }

func (w *recWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

// putTime writes t as it comes back from JSON: a UTC time (what the
// catalog writes) as seconds and nanoseconds, anything else as its
// RFC 3339 text, parsed again on reading as encoding/json would.
func (w *recWriter) time(t time.Time) {
	if t.Location() == time.UTC {
		w.b = append(w.b, 1)
		w.b = binary.AppendVarint(w.b, t.Unix())
		w.b = binary.AppendUvarint(w.b, uint64(t.Nanosecond()))
		return
	}
	w.b = append(w.b, 2)
	w.str(t.Format(time.RFC3339Nano))
}

func appendRecord(b []byte, p *local.Project) []byte {
	w := recWriter{b}
	w.str(p.ID)
	w.str(p.Root)
	w.strs(p.Lineage)
	w.u64(p.RecordRevision)
	m := &p.Meta
	w.str(m.Name)
	w.str(m.Description)
	w.strs(m.Packages)
	w.str(m.Version)
	w.strs(m.Keywords)
	w.strs(m.Aliases)
	w.strs(m.Tags)
	w.strs(m.Related)
	w.str(m.Readme)
	w.strs(m.Manifests)
	w.str(m.Git.Remote)
	w.str(m.Git.Branch)
	w.str(m.Git.Head)
	w.bool(m.Git.Worktree)
	w.str(m.Git.CommonDir)
	w.strs(m.Problems)
	w.u64(p.MetaHash)
	w.str(string(p.Availability))
	w.str(p.Why)
	w.str(string(p.IndexState))
	w.time(p.FirstSeen)
	w.time(p.LastSeen)
	w.time(p.ValidatedAt)
	w.u64(p.Changed)
	w.str(p.DBID)
	w.str(p.MovedTo)
	w.time(p.MissingSince)
	w.u64(p.MetaStamp)
	return w.b
}

type recReader struct {
	b    []byte
	err  bool
	copy bool // strings are copied (else they point into b)
}

func (r *recReader) u64() uint64 {
	if len(r.b) > 0 && r.b[0] < 0x80 { // one byte: most lengths and counts
		v := uint64(r.b[0])
		r.b = r.b[1:]
		return v
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recReader) str() string {
	n := r.u64()
	if n > uint64(len(r.b)) {
		r.err, r.b = true, nil
		return ""
	}
	s := r.b[:n]
	r.b = r.b[n:]
	if len(s) == 0 {
		return ""
	}
	if r.copy {
		return string(s)
	}
	return unsafe.String(&s[0], len(s))
}

func (r *recReader) skipStr() {
	n := r.u64()
	if n > uint64(len(r.b)) {
		r.err, r.b = true, nil
		return
	}
	r.b = r.b[n:]
}

func (r *recReader) skipStrs() {
	n := r.u64()
	for i := uint64(1); i < n && !r.err; i++ {
		r.skipStr()
	}
}

func (r *recReader) strs() []string {
	n := r.u64()
	if n == 0 {
		return nil
	}
	if n-1 > uint64(len(r.b)) { // each string takes a byte at least
		r.err, r.b = true, nil
		return nil
	}
	out := make([]string, n-1)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func (r *recReader) bool() bool { return r.u64() != 0 }

func (r *recReader) time() time.Time {
	if len(r.b) == 0 {
		r.err = true
		return time.Time{}
	}
	kind := r.b[0]
	r.b = r.b[1:]
	switch kind {
	case 1:
		sec, n := binary.Varint(r.b)
		if n <= 0 {
			r.err, r.b = true, nil
			return time.Time{}
		}
		r.b = r.b[n:]
		return time.Unix(sec, int64(r.u64())).UTC()
	case 2:
		var t time.Time
		if err := t.UnmarshalText([]byte(r.str())); err != nil {
			r.err = true
		}
		return t
	}
	r.err, r.b = true, nil
	return time.Time{}
}

// decodeRecord decodes a whole record (its strings copied).
func decodeRecord(b []byte) (*local.Project, error) { return decodeRecordAs(b, false) }

// decodeRecordAs decodes a record; lite leaves out its prose and lists no
// comparison of two records reads (description, README, keywords, tags,
// manifests, problems): most of its bytes.
func decodeRecordAs(b []byte, lite bool) (*local.Project, error) {
	r := recReader{b: b, copy: true}
	str, strs := r.str, r.strs
	if lite {
		str = func() string { r.skipStr(); return "" }
		strs = func() []string { r.skipStrs(); return nil }
	}
	p := &local.Project{}
	p.ID = r.str()
	p.Root = r.str()
	p.Lineage = r.strs()
	p.RecordRevision = r.u64()
	m := &p.Meta
	m.Name = r.str()
	m.Description = str()
	m.Packages = r.strs()
	m.Version = r.str()
	m.Keywords = strs()
	m.Aliases = r.strs()
	m.Tags = strs()
	m.Related = r.strs()
	m.Readme = str()
	m.Manifests = strs()
	m.Git.Remote = r.str()
	m.Git.Branch = r.str()
	m.Git.Head = r.str()
	m.Git.Worktree = r.bool()
	m.Git.CommonDir = r.str()
	m.Problems = strs()
	p.MetaHash = r.u64()
	p.Availability = local.Availability(r.str())
	p.Why = r.str()
	p.IndexState = local.IndexState(r.str())
	p.FirstSeen = r.time()
	p.LastSeen = r.time()
	p.ValidatedAt = r.time()
	p.Changed = r.u64()
	p.DBID = r.str()
	p.MovedTo = r.str()
	p.MissingSince = r.time()
	p.MetaStamp = r.u64()
	if r.err || len(r.b) != 0 {
		return nil, errRecord
	}
	return p, nil
}

// rootLineage reads a record's root and lineage without copying them:
// they must not outlive the call that asked (see Base.Decide).
func rootLineage(b []byte, lineage []string) (string, []string, bool) {
	r := recReader{b: b}
	r.str() // id
	root := r.str()
	n := r.u64()
	lineage = lineage[:0]
	for i := uint64(1); i < n && !r.err; i++ {
		lineage = append(lineage, r.str())
	}
	return root, lineage, !r.err
}

// checkRecord walks a record without keeping anything and reports its id
// (pointing into b) and whether it is whole: every field there, a root,
// nothing after — so that decodeRecord of it cannot fail. Numbers are
// skipped, not decoded (a base's open walks every record).
func checkRecord(b []byte) (string, bool) {
	r := recReader{b: b}
	id, root := r.str(), r.str()
	r.skipStrs()  // lineage
	r.skipNum()   // record revision
	r.skipStr()   // name
	r.skipStr()   // description
	r.skipStrs()  // packages
	r.skipStr()   // version
	for range 4 { // keywords, aliases, tags, related
		r.skipStrs()
	}
	r.skipStr()   // readme
	r.skipStrs()  // manifests
	for range 3 { // git remote, branch, head
		r.skipStr()
	}
	r.skipNum()   // worktree
	r.skipStr()   // common dir
	r.skipStrs()  // problems
	r.skipNum()   // meta hash
	for range 3 { // availability, why, index state
		r.skipStr()
	}
	r.skipTime() // first seen
	r.skipTime() // last seen
	r.skipTime() // validated at
	r.skipNum()  // changed
	r.skipStr()  // database id
	r.skipStr()  // moved to
	r.skipTime() // missing since
	r.skipNum()  // meta stamp
	return id, !r.err && len(r.b) == 0 && id != "" && root != ""
}

// skipNum skips a varint as binary.Uvarint would read it (at most ten
// bytes, the tenth at most 1).
func (r *recReader) skipNum() {
	for i := 0; i < len(r.b) && i < binary.MaxVarintLen64; i++ {
		if c := r.b[i]; c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break
			}
			r.b = r.b[i+1:]
			return
		}
	}
	r.err, r.b = true, nil
}

func (r *recReader) skipTime() {
	if len(r.b) == 0 {
		r.err = true
		return
	}
	kind := r.b[0]
	r.b = r.b[1:]
	switch kind {
	case 1:
		r.skipNum() // seconds (zig-zag: the same bytes)
		r.skipNum() // nanoseconds
	case 2:
		var t time.Time
		if t.UnmarshalText([]byte(r.str())) != nil {
			r.err = true
		}
	default:
		r.err, r.b = true, nil
	}
}
