package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	dir := t.TempDir()
	code := filepath.Join(dir, "code")
	if err := os.Mkdir(code, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "c.json")
	valid := `"version":1,"dataDir":"` + dir + `/data"`
	for _, tc := range []struct {
		name, body, want string
	}{
		{"not json", `{"version":1,`, `c.json: not valid JSON: the file ends early (an unclosed { or [ ?)`},
		{"not object", `[1]`, `the file must hold one JSON object`},
		{"unknown top", `{` + valid + `,"dataDri":"/x"}`, `c.json: dataDri: unknown field (did you mean "dataDir"?)`},
		{"unknown nested", `{` + valid + `,"discovery":{"excludeName":[]}}`, `discovery.excludeName: unknown field (did you mean "excludeNames"?)`},
		{"unknown far", `{` + valid + `,"sharing":{"whatever":1}}`, `sharing.whatever: unknown field (known: denyRoots, exposeAbsolutePaths, roots)`},
		{"unknown in connection", `{` + valid + `,"connections":{"g":{"cmd":"/bin/x"}}}`, `connections.g.cmd: unknown field`},
		{"wrong type", `{` + valid + `,"discovery":{"maxDepth":"6"}}`, `discovery.maxDepth: must be a whole number, not string`},
		{"wrong bool", `{` + valid + `,"sharing":{"exposeAbsolutePaths":"yes"}}`, `sharing.exposeAbsolutePaths: must be true or false, not string`},
		{"version", `{"version":2,"dataDir":"/tmp/x"}`, `version: must be 1 (this cgcat understands config version 1), got 2`},
		{"no data dir", `{"version":1}`, `dataDir: is required`},
		{"relative data dir", `{"version":1,"dataDir":"data"}`, `dataDir: "data" is relative; write an absolute path`},
		{"tilde", `{` + valid + `,"discovery":{"roots":["~/code"]}}`, `discovery.roots[0]: "~/code" starts with ~; write the absolute path (cgcat does not expand ~)`},
		{"var", `{` + valid + `,"discovery":{"roots":["$HOME/code"]}}`, `discovery.roots[0]: "$HOME/code" contains a variable`},
		{"uri", `{` + valid + `,"sharing":{"roots":["file:///code"]}}`, `sharing.roots[0]: "file:///code" is a URI; write a plain absolute path, not file://`},
		{"relative deny", `{` + valid + `,"sharing":{"denyRoots":["private"]}}`, `sharing.denyRoots[0]: "private" is relative`},
		{"fs root", `{` + valid + `,"discovery":{"roots":["/"]}}`, `discovery.roots[0]: "/" is the file-system root`},
		{"depth range", `{` + valid + `,"discovery":{"maxDepth":-1}}`, `discovery.maxDepth: must be between 0 and 64, got -1`},
		{"slice range", `{` + valid + `,"discovery":{"maxDirectoriesPerSlice":0}}`, `discovery.maxDirectoriesPerSlice: must be between 1 and 1000000, got 0`},
		{"round < slice", `{` + valid + `,"discovery":{"maxDirectoriesPerRound":10}}`, `discovery.maxDirectoriesPerRound: must be at least discovery.maxDirectoriesPerSlice (2000), got 10`},
		{"exclude sep", `{` + valid + `,"discovery":{"excludeNames":["a/b"]}}`, `discovery.excludeNames[0]: must be a plain directory name (no separators), got "a/b"`},
		{"mode", `{` + valid + `,"metadata":{"mode":"everything"}}`, `metadata.mode: must be "package-manifests-and-bounded-readme", got "everything"`},
		{"per project", `{` + valid + `,"metadata":{"maxBytesPerProject":100}}`, `metadata.maxBytesPerProject: must be between metadata.maxBytesPerFile (16384)`},
		{"projection", `{` + valid + `,"gbrain":{"projection":"paths"}}`, `gbrain.projection: must be "reference-only" or "local-paths", got "paths"`},
		{"source", `{` + valid + `,"gbrain":{"expectedSource":"Bad_Source"}}`, `gbrain.expectedSource: must match [a-z0-9-]{1,32}`},
		{"slug", `{` + valid + `,"gbrain":{"slugPrefix":"Catalog/x"}}`, `gbrain.slugPrefix: must be lowercase segments`},
		{"ref missing", `{` + valid + `,"gbrain":{"enabled":true}}`, `gbrain.connectionRef: names "local-gbrain-catalog", which is not in the top-level "connections" map`},
		{"conn both", `{` + valid + `,"connections":{"g":{"command":"/bin/gbrain","url":"http://x"}}}`, `connections.g: has both command and url`},
		{"conn relative", `{` + valid + `,"connections":{"g":{"command":"gbrain"}}}`, `connections.g.command: "gbrain" is relative`},
		{"conn url", `{` + valid + `,"connections":{"g":{"url":"ftp://x"}}}`, `connections.g.url: must start with http:// or https://`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.body), file)
			if err == nil {
				t.Fatalf("Parse accepted %s", tc.body)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error\n  got  %q\n  want %q", err.Error(), tc.want)
			}
		})
	}
}

func TestParseDefaultsAndCanonical(t *testing.T) {
	dir := t.TempDir()
	code := filepath.Join(dir, "code")
	private := filepath.Join(code, "private")
	if err := os.MkdirAll(private, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(code, link); err != nil {
		t.Fatal(err)
	}
	body := `{"version":1,"dataDir":"` + dir + `/data/","discovery":{"roots":["` + link + `/","` + code + `"]},
	  "sharing":{"denyRoots":["` + private + `","/elsewhere"]}}`
	cfg, err := Parse([]byte(body), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	realCode, _ := filepath.EvalSymlinks(code)
	if got := cfg.Discovery.Roots; len(got) != 1 || got[0] != realCode {
		t.Fatalf("roots not canonical and de-duplicated: %q", got)
	}
	if got := cfg.Sharing.Roots; len(got) != 1 || got[0] != realCode {
		t.Fatalf("sharing roots should default to discovery roots: %q", got)
	}
	if cfg.DataDir != filepath.Join(dir, "data") {
		t.Fatalf("dataDir not cleaned: %q", cfg.DataDir)
	}
	d := cfg.Discovery
	if d.MaxDepth != 6 || d.RefreshIntervalSeconds != 600 || d.MaxDirectoriesPerSlice != 2000 || d.MaxSliceMs != 1000 ||
		d.MaxDirectoriesPerRound != 100000 || d.MaxRoundMs != 60000 || len(d.ExcludeNames) != 5 {
		t.Fatalf("discovery defaults wrong: %+v", d)
	}
	if !cfg.Sharing.ExposeAbsolutePaths || cfg.Metadata.MaxBytesPerFile != 16384 || cfg.Metadata.MaxBytesPerProject != 65536 {
		t.Fatalf("defaults wrong: %+v %+v", cfg.Sharing, cfg.Metadata)
	}
	if cfg.GBrain.Enabled || cfg.GBrain.SlugPrefix != "catalog/codegraph" || cfg.GBrain.Projection != "reference-only" {
		t.Fatalf("gbrain defaults wrong: %+v", cfg.GBrain)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "sharing.denyRoots[1]: /elsewhere is outside every sharing root") {
		t.Fatalf("want a warning for the stray deny root, got %q", cfg.Warnings)
	}
}

func TestNoRootsMeansSetupRequired(t *testing.T) {
	cfg, err := Parse([]byte(`{"version":1,"dataDir":"/tmp/cgcat-test"}`), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HasRoots() {
		t.Fatal("a config without roots must not have roots")
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	dir := t.TempDir()
	cfg, err := AdHoc([]string{dir}, filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b, "x.json")
	if err != nil {
		t.Fatalf("a written config must parse again: %v\n%s", err, b)
	}
	if back.Discovery.Roots[0] != cfg.Discovery.Roots[0] || back.DataDir != cfg.DataDir {
		t.Fatalf("round trip changed the config: %+v", back)
	}
}

// BenchmarkLiveCurrent is the cost every tool call pays to notice an edited
// config file: one stat when nothing changed.
func BenchmarkLiveCurrent(b *testing.B) {
	dir := b.TempDir()
	path := dir + "/config.json"
	if err := os.WriteFile(path, []byte(`{"version":1,"dataDir":"`+dir+`/data","discovery":{"roots":["`+dir+`"]}}`), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		b.Fatal(err)
	}
	l := NewLive(path, cfg, nil, nil)
	for b.Loop() {
		if c, _ := l.Current(); c != cfg {
			b.Fatal("reloaded an unchanged file")
		}
	}
}
