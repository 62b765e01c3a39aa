package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// healthyEnv is a config with one discovered project and cgcat installed
// into both hosts (the built binary, so doctor really starts it).
func healthyEnv(t *testing.T) *testEnv {
	t.Helper()
	e := newTestEnv(t)
	fakeProject(t, filepath.Join(e.root, "orders-sdk"), "@acme/orders-sdk")
	e.writeConfig(t)
	out, errOut, code := runCmd(func(out, errOut *bytes.Buffer) error {
		return runScan(context.Background(), e.globals(), &scanOptions{}, out, errOut)
	})
	if code != 0 {
		t.Fatalf("scan: exit %d\n%s%s", code, out, errOut)
	}
	for _, host := range []string{hostCodex, hostOpenCode} {
		if out, errOut, code := e.install(t, host, installOptions{}); code != 0 {
			t.Fatalf("install %s: exit %d\n%s%s", host, code, out, errOut)
		}
	}
	return e
}

func TestDoctorHealthy(t *testing.T) {
	e := healthyEnv(t)
	t.Setenv("PATH", "/usr/bin:/bin") // no codex/opencode CLI: versions are not read
	out, errOut, code := e.doctor(t, nil)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, out,
		"✓ config "+e.cfgPath+" is valid",
		"✓ discovery root "+e.root+" is a readable directory",
		"✓ data dir "+e.dataDir+" is writable",
		"✓ catalog store "+filepath.Join(e.dataDir, "catalog.db")+" opens (format 1",
		"✓ 1 project(s) in the catalog: 1 present",
		"coverage complete",
		"✓ scan.lease: free",
		"· GBrain is off",
		"· codex CLI is not on PATH",
		"✓ mcp_servers.codegraph-catalog in "+e.codexFile()+": "+cgcatBin(t)+" serve --config "+e.cfgPath,
		"✓ started as Codex starts it: cgcat ",
		"✓ mcp.codegraph-catalog in "+filepath.Join(e.opencodeDir(), "opencode.json")+": "+cgcatBin(t)+" serve --config "+e.cfgPath,
		"✓ started as OpenCode starts it: cgcat ",
		"✓ tools: local_codegraph_projects, local_codegraph_resolve (both readOnlyHint)",
		"summary: all checks passed",
	)
	mustNotContain(t, out, "✗", "fix:")
	if strings.Count(out, "(both readOnlyHint)") != 2 {
		t.Fatalf("tools not checked for both hosts:\n%s", out)
	}
	// Doctor writes nothing into the host configs.
	if len(backups(t, e.codexFile())) != 0 {
		t.Fatal("doctor touched the Codex config")
	}
}

func TestDoctorNoHostsNoCatalog(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	out, errOut, code := e.doctor(t, nil)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, out,
		"✓ data dir "+e.dataDir+" does not exist yet; cgcat creates it on first use",
		"! no catalog yet in "+e.dataDir, "fix: cgcat scan",
		"· no Codex config at "+e.codexFile()+" (to use cgcat from Codex: cgcat install codex)",
		"· no opencode.json or opencode.jsonc in "+e.opencodeDir(),
		"summary: nothing broken; 1 warning(s)",
	)
	if _, err := os.Stat(e.dataDir); !os.IsNotExist(err) {
		t.Fatal("doctor created the data dir")
	}
}

func TestDoctorNoConfig(t *testing.T) {
	e := newTestEnv(t)
	out, _, code := e.doctor(t, &globalOptions{})
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	mustContain(t, out, "✗ no config file at "+e.cfgPath, "fix: cgcat config init --root DIR")
	// An invalid config is reported with the field.
	writeTestFile(t, e.cfgPath, `{"version": 1, "dataDir": "relative/dir"}`)
	out, _, code = e.doctor(t, nil)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	mustContain(t, out, "✗ config is not valid:", "dataDir", "is relative", "fix: ")
}

func TestDoctorBroken(t *testing.T) {
	e := healthyEnv(t)
	// A root that vanished, a data dir that cannot be created (a file is in
	// the way; root could write anywhere else), a Codex entry naming a
	// binary that does not exist, and an OpenCode entry that starts but
	// does not speak MCP.
	missing := filepath.Join(e.base, "gone")
	if err := os.Mkdir(missing, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(e.base, "afile"), "x")
	cfg := `{"version": 1, "dataDir": "` + filepath.Join(e.base, "afile", "data") + `", "discovery": {"roots": ["` + e.root + `", "` + missing + `"]}}`
	writeTestFile(t, e.cfgPath, cfg)
	if err := os.Remove(missing); err != nil {
		t.Fatal(err)
	}
	if _, _, code := e.install(t, hostCodex, installOptions{executable: filepath.Join(e.base, "no-such-dir", "cgcat"), force: true}); code != 0 {
		t.Fatal("install of a missing binary failed")
	}
	writeTestFile(t, filepath.Join(e.opencodeDir(), "opencode.json"), `{
  "mcp": {
    "codegraph-catalog": {"type": "local", "command": ["/bin/sh", "-c", "echo this is not MCP; echo broken >&2; exit 3", "--config", "`+e.cfgPath+`"]}
  }
}
`)
	out, errOut, code := e.doctor(t, nil)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	mustContain(t, out,
		"✓ discovery root "+e.root+" is a readable directory",
		"✗ discovery root "+missing+" does not exist\n      fix: create it or mount its volume, or remove it from discovery.roots in "+e.cfgPath,
		"✗ data dir "+filepath.Join(e.base, "afile", "data")+" cannot be created: "+filepath.Join(e.base, "afile")+" is not a directory\n      fix: ",
		"· not checked (no usable data dir)",
		"✗ mcp_servers.codegraph-catalog in "+e.codexFile()+" runs "+filepath.Join(e.base, "no-such-dir", "cgcat")+", which does not exist",
		"      fix: cgcat install codex --force",
		"✗ started as OpenCode starts it: the process ended before answering initialize",
		"stderr: broken",
		"      fix: cgcat install opencode --force",
		"summary: 4 problem(s)",
	)
	// Every ✗ has its fix on the next lines.
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "✗") || strings.HasPrefix(l, "summary:") {
			continue
		}
		found := false
		for j := i + 1; j < len(lines) && strings.HasPrefix(lines[j], "      "); j++ {
			if strings.HasPrefix(lines[j], "      fix: ") {
				found = true
			}
		}
		if !found {
			t.Fatalf("no fix for %q:\n%s", l, out)
		}
	}
	// The same through main: exit status 1.
	var o, eo bytes.Buffer
	if c := run(context.Background(), []string{"doctor", "--config", e.cfgPath}, strings.NewReader(""), &o, &eo); c != 1 {
		t.Fatalf("run doctor: exit %d\n%s%s", c, o.String(), eo.String())
	}
}

func TestDoctorHandshakeTimeout(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	writeTestFile(t, e.codexFile(), `[mcp_servers.codegraph-catalog]
command = "/bin/sh"
args = ["-c", "exec sleep 30", "--config", "`+e.cfgPath+`"]
startup_timeout_sec = 1
`)
	out, _, code := e.doctor(t, nil)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	mustContain(t, out, "✗ started as Codex starts it: no answer to initialize within 1s")
}
