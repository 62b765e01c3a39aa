package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
)

const hostCursor = hostconfig.Cursor

// homeFiles lists every path under home with its content (dirs as "/").
func homeFiles(t *testing.T, home string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p] = "/"
			return nil
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInstallRoundLeavesNoStrays: install and uninstall into every host
// (with the allow rule where a host has one) leave $HOME as it was, but
// for the backups in the state dir: no backup next to a host file, no file
// or folder install created (~/.gemini/policies/, ~/.cursor/, a new
// config file that holds nothing else), and the user's own files byte for
// byte. Run into an empty home and into one with the user's files.
func TestInstallRoundLeavesNoStrays(t *testing.T) {
	for _, withUserFiles := range []bool{false, true} {
		e := newTestEnv(t)
		e.writeConfig(t)
		if withUserFiles {
			writeTestFile(t, e.codexFile(), userCodexConfig)
			writeTestFile(t, filepath.Join(e.opencodeDir(), "opencode.jsonc"), userOpenCodeConfig)
			writeTestFile(t, filepath.Join(e.home, ".claude.json"), `{"numStartups": 3, "mcpServers": {}}`)
			writeTestFile(t, filepath.Join(e.home, ".claude", "settings.json"), `{"permissions": {"allow": ["Read"]}}`)
			writeTestFile(t, filepath.Join(e.home, ".gemini", "settings.json"), `{"theme": "dark"}`)
			writeTestFile(t, filepath.Join(e.home, ".cursor", "mcp.json"), `{"mcpServers": {"github": {"url": "https://api.example.com/mcp"}}}`)
		}
		before := homeFiles(t, e.home)
		for _, h := range hostconfig.All() {
			o := installOptions{allowTools: h.Allow != nil}
			if out, errOut, code := e.install(t, h.Name, o); code != 0 {
				t.Fatalf("install %s: exit %d\n%s%s", h.Name, code, out, errOut)
			}
			if out, errOut, code := e.uninstall(t, h.Name, installOptions{}); code != 0 {
				t.Fatalf("uninstall %s: exit %d\n%s%s", h.Name, code, out, errOut)
			}
		}
		after := homeFiles(t, e.home)
		state := stateDir()
		if !strings.HasPrefix(state, e.home+string(filepath.Separator)) {
			t.Fatalf("state dir %s is not in the test's home", state)
		}
		var backupsSeen int
		for p, content := range after {
			old, existed := before[p]
			switch {
			case existed && old != content:
				t.Errorf("%s changed:\n%s\nwas:\n%s", p, content, old)
			case existed:
			case strings.HasPrefix(state, p+string(filepath.Separator)) || p == state || p == filepath.Join(state, "backups"):
				// the state dir and its parents
			case strings.HasPrefix(p, filepath.Join(state, "backups")+string(filepath.Separator)):
				if content != "/" {
					backupsSeen++
				}
			default:
				t.Errorf("stray after one install/uninstall round: %s", p)
			}
		}
		for p := range before {
			if _, ok := after[p]; !ok {
				t.Errorf("the round removed the user's %s", p)
			}
		}
		if _, err := os.Stat(filepath.Join(state, "installed")); !os.IsNotExist(err) {
			t.Errorf("the record of what install created outlived the uninstall: %v", err)
		}
		if backupsSeen == 0 {
			t.Error("no backup was written into the state dir")
		}
	}
}

// TestBackupsKeepTheLastFew: each host has one backup folder, which keeps
// the newest keepBackups copies of each file.
func TestBackupsKeepTheLastFew(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	writeTestFile(t, e.codexFile(), userCodexConfig)
	at := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	for i := range 2 * keepBackups {
		now := func() time.Time { return at.Add(time.Duration(i) * time.Minute) }
		if _, _, code := e.install(t, hostCodex, installOptions{now: now}); code != 0 {
			t.Fatal("install")
		}
		if _, _, code := e.uninstall(t, hostCodex, installOptions{now: now}); code != 0 {
			t.Fatal("uninstall")
		}
	}
	dir := filepath.Join(stateDir(), "backups", hostCodex)
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != keepBackups {
		t.Fatalf("%d backups, want %d: %v", len(names), keepBackups, names)
	}
	slices.Sort(names)
	// The newest is the file as it was before the last uninstall.
	last := readTestFile(t, names[len(names)-1])
	if !strings.Contains(last, "[mcp_servers.codegraph-catalog]") || !strings.HasPrefix(last, userCodexConfig) {
		t.Fatalf("newest backup:\n%s", last)
	}
	if readTestFile(t, e.codexFile()) != userCodexConfig {
		t.Fatal("the user's file did not come back")
	}
}

// TestInstallCursor: the fifth host end to end without a Cursor binary
// (Cursor is not an npm package that runs headless): install writes a
// stdio entry into ~/.cursor/mcp.json beside the user's servers, doctor
// starts it as Cursor starts it (the whole environment, no shell) — a real
// cgcat serve over stdio, initialize and tools/list — and says what it
// could not check, and uninstall gives the file back byte for byte.
func TestInstallCursor(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	file := filepath.Join(e.home, ".cursor", "mcp.json")
	user := "{\n  // my servers\n  \"mcpServers\": {\n    \"github\": {\"url\": \"https://api.example.com/mcp\"}\n  }\n}\n"
	writeTestFile(t, file, user)
	out, errOut, code := e.install(t, hostCursor, installOptions{})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, out, `installed MCP server "codegraph-catalog" into `+file, "warning: "+file+" has no CodeGraph MCP server",
		`fix: add "codegraph": {"type": "stdio"`, "restart Cursor")
	if _, _, code := e.install(t, hostCursor, installOptions{allowTools: true}); code != 2 {
		t.Fatal("--allow-tools accepted for Cursor, which has no rule cgcat writes")
	}
	t.Setenv("PATH", "/usr/bin:/bin")
	out, _, code = runCmd(func(o, eo *bytes.Buffer) error {
		return runDoctor(context.Background(), e.globals(), &doctorOptions{name: "codegraph-catalog"}, o, eo)
	})
	if code != 0 {
		t.Fatalf("doctor exit %d\n%s", code, out)
	}
	sec := doctorSection(out, "cursor")
	mustContain(t, sec,
		"✓ mcpServers.codegraph-catalog in "+file+": "+cgcatBin(t)+" serve --config "+e.cfgPath,
		"✓ started as Cursor starts it: cgcat ", "✓ tools: local_codegraph_projects, local_codegraph_resolve (both readOnlyHint)",
		"! "+file+" has no CodeGraph MCP server", "· approval: not checked: Cursor keeps whether MCP calls ask in its own settings")
	if out, _, code := e.uninstall(t, hostCursor, installOptions{}); code != 0 || readTestFile(t, file) != user {
		t.Fatalf("uninstall: exit %d\n%s\n%s", code, out, readTestFile(t, file))
	}
}
