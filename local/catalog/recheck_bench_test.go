package catalog

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/fixture"
)

// BenchmarkRecheck50Cold: the answer-time re-check of the 50 roots an
// answer with limit 50 hands out, none of them in the re-check cache (a
// serve's first answers, or roots not asked for in two seconds).
//
//	go test ./local/catalog -run '^$' -bench Recheck50Cold
func BenchmarkRecheck50Cold(b *testing.B) {
	top := fixture.Canon(b, b.TempDir())
	pol := Policy{Discovery: []string{top}, Share: []string{top}}
	var ps []*local.Project
	for i := range 50 {
		r := filepath.Join(top, fmt.Sprintf("group%d", i%5), "team", fmt.Sprintf("proj%d", i))
		fixture.Project(b, r)
		ps = append(ps, &local.Project{ID: fmt.Sprint(i), Root: r})
	}
	for b.Loop() {
		recheckCache.Lock()
		recheckCache.m = nil
		recheckCache.Unlock()
		for _, p := range ps {
			if ck := Recheck(p, pol); !ck.OK {
				b.Fatalf("%s: %+v", p.Root, ck)
			}
		}
	}
}
