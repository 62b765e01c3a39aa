package hostconfig

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func addFixtureSeeds(f *testing.F, sub string) {
	ents, err := os.ReadDir(filepath.Join(testdataDir, sub))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(testdataDir, sub, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(b, true)
	}
}

// FuzzUpsertCodex: on any input, never panic; when UpsertCodex or
// RemoveCodex succeed, the output parses and every other key is unchanged;
// an install is idempotent and can be removed again.
func FuzzUpsertCodex(f *testing.F) {
	addFixtureSeeds(f, "codex")
	f.Add([]byte("a = nan\nt = 1979-05-27T07:32:00+08:00\n"), false)
	f.Add([]byte("[mcp_servers]\n[mcp_servers.codegraph-catalog.env]\nA = \"1\"\n"), true)
	f.Fuzz(func(t *testing.T, src []byte, force bool) {
		name := testEntry.Name
		if out, changed, err := RemoveCodex(src, name); err == nil {
			checkCodexResult(t, src, out, name, nil)
			if !changed && !bytes.Equal(out, src) {
				t.Fatal("unchanged but different")
			}
		}
		out, changed, err := UpsertCodex(src, testEntry, force)
		if err != nil {
			return
		}
		checkCodexResult(t, src, out, name, codexValue(testEntry))
		if !changed && !bytes.Equal(out, src) {
			t.Fatal("unchanged but different")
		}
		again, changed, err := UpsertCodex(out, testEntry, false)
		if err != nil || changed || !bytes.Equal(again, out) {
			t.Fatalf("second upsert: changed=%v err=%v", changed, err)
		}
		back, _, err := RemoveCodex(out, name)
		if err != nil {
			t.Fatalf("remove after upsert: %v\n%s", err, out)
		}
		checkCodexResult(t, out, back, name, nil)
	})
}

// FuzzUpsertOpenCode: the same properties for OpenCode JSON/JSONC.
func FuzzUpsertOpenCode(f *testing.F) {
	addFixtureSeeds(f, "opencode")
	f.Add([]byte(`{"mcp":{"codegraph-catalog":1}/*x*/}`), true)
	f.Add([]byte("{\"a\":1 // c\n,}"), false)
	f.Fuzz(func(t *testing.T, src []byte, force bool) {
		name := testEntry.Name
		if out, changed, err := RemoveOpenCode(src, name); err == nil && changed {
			checkOpenCodeResult(t, src, out, name, nil)
		} else if err == nil && !bytes.Equal(out, src) {
			t.Fatal("unchanged but different")
		}
		out, changed, err := UpsertOpenCode(src, testEntry, force)
		if err != nil {
			return
		}
		checkOpenCodeResult(t, src, out, name, opencodeValue(testEntry))
		if !changed && !bytes.Equal(out, src) {
			t.Fatal("unchanged but different")
		}
		again, changed, err := UpsertOpenCode(out, testEntry, false)
		if err != nil || changed || !bytes.Equal(again, out) {
			t.Fatalf("second upsert: changed=%v err=%v", changed, err)
		}
		back, _, err := RemoveOpenCode(out, name)
		if err != nil {
			t.Fatalf("remove after upsert: %v\n%s", err, out)
		}
		checkOpenCodeResult(t, out, back, name, nil)
	})
}
