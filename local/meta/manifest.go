package meta

import (
	"bytes"
	"fmt"
	"strings"
)

// manifest is what one manifest kind declared. Strings are raw here; finish
// cleans them.
type manifest struct {
	files       []string // the files read, by name in the root
	name        string
	description string
	packages    []string
	keywords    []string
	// version is the release the manifest declares ("2.1.0"): what tells
	// two checkouts of one package apart.
	version string
}

// parser reads one manifest body; file is its name in the root.
type parser func(file string, body []byte) (manifest, error)

// kind is one manifest kind. kinds is in name priority order: the first
// kind that declares a name gives the project its name.
type kind struct {
	file   string            // exact name in the root
	match  func(string) bool // or: the names it matches
	parse  parser
	gradle bool // or: Gradle, read from two files
}

var kinds = []kind{
	{file: "package.json", parse: parsePackageJSON},
	{file: "Cargo.toml", parse: parseCargo},
	{file: "pyproject.toml", parse: parsePyproject},
	{file: "go.mod", parse: parseGoMod},
	{file: "setup.cfg", parse: parseSetupCfg},
	{file: "pom.xml", parse: parsePom},
	{file: "composer.json", parse: parsePackageJSON},
	{gradle: true},
	{match: suffix(".gemspec"), parse: parseGemspec},
	{file: "pubspec.yaml", parse: parsePubspec},
	{match: suffix(".csproj"), parse: parseCsproj},
}

func suffix(s string) func(string) bool {
	return func(n string) bool { return len(n) > len(s) && strings.HasSuffix(n, s) }
}

// readManifests reads every manifest kind present in the root.
func (r *reader) readManifests() {
	for _, k := range kinds {
		if k.gradle {
			r.readGradle()
			continue
		}
		files := []string{k.file}
		if k.match != nil {
			files = r.names(k.match)
		}
		for _, f := range files {
			if !r.has(f) {
				continue
			}
			body, ok := r.file(f, true)
			if !ok {
				continue
			}
			mf, err := safeParse(k.parse, f, body)
			if err != nil {
				r.problemf("%s: %s", f, short(err))
				continue
			}
			mf.files = []string{f}
			r.manifests = append(r.manifests, mf)
		}
	}
}

// readGradle reads Gradle's two files: the name lives in settings.gradle,
// the group in build.gradle.
func (r *reader) readGradle() {
	var settings, build []byte
	var files []string
	for _, f := range []string{"settings.gradle.kts", "settings.gradle"} {
		if r.has(f) && settings == nil {
			if b, ok := r.file(f, true); ok {
				settings, files = b, append(files, f)
			}
		}
	}
	for _, f := range []string{"build.gradle.kts", "build.gradle"} {
		if r.has(f) && build == nil {
			if b, ok := r.file(f, true); ok {
				build, files = b, append(files, f)
			}
		}
	}
	if files == nil {
		return
	}
	mf := parseGradle(settings, build)
	mf.files = files
	r.manifests = append(r.manifests, mf)
}

// safeParse runs p and turns a panic into an error: a third-party parser
// meeting a crafted file must not take the catalog down with it.
func safeParse(p parser, file string, body []byte) (mf manifest, err error) {
	defer func() {
		if v := recover(); v != nil {
			mf, err = manifest{}, fmt.Errorf("parser failed: %v", v)
		}
	}()
	return p(file, bytes.TrimPrefix(body, []byte("\uFEFF")))
}

// short is an error's text bounded for Problems.
func short(err error) string { return Clean(err.Error(), 160) }
