//go:build linux

package lifecycle

// The model: plain maps of what the test did to the world, and what it has
// learnt from answers (which id is bound to which root). It states exactly
// what is known and nothing more:
//
//   - Always (every answer, every step): a path handed out is under a
//     discovery and a sharing root, under no deny root (also by directory
//     identity), canonical, with its marker (a); a root has one id and an id
//     one root, for as long as the record is not forgotten (c, d); a hidden
//     record is not listed at all, and a word of a project appears in no
//     answer until the project, or a place where it had that word (a record
//     left behind by a move keeps it), was visible; a forgotten id never
//     comes back; an answer given while no process held or opened the scan
//     lease does not say "running" (e); gbrainState is the fake's switch
//     (f); catalogRevision never goes back in one serve's answers; a cursor
//     from another process or from before the view changed is expired.
//   - resolve is exact at every step: it re-checks the root live (R19).
//   - coverage "complete" claimed at any time: every project that stood
//     unchanged, visible and within the limits since before the walk
//     settings in force were first used is listed (b).
//   - After a settle (two full `cgcat scan` passes, so one began after the
//     last change): every present, visible project within the limits is
//     listed with its path and its manifest's name and description; every
//     visible record whose root lost its marker is listed as missing; a
//     moved project's old id resolves missing with movedTo leading to the
//     new id; coverage is partial exactly when maxDepth cut a shared,
//     undenied directory; a record whose manifest changed since the last
//     settle has a greater recordRevision and answers record_changed to the
//     old one; GBrain (enabled, up) holds no live card of a hidden or
//     forgotten record within a bound.

import (
	"path/filepath"
	"sort"
)

// proj is one project the test made.
type proj struct {
	key         int
	path        string // where it is now (absolute, canonical)
	gone        bool   // deleted
	indexed     bool   // its marker is there
	name        string // package.json name
	desc        string // package.json description
	words       []string
	stableSince int  // step since which path, marker and record stand unchanged (-1: before any process)
	arrivedAt   int  // step it arrived at path
	badHint     bool // its codegraph/project.json does not parse (R6)
	everVisible bool
	// held: every place the project stood at → the words it had there. A
	// record left at a place it moved away from keeps the metadata it had
	// there (R13: records are never deleted automatically), so once such a
	// place is visible (a deny root removed, a sharing root added) those
	// words may be shown, with the old record (exposed).
	held    map[string][]string
	exposed map[string]bool
	// reached: since it got to path, a walk within the limits of the
	// config then in force could reach it (else listing it breaks R9).
	reached bool
}

func (p *proj) word() string { return p.words[len(p.words)-1] }

// hold notes that the project stands at its path with its current word.
func (p *proj) hold() {
	if p.held == nil {
		p.held = map[string][]string{}
	}
	p.held[p.path] = append(p.held[p.path], p.word())
}

// mayShow: w, a word of p, may appear in an answer: the project was visible
// once, or a place where it had w was.
func (p *proj) mayShow(w string) bool { return p.everVisible || p.exposed[w] }

// binding is a root → id binding learnt from an answer.
type binding struct {
	root     string
	id       string
	proj     int // key of the project at root when learnt (-1: none)
	created  int // step learnt
	markerID fileID
	seen     bool // markerID was recorded at a settle while proj sat at root
	// What resolve said of the record at the last settle where it was
	// present: its recordRevision and stable metadata (R14, R21).
	rev       uint64
	revName   string
	revDesc   string
	revSettle int
}

type model struct {
	projects  map[int]*proj
	nextKey   int
	byRoot    map[string]*binding
	byID      map[string]*binding
	idRoot    map[string]string // every id ever seen with a path → that path
	forgotten map[string]string // id → how it was removed ("forget", "prune")
	uncertain map[string]bool   // ids that may or may not exist any more (prune of a record not re-checked)
	usedWords map[string]bool
}

func newModel() model {
	return model{
		projects:  map[int]*proj{},
		byRoot:    map[string]*binding{},
		byID:      map[string]*binding{},
		idRoot:    map[string]string{},
		forgotten: map[string]string{},
		uncertain: map[string]bool{},
		usedWords: map[string]bool{},
	}
}

// live returns the projects that exist, sorted by key.
func (m *model) live() []*proj {
	var out []*proj
	for _, p := range m.projects {
		if !p.gone {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// at returns the live project whose directory is path.
func (m *model) at(path string) *proj {
	for _, p := range m.projects {
		if !p.gone && p.path == path {
			return p
		}
	}
	return nil
}

// under returns the live projects at or below dir.
func (m *model) under(dir string) []*proj {
	var out []*proj
	for _, p := range m.live() {
		if within(dir, p.path) {
			out = append(out, p)
		}
	}
	return out
}

// bindings returns the bindings believed to exist, sorted by root.
func (m *model) bindings() []*binding {
	var out []*binding
	for _, b := range m.byRoot {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].root < out[j].root })
	return out
}

// moved applies a rename of dir to newDir to every project below it.
func (m *model) moved(dir, newDir string, step int) {
	for _, p := range m.under(dir) {
		rel, _ := filepath.Rel(dir, p.path)
		p.path = filepath.Join(newDir, rel)
		p.stableSince, p.arrivedAt, p.reached = step, step, false
		p.hold()
	}
}
