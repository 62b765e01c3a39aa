package meta

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local/nofollow"
)

func TestFirstParagraph(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Just text.", "Just text."},
		{"heading then paragraph", "# T\nA para.\n\nB para.", "A para."},
		{"setext heading", "Title\n=====\n\nBody text.", "Body text."},
		{"setext heading after text", "Title line\n---\nBody.", "Body."},
		{"YAML front matter", "---\ntitle: x\ndescription: y\n---\n\nAfter front matter.", "After front matter."},
		{"TOML front matter", "+++\ntitle = 'x'\n+++\nAfter.", "After."},
		{"rule is not front matter", "---\nText after a rule.", "Text after a rule."},
		{"code fence", "```sh\nnpm install\n```\n\nProse.", "Prose."},
		{"tilde fence", "~~~~\ncode\n~~~~\nProse.", "Prose."},
		{"indented code", "    code here\n\nProse.", "Prose."},
		{"html comment", "<!--\nmulti\nline\n-->\nProse.", "Prose."},
		{"html block", "<div align=\"center\">\n<img\n  src=\"x.png\"\n  alt=\"logo\">\n</div>\n\nProse.", "Prose."},
		{"html heading skipped", "<h1 align=\"center\">Name</h1>\n\nProse.", "Prose."},
		{"html prose kept", "<h1>Name</h1>\n<p align=\"center\"><b>A tool</b> for things &amp; stuff.</p>", "A tool for things & stuff."},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |\n\nProse.", "Prose."},
		{"table without outer pipes", "a | b\n--|--\n1 | 2\n\nProse.", "Prose."},
		{"link reference lines", "[ci]: https://ci\n[npm]: https://npm\n\nProse.", "Prose."},
		{"list", "- [Install](#install)\n- [Use](#use)\n\nProse.", "Prose."},
		{"list ends a paragraph", "Features:\n- a\n- b", "Features:"},
		{"badges", "[![a](b)](c) ![d](e)\n<img src=x>\n\nProse.", "Prose."},
		{"navigation", "[Docs](d) · [Blog](b) · [Chat](c)\n\nEnglish | [中文](zh.md)\n\nProse.", "Prose."},
		{"TOC", "[TOC]\n\nProse.", "Prose."},
		{"link row inside a paragraph", "Built on\n[React](r), [Vite](v)\nand more.", "Built on React, Vite and more."},
		{"blockquote", "> A quoted tagline\n> over lines.\n\nProse.", "A quoted tagline over lines."},
		{"alert", "> [!NOTE]\n> Heads up.", "Heads up."},
		{"inline markup", "**Bold** *em* _u_ ~~s~~ `c` [t](u) [r][ref] <https://x.y> snake_case_name \\*esc\\*", "Bold em u s c t r https://x.y snake_case_name *esc*"},
		{"reStructuredText", "Title\n#####\n\n.. note::\n\n:author: me\n\nSee `docs <https://d>`__ and ``x``.", "See docs and x."},
		{"CJK join", "第一行\n第二行，\nthen English\n中文", "第一行第二行， then English 中文"},
		{"no letters", "---\n***\n\n| |\n\n!!!", ""},
		{"CRLF", "# T\r\n\r\nLine one\r\nline two\r\n", "Line one line two"},
		{"BOM", "\uFEFFText.", "Text."},
		{"unclosed fence", "```\nnever closed\nmore", ""},
		{"control characters", "Te\x1b[31mxt\u202e.", "Text."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := firstParagraph(tt.in); got != tt.want {
				t.Errorf("firstParagraph(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestStripCredentials(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://github.com/a/b.git", "https://github.com/a/b.git"},
		{"https://user:pass@github.com/a/b.git", "https://github.com/a/b.git"},
		{"https://ghp_token@github.com/a/b.git", "https://github.com/a/b.git"},
		{"https://x-access-token:tok@github.com/a/b", "https://github.com/a/b"},
		{"https://u:pa/ss@host/a.git", "https://host/a.git"},
		{"https://u:p?ss@host/a.git", "https://host/a.git"},
		{"https://host/a.git?access_token=abc#frag", "https://host/a.git"},
		{"https://host:8443/path/@scope/pkg.git", "https://host:8443/path/@scope/pkg.git"},
		{"https://org@dev.azure.com/org/p/_git/r", "https://dev.azure.com/org/p/_git/r"},
		{"ssh://git@host/r.git", "ssh://git@host/r.git"},
		{"ssh://git:pw@host/r.git", "ssh://host/r.git"},
		{"git+ssh://me@host/r", "git+ssh://me@host/r"},
		{"git@github.com:a/b.git", "git@github.com:a/b.git"},
		{"user:pw@host:a/b.git", "host:a/b.git"},
		{"/srv/git/repo@2.git", "/srv/git/repo@2.git"},
		{"../sibling", "../sibling"},
		{"./a:b@c", "./a:b@c"},
		{".hidden:pw@host:r.git", "host:r.git"},
		{`C:\repos\a@b.git`, `C:\repos\a@b.git`},
		{"file:///srv/repo", "file:///srv/repo"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := stripCredentials(tt.in); got != tt.want {
			t.Errorf("stripCredentials(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseHead(t *testing.T) {
	tests := []struct {
		in             string
		branch, commit string
		ok             bool
	}{
		{"ref: refs/heads/main\n", "main", "", true},
		{"ref:refs/heads/a/b", "a/b", "", true},
		{"ref: refs/remotes/origin/x", "", "", true},
		{"ref: refs/heads/bad name", "", "", false},
		{"ref: /etc/passwd", "", "", false},
		{strings.Repeat("a", 40), "", strings.Repeat("a", 40), true},
		{strings.Repeat("b", 64) + "\n", "", strings.Repeat("b", 64), true},
		{strings.Repeat("A", 40), "", "", false},
		{strings.Repeat("a", 39), "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		b, c, ok := parseHead([]byte(tt.in))
		if b != tt.branch || c != tt.commit || ok != tt.ok {
			t.Errorf("parseHead(%q) = %q, %q, %v", tt.in, b, c, ok)
		}
	}
}

// TestProjectBudgetNeverExceeded reads random trees under random bounds and
// checks the bytes actually read.
func TestProjectBudgetNeverExceeded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"package.json", "go.mod", "Cargo.toml", "pyproject.toml", "setup.cfg", "pom.xml",
		"composer.json", "settings.gradle", "build.gradle.kts", "x.gemspec", "pubspec.yaml", "a.csproj",
		"README.md", ".git/HEAD", ".git/config", "codegraph/project.json"}
	for i := range 50 {
		root := t.TempDir()
		for _, n := range names {
			if rng.IntN(3) == 0 {
				continue
			}
			p := filepath.Join(root, filepath.FromSlash(n))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(strings.Repeat("x", rng.IntN(3000))), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		lim := Limits{MaxBytesPerFile: 1 + rng.Int64N(2000), MaxBytesPerProject: 1 + rng.Int64N(6000)}
		d, err := nofollow.OpenDir(root)
		if err != nil {
			t.Fatal(err)
		}
		r := &reader{root: root, dir: d, lim: lim}
		if err := r.list(); err != nil {
			t.Fatal(err)
		}
		r.readHint()
		r.readManifests()
		r.readGit()
		r.readReadme()
		r.closeDirs()
		d.Close()
		if r.used > lim.MaxBytesPerProject {
			t.Fatalf("tree %d: read %d bytes, bound %+v", i, r.used, lim)
		}
	}
}

// Seeds for the fuzzers: one sample per manifest kind, by a file name it
// reads (manifestParsers checks that every kind of the table has one).
var manifestSeeds = map[string]string{
	"package.json":    `{"name":"a","description":"d","keywords":["k"]}`,
	"Cargo.toml":      "[package]\nname = \"a\"\ndescription.workspace = true\n[workspace.package]\ndescription = \"d\"\n",
	"pyproject.toml":  "[project]\nname = \"a\"\nkeywords = [\"k\"]\n[tool.poetry]\nname = \"b\"\n",
	"go.mod":          "module example.com/a/v2\n",
	"setup.cfg":       "[metadata]\nname = a\nkeywords =\n  x,\n  y\n",
	"pom.xml":         "<project><groupId>g</groupId><artifactId>a</artifactId><name>n</name></project>",
	"composer.json":   `{"name":"v/p"}`,
	"a.gemspec":       "s.name = 'a'\ns.summary = %q{sum}\n",
	"pubspec.yaml":    "name: a\ndescription: |\n  line\n",
	"A.csproj":        "<Project><PropertyGroup><PackageId>A</PackageId><PackageTags>a;b</PackageTags></PropertyGroup></Project>",
	"settings.gradle": "rootProject.name = 'a'\n",
}

// manifestParser is one manifest kind's parser with the seed file it gets.
type manifestParser struct {
	file  string
	parse parser
}

// manifestParsers derives every manifest parser from the production table
// (kinds), each with its seed: the one name of manifestSeeds the kind
// reads; Gradle's is the seed no other kind reads, and it must be a file
// the stamp covers (isSource). A kind without a seed, or a seed no kind
// reads, fails the test: a kind added to the table cannot go unfuzzed.
func manifestParsers(tb testing.TB) []manifestParser {
	tb.Helper()
	claimed := map[string]bool{}
	var out []manifestParser
	gradle := -1
	for i, k := range kinds {
		if k.gradle {
			gradle = i
			out = append(out, manifestParser{})
			continue
		}
		var files []string
		for name := range manifestSeeds {
			if k.file == name || k.match != nil && k.match(name) {
				files = append(files, name)
			}
		}
		if len(files) != 1 {
			tb.Fatalf("manifest kind %d (%q): seeds %q, want one in manifestSeeds", i, k.file, files)
		}
		claimed[files[0]] = true
		out = append(out, manifestParser{files[0], k.parse})
	}
	var rest []string
	for name := range manifestSeeds {
		if !claimed[name] {
			rest = append(rest, name)
		}
	}
	switch {
	case gradle < 0 && len(rest) > 0:
		tb.Fatalf("seeds %q belong to no manifest kind", rest)
	case gradle >= 0 && (len(rest) != 1 || !isSource(rest[0])):
		tb.Fatalf("the Gradle kind: seeds %q, want one Gradle file", rest)
	case gradle >= 0:
		out[gradle] = manifestParser{rest[0], func(_ string, b []byte) (manifest, error) { return parseGradle(b, b), nil }}
	}
	return out
}

// TestEveryManifestKindHasASeed: the fuzzers' parsers come from the
// production table, one seed each (see manifestParsers).
func TestEveryManifestKindHasASeed(t *testing.T) {
	if ps := manifestParsers(t); len(ps) != len(kinds) {
		t.Fatalf("%d parsers for %d kinds", len(ps), len(kinds))
	}
}

// FuzzManifest runs every manifest parser, without the panic guard, on any
// body.
func FuzzManifest(f *testing.F) {
	parsers := manifestParsers(f)
	for i, p := range parsers {
		f.Add(uint8(i), []byte(manifestSeeds[p.file]))
	}
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		p := parsers[int(kind)%len(parsers)]
		m, err := p.parse(p.file, body)
		if err != nil && (m.name != "" || m.packages != nil) {
			t.Errorf("%s: error %v with a result %+v", p.file, err, m)
		}
	})
}

func FuzzReadme(f *testing.F) {
	for _, s := range []string{"# T\n\nText.", "Title\n===\nx", "<p>a</p>", "```\n", "---\na\n---\nb", "[![a](b)](c)\n\n中文，\n段落"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := firstParagraph(s)
		if p != Clean(p, maxReadme) {
			t.Errorf("firstParagraph(%q) = %q is not clean", s, p)
		}
	})
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"a\x1b[31mb", "\u202ex", "中文", "\x1b]8;;u\x07t", "a  b", "\xff\u009b1m"} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 1000
		c := Clean(s, max)
		if Clean(c, max) != c {
			t.Errorf("Clean(%q, %d) = %q is not idempotent", s, max, c)
		}
		if c != Clean(c, 0) {
			t.Errorf("Clean(%q, %d) = %q still needs cleaning", s, max, c)
		}
		if n := len([]rune(c)); max > 0 && n > max {
			t.Errorf("Clean(%q, %d) has %d runes", s, max, n)
		}
		if strings.HasPrefix(c, " ") || strings.HasSuffix(c, " ") || strings.Contains(c, "  ") {
			t.Errorf("Clean(%q) = %q: white space left", s, c)
		}
	})
}

// FuzzGit runs the git file parsers on any HEAD and config, and checks
// what stripCredentials promises on remotes built from fuzzed parts in
// every form a secret takes (scheme://user:SECRET@, scp-like
// user:SECRET@host:path, an http token as the user, a token in the query):
// read back from a config file by gitRemote and stripped, the secret is
// gone. The seeds hold every form, so a plain `go test` already fails if
// stripCredentials lets one through.
func FuzzGit(f *testing.F) {
	f.Add([]byte("ref: refs/heads/main\n"), []byte("[remote \"origin\"]\n\turl = https://u:p@h/r\n"), uint8(0), uint8(0), "alice", "hunter2", "github.com/acme/w.git")
	f.Add([]byte("gitdir: /x"), []byte("[remote.origin]\nurl=\"a;b\" # c\n"), uint8(1), uint8(2), "git", "pw", "host:acme/w.git")
	f.Add([]byte(""), []byte(""), uint8(2), uint8(0), "", "ghp_abc123", "github.com/acme/w")
	f.Add([]byte(""), []byte(""), uint8(3), uint8(1), "x", "tok", "example.com/r.git")
	f.Add([]byte(""), []byte(""), uint8(0), uint8(2), "git", "pa", "host:2222/r.git")
	f.Fuzz(func(t *testing.T, head, config []byte, form, scheme uint8, user, secret, hostPath string) {
		parseHead(head)
		gitdirLine(head)
		url := gitRemote(config)
		if s := stripCredentials(url); stripCredentials(s) != s {
			t.Errorf("stripCredentials(%q) = %q is not idempotent", url, s)
		}

		// A remote with a secret, as a config file holds it.
		secret = "S3cr3t" + plain(secret, "", false)
		user, hostPath = plain(user, "u", false), "h"+plain(hostPath, "", true)
		if strings.Contains(user+hostPath, "S3cr3t") {
			return
		}
		schemes := []string{"https", "http", "ssh", "git+ssh", "ftp"}
		sc := schemes[int(scheme)%len(schemes)]
		var remote string
		switch form % 4 {
		case 0: // scheme://user:SECRET@host/path
			remote = sc + "://" + user + ":" + secret + "@" + hostPath
		case 1: // scp-like: user:SECRET@host:path
			remote = user + ":" + secret + "@" + strings.Replace(hostPath, "/", ":", 1)
		case 2: // an http token as the user: https://SECRET@host/path
			remote = []string{"https", "http"}[int(scheme)%2] + "://" + secret + "@" + hostPath
		case 3: // a token in the query or fragment
			remote = sc + "://" + hostPath + "?access_token=" + secret + "#" + secret
		}
		cfg := "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = \"" + remote + "\" ; a comment\n"
		if got := gitRemote([]byte(cfg)); got != remote {
			t.Fatalf("gitRemote read %q, want %q", got, remote)
		}
		if s := stripCredentials(remote); strings.Contains(s, secret) {
			t.Errorf("stripCredentials(%q) = %q keeps the secret", remote, s)
		}
	})
}

// plain keeps the bytes of s that can stand in a URL's user or password
// (or, with slash, its host and path) without ending them early (no @ : ?
// # or white space, no quoting): def when nothing is left.
func plain(s, def string, slash bool) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_', r == '~', r == '/' && slash:
			return r
		}
		return -1
	}, s)
	if s == "" {
		return def
	}
	return s
}

func FuzzHint(f *testing.F) {
	f.Add([]byte(`{"name":"a","aliases":["b"],"tags":[],"related":["c"],"run":"x"}`))
	f.Add([]byte(`  {}  `))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseHint(b)
		if err != nil && fmt.Sprint(h) != fmt.Sprint(hintFile{}) {
			t.Errorf("error %v with a result %+v", err, h)
		}
	})
}
