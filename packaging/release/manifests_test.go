package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func fakeAssets() []asset {
	var out []asset
	for i, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		ext := ".tar.gz"
		if goos == "windows" {
			ext = ".zip"
		}
		base := "cgcat_1.2.3_" + goos + "_" + goarch
		out = append(out, asset{name: base + ext, goos: goos, goarch: goarch, kind: "archive", sha256: strings.Repeat(string(rune('a'+i)), 64)},
			asset{name: base + ".mcpb", goos: goos, goarch: goarch, kind: "mcpb", sha256: strings.Repeat(string(rune('k'+i)), 64)})
	}
	return out
}

// TestManifestsFromAssets: the formula, the Scoop manifest and server.json
// name every archive with its checksum, and nothing else.
func TestManifestsFromAssets(t *testing.T) {
	as := fakeAssets()
	f, err := brewFormula("v1.2.3", as)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		in := strings.Contains(string(f), "/v1.2.3/"+a.name+"\"\n      sha256 \""+a.sha256+"\"")
		if want := a.kind == "archive" && a.goos != "windows"; in != want {
			t.Errorf("formula and %s: %v, want %v\n%s", a.name, in, want, f)
		}
	}
	s, err := scoopManifest("v1.2.3", as)
	if err != nil {
		t.Fatal(err)
	}
	var sc struct {
		Version      string
		Architecture map[string]struct{ URL, Hash string }
	}
	if err := json.Unmarshal(s, &sc); err != nil || sc.Version != "1.2.3" || sc.Architecture["64bit"].Hash != as[8].sha256 || !strings.HasSuffix(sc.Architecture["64bit"].URL, as[8].name) {
		t.Errorf("scoop: %v %s", err, s)
	}
	tmpl := `{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":"io.github.cgcat/cgcat","description":"d","version":"0.0.0","packages":[]}`
	j, err := serverJSON([]byte(tmpl), "v1.2.3", as)
	if err != nil {
		t.Fatal(err)
	}
	var sj struct {
		Name, Version string
		Packages      []struct {
			RegistryType, Identifier, Version, FileSha256 string
			Transport                                     struct{ Type string }
		}
	}
	if err := json.Unmarshal(j, &sj); err != nil || sj.Version != "1.2.3" || len(sj.Packages) != 5 {
		t.Fatalf("server.json: %v %s", err, j)
	}
	for i, p := range sj.Packages {
		if p.RegistryType != "mcpb" || p.Transport.Type != "stdio" || p.FileSha256 != as[2*i+1].sha256 || !strings.HasSuffix(p.Identifier, "/v1.2.3/"+as[2*i+1].name) {
			t.Errorf("package %d: %+v", i, p)
		}
	}
}

// TestRepositoryServerJSON: the repository's server.json is the registry
// entry's template: its name has one slash, its description fits the
// registry's 100 characters.
func TestRepositoryServerJSON(t *testing.T) {
	var m struct {
		Schema      string `json:"$schema"`
		Name        string
		Description string
	}
	b := mustRead(t, "../../server.json")
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if strings.Count(m.Name, "/") != 1 || len(m.Description) > 100 || m.Description == "" || !strings.Contains(m.Schema, "server.schema.json") {
		t.Errorf("%+v", m)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
