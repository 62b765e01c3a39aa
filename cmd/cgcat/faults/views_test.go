//go:build linux

package faults

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/zeebo/xxh3"
)

// Issue 23 item 2: published files (views) damaged after they were written.
// Readers answer every record all the same (from the previous base, or the
// store itself — read without its lock, here held by another opener), doctor
// names the damage, and the next writer (`cgcat scan`) publishes a whole
// base again.

type viewsFixture struct {
	base, cfg, data string
	env             []string
	ids             []string
}

func newViewsFixture(t *testing.T, n int) *viewsFixture {
	t.Helper()
	f := &viewsFixture{base: canonTemp(t)}
	code := filepath.Join(f.base, "code")
	genProjects(t, code, 1, n)
	f.data = filepath.Join(f.base, "data")
	f.cfg = writeConfig(t, filepath.Join(f.base, "cfg.json"), cfgOpts{data: f.data, roots: []string{code}})
	f.env = env(f.base, "CGCAT_CONFIG="+f.cfg)
	if r := run(f.env, 2*time.Minute, "", "scan"); r.code != 0 {
		t.Fatalf("scan: %s", r)
	}
	// A base that holds every record (a store without a pointer publishes
	// one when a process opens it), then deltas after it.
	if err := os.Remove(filepath.Join(f.data, "revision")); err != nil {
		t.Fatal(err)
	}
	if r := run(f.env, time.Minute, "", "projects"); r.code != 0 {
		t.Fatalf("projects: %s", r)
	}
	for range 2 {
		if r := run(f.env, 2*time.Minute, "", "scan"); r.code != 0 {
			t.Fatalf("scan: %s", r)
		}
	}
	f.ids = f.listIDs(t)
	if len(f.ids) != n {
		t.Fatalf("fixture: %d projects listed, want %d", len(f.ids), n)
	}
	return f
}

// listIDs is what `cgcat projects --all --json` lists.
func (f *viewsFixture) listIDs(t *testing.T) []string {
	t.Helper()
	r := run(f.env, time.Minute, "", "projects", "--all", "--json")
	if r.code != 0 || r.panicked() {
		t.Fatalf("projects: %s", r)
	}
	var e struct {
		Projects []struct {
			ProjectID string `json:"projectId"`
		} `json:"projects"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &e); err != nil {
		t.Fatalf("projects --json: %v\n%s", err, r)
	}
	var ids []string
	for _, p := range e.Projects {
		ids = append(ids, p.ProjectID)
	}
	sort.Strings(ids)
	return ids
}

func (f *viewsFixture) views() string { return filepath.Join(f.data, "views") }

func (f *viewsFixture) newest(t *testing.T, prefix string) string {
	t.Helper()
	ents, _ := os.ReadDir(f.views())
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatalf("fixture: no %s* published", prefix)
	}
	sort.Strings(names)
	return filepath.Join(f.views(), names[len(names)-1])
}

// holdStore opens the store as another process would and keeps it: no
// cgcat process can then write (nor republish) until release.
func (f *viewsFixture) holdStore(t *testing.T) (release func()) {
	t.Helper()
	db, err := leveldb.OpenFile(filepath.Join(f.data, "catalog.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return func() { db.Close() }
}

func sameIDs(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}

func TestDamagedViewsAnswerAndHeal(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	cases := map[string]func(t *testing.T, f *viewsFixture){
		"newest delta emptied": func(t *testing.T, f *viewsFixture) {
			if err := os.Truncate(f.newest(t, "delta-"), 0); err != nil {
				t.Fatal(err)
			}
		},
		"base deleted": func(t *testing.T, f *viewsFixture) {
			if err := os.Remove(f.newest(t, "base-")); err != nil {
				t.Fatal(err)
			}
		},
		"base garbled in place": func(t *testing.T, f *viewsFixture) {
			p := f.newest(t, "base-")
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0x40
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"base a FIFO": func(t *testing.T, f *viewsFixture) {
			p := f.newest(t, "base-")
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"pointer a FIFO": func(t *testing.T, f *viewsFixture) {
			p := filepath.Join(f.data, "revision")
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"pointer a symlink to /dev/zero": func(t *testing.T, f *viewsFixture) {
			p := filepath.Join(f.data, "revision")
			os.Remove(p)
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		},
		"a delta of a null record": func(t *testing.T, f *viewsFixture) {
			// The newest delta, rewritten with a valid checksum.
			p := f.newest(t, "delta-")
			b, _ := os.ReadFile(p)
			var d map[string]any
			if err := json.Unmarshal(b[8:len(b)-8], &d); err != nil {
				t.Fatalf("fixture: %v", err)
			}
			d["records"] = []any{nil}
			body, _ := json.Marshal(d)
			out := append(append([]byte{}, b[:8]...), body...)
			out = binary.BigEndian.AppendUint64(out, xxh3.Hash(out))
			if err := os.WriteFile(p, out, 0o644); err != nil {
				t.Fatal(err)
			}
			p = filepath.Join(f.data, "revision")
			ptr, _ := os.ReadFile(p)
			fields := strings.Fields(string(ptr))
			fields[6] = "0" // the delta bytes: as if this one were the written one
			os.WriteFile(p, []byte(strings.Join(fields, " ")+"\n"), 0o644)
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			f := newViewsFixture(t, 20)
			damage(t, f)
			// Readers while no process can republish (the store held).
			release := f.holdStore(t)
			if got := f.listIDs(t); !sameIDs(got, f.ids) {
				t.Fatalf("a reader lists %d projects, want %d", len(got), len(f.ids))
			}
			doc := run(f.env, 2*time.Minute, "", "doctor")
			if doc.panicked() || doc.timedOut || !strings.Contains(doc.stdout, "published catalog is damaged") {
				t.Fatalf("doctor does not name the damage:\n%s", doc)
			}
			release()
			// The next writer publishes a whole base again.
			if r := run(f.env, 2*time.Minute, "", "scan"); r.code != 0 || r.panicked() {
				t.Fatalf("scan: %s", r)
			}
			doc = run(f.env, 2*time.Minute, "", "doctor")
			if !strings.Contains(doc.stdout, "published catalog verified end to end: 20 records") {
				t.Fatalf("after scan, doctor:\n%s", doc)
			}
			if got := f.listIDs(t); !sameIDs(got, f.ids) {
				t.Fatalf("after scan: %d projects, want %d", len(got), len(f.ids))
			}
			for _, args := range [][]string{{"store", "recover"}, {"resolve", f.ids[0]}} {
				if r := run(f.env, 2*time.Minute, "", args...); r.code != 0 || r.panicked() {
					t.Fatalf("%s", r)
				}
			}
		})
	}
}

// Issue 23 item 3: the base truncated, or overwritten in place (cp, rsync
// --inplace restoring another data dir's copy), under two running serves
// that map it. Before, the next call died of SIGBUS in both processes (and
// an overwrite silently served the other copy's records). Now both keep
// answering every project.
func TestBaseChangedUnderServes(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, how := range []string{"truncated", "overwritten in place"} {
		t.Run(how, func(t *testing.T) {
			f := newViewsFixture(t, 20)
			var other string
			if how == "overwritten in place" {
				o := newViewsFixture(t, 15) // another data dir's base, as a backup would be
				other = o.newest(t, "base-")
			}
			var serves []*serveProc
			for range 2 {
				p, err := startServe(t, f.env, time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				got, _, err := p.listAll(time.Minute)
				if err != nil || len(got) != 20 {
					t.Fatalf("before: %d projects, %v", len(got), err)
				}
				serves = append(serves, p)
			}
			base := f.newest(t, "base-")
			if how == "truncated" {
				if err := os.Truncate(base, 0); err != nil {
					t.Fatal(err)
				}
			} else {
				b, _ := os.ReadFile(other)
				if err := os.WriteFile(base, b, 0o644); err != nil { // O_TRUNC then write: what cp does
					t.Fatal(err)
				}
			}
			for i, p := range serves {
				got, raw, err := p.listAll(time.Minute)
				if err != nil || len(got) != 20 {
					t.Fatalf("serve %d after the base was %s: %d projects, %v\n%s\nstderr:\n%s", i, how, len(got), err, short(raw), short(p.stderr.String()))
				}
				select {
				case <-p.exited:
					t.Fatalf("serve %d died:\n%s", i, short(p.stderr.String()))
				default:
				}
				e, _, err := p.call(time.Minute, "local_codegraph_projects", map[string]any{"query": "pkg-0-7"})
				if err != nil || len(e.Projects) == 0 || e.Projects[0].Name != "pkg-0-7" {
					t.Fatalf("serve %d search after the base was %s: %+v %v", i, how, e.Projects, err)
				}
			}
		})
	}
}

// Issue 23 item 9a: `cgcat store recover` on a healthy store says so,
// rebuilds nothing and leaves no catalog.db.damaged-* behind.
func TestRecoverOfAHealthyStoreSaysSo(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	f := newViewsFixture(t, 5)
	for range 2 {
		r := run(f.env, time.Minute, "", "store", "recover")
		if r.code != 0 || !strings.Contains(r.stdout, "is healthy (5 records), nothing to do") {
			t.Fatalf("%s", r)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(f.data, "catalog.db.*")); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
	if got := f.listIDs(t); !sameIDs(got, f.ids) {
		t.Fatalf("after recover: %d projects, ids changed", len(got))
	}
}
