//go:build linux

package lifecycle

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// opDamageView damages a published file under the running readers (issue
// 23 item 2): the base every serve maps, a delta of the chain after it, or
// the pointer — cut to nothing, to half, or one byte short. Nothing in the
// model changes: every reader keeps answering what the model says (the
// checks after the step), and the next writer publishes the catalog whole
// again (doctor after the next settle finds it verified).
func (r *run) opDamageView() {
	views := filepath.Join(r.w.data, "views")
	ents, _ := os.ReadDir(views)
	var bases, deltas []string
	for _, e := range ents {
		switch n := e.Name(); {
		case strings.HasPrefix(n, "base-"):
			bases = append(bases, filepath.Join(views, n))
		case strings.HasPrefix(n, "delta-"):
			deltas = append(deltas, filepath.Join(views, n))
		}
	}
	slices.Sort(bases)
	var cands []string
	if len(bases) > 0 {
		cands = append(cands, bases[len(bases)-1])
	}
	if len(deltas) > 0 {
		cands = append(cands, deltas[r.rng.IntN(len(deltas))])
	}
	cands = append(cands, filepath.Join(r.w.data, "revision"))
	target := cands[r.rng.IntN(len(cands))]
	fi, err := os.Stat(target)
	if err != nil {
		r.log("damage view: %s is gone already", filepath.Base(target))
		return
	}
	size := [...]int64{0, fi.Size() / 2, max(fi.Size()-1, 0)}[r.rng.IntN(3)]
	if err := os.Truncate(target, size); err != nil {
		r.t.Fatal(err)
	}
	r.log("damage view: %s cut from %d to %d bytes under the readers", filepath.Base(target), fi.Size(), size)
}
