package meta_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local/meta"
)

// TestLanguageWords: the words people use for a language or ecosystem
// come from the manifest that declares the project, before its own
// keywords, and survive a manifest that already fills the keyword bound.
func TestLanguageWords(t *testing.T) {
	many := make([]string, 40)
	for i := range many {
		many[i] = fmt.Sprintf("%q", fmt.Sprintf("kw%d", i))
	}
	for _, tt := range []struct {
		name    string
		files   map[string]string
		want    []string
		without []string
	}{
		{"javascript", map[string]string{"package.json": `{"name":"a"}`}, []string{"javascript", "nodejs"}, []string{"typescript"}},
		{"typescript dev dependency", map[string]string{"package.json": `{"name":"a","devDependencies":{"typescript":"^5"}}`}, []string{"javascript", "typescript"}, nil},
		{"typescript declarations", map[string]string{"package.json": `{"name":"a","types":"dist/index.d.ts"}`}, []string{"typescript"}, nil},
		{"php", map[string]string{"composer.json": `{"name":"acme/a"}`}, []string{"php", "composer"}, []string{"javascript"}},
		{"rust", map[string]string{"Cargo.toml": "[package]\nname = \"a\"\n"}, []string{"rust", "cargo"}, nil},
		{"python", map[string]string{"pyproject.toml": "[project]\nname = \"a\"\n"}, []string{"python"}, nil},
		{"python setup.cfg", map[string]string{"setup.cfg": "[metadata]\nname = a\n"}, []string{"python"}, nil},
		{"go", map[string]string{"go.mod": "module example.com/a\n"}, []string{"go", "golang"}, nil},
		{"java", map[string]string{"pom.xml": "<project><groupId>g</groupId><artifactId>a</artifactId></project>"}, []string{"java", "jvm"}, []string{"kotlin"}},
		{"kotlin", map[string]string{"settings.gradle.kts": `rootProject.name = "a"`, "build.gradle.kts": "plugins {\n    kotlin(\"jvm\") version \"2.0.0\"\n}\n"}, []string{"java", "kotlin"}, nil},
		{"ruby", map[string]string{"a.gemspec": "Gem::Specification.new do |s|\n  s.name = \"a\"\nend\n"}, []string{"ruby"}, nil},
		{"dart", map[string]string{"pubspec.yaml": "name: a\n"}, []string{"dart"}, []string{"flutter"}},
		{"flutter", map[string]string{"pubspec.yaml": "name: a\ndependencies:\n  flutter:\n    sdk: flutter\n"}, []string{"dart", "flutter"}, nil},
		{"csharp", map[string]string{"A.csproj": "<Project><PropertyGroup><PackageId>A</PackageId></PropertyGroup></Project>"}, []string{"csharp", "dotnet"}, nil},
		{"many keywords", map[string]string{"package.json": `{"name":"a","keywords":[` + strings.Join(many, ",") + `]}`}, []string{"javascript", "nodejs", "kw0"}, nil},
		{"no manifest", map[string]string{"README.md": "# a\n\nPython and Go.\n"}, nil, []string{"python", "go"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := read(t, tree(t, "proj", tt.files), meta.Limits{})
			for _, w := range tt.want {
				if !slices.Contains(m.Keywords, w) {
					t.Errorf("keywords %q lack %q", m.Keywords, w)
				}
			}
			for _, w := range tt.without {
				if slices.Contains(m.Keywords, w) {
					t.Errorf("keywords %q have %q", m.Keywords, w)
				}
			}
		})
	}
}
