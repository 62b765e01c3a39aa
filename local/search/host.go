package search

import (
	"strings"
)

// Host-only query words name where code is hosted or published, not what it
// is. Every Go module path starts with one (github.com/…), and npm, PyPI and
// repository URLs wrap a package name in them, so as plain terms they would
// make every package from that host match ("github.com/spf13/cobra"
// returning snappy and uuid). In a query that has other words they are
// qualifiers: they never make a document a hit and do not count in
// coordination, but they add a little to documents that match the other
// words (a Go module outranks a Python project of the same name for
// "github.com/x/name"). A query of nothing else searches for them as usual
// ("npm" finds the npm CLI).
//
// The list is deliberately short and literal. Domains are the big public
// code hosts and package registries: they are shared by thousands of
// unrelated projects. Vanity import hosts (golang.org, go.uber.org, k8s.io)
// are not on it: they name one owner, like a GitHub organisation, and a
// query for them should find that owner's projects. Bare words are the
// registries' and hosts' own names and the parts of a URL that never name
// a project (http, https, www, com, org, net, io as words on their own —
// "socket.io" stays one compound word and is not touched). Command words
// count only in their command ("npm install x", "go get x", "pip install
// x"): "go" and "pip" alone are words people search for.
var hostDomains = set(
	"github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "gitee.com", "sr.ht", "git.sr.ht",
	"sourceforge.net", "npmjs.com", "npmjs.org", "registry.npmjs.org", "yarnpkg.com", "pypi.org",
	"pypi.python.org", "files.pythonhosted.org", "crates.io", "docs.rs", "lib.rs", "pkg.go.dev",
	"proxy.golang.org", "rubygems.org", "packagist.org", "nuget.org", "hub.docker.com", "docker.io",
	"maven.org", "search.maven.org", "repo1.maven.org", "mvnrepository.com",
)

var hostWords = set(
	"github", "gitlab", "bitbucket", "codeberg", "gitee", "sourcehut", "npm", "npmjs", "pypi",
	"crates", "rubygems", "packagist", "nuget", "http", "https", "www", "com", "org", "net", "io",
)

// registryPaths are the path words of a registry's package page
// (npmjs.com/package/x, pypi.org/project/x): host words only right after
// the registry's domain.
var registryPaths = set("package", "packages", "project", "crates", "gems", "r", "pypi")

// commands are package-manager commands with the verbs that name a package
// after them.
var commands = map[string][]string{
	"npm": {"install", "i", "add"}, "pnpm": {"install", "i", "add"}, "yarn": {"add"}, "bun": {"install", "i", "add"},
	"pip": {"install"}, "pip3": {"install"}, "uv": {"add"}, "cargo": {"add", "install"}, "go": {"get", "install"},
	"gem": {"install"},
}

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// hostGroups marks which of the query's groups (lowercased group texts, in
// order) are host-only.
func hostGroups(texts []string) []bool {
	host := make([]bool, len(texts))
	for i, t := range texts {
		d := strings.TrimPrefix(t, "www.")
		switch {
		case hostDomains[d] || hostWords[t]:
			host[i] = true
		case i > 0 && registryPaths[t] && hostDomains[strings.TrimPrefix(texts[i-1], "www.")]:
			host[i] = true
		}
		if i > 0 {
			for _, verb := range commands[texts[i-1]] {
				if t == verb {
					host[i-1], host[i] = true, true
				}
			}
		}
	}
	return host
}

// trimURL removes what a URL adds around a repository or package path: the
// scheme with a URL's query and fragment, user info (an scp-like
// "git@host:" becomes "host/"), a trailing slash and ".git".
func trimURL(s string) string {
	t := s
	if i := strings.Index(t, "://"); i > 0 && strings.Trim(strings.ToLower(t[:i]), "abcdefghijklmnopqrstuvwxyz+") == "" {
		t = t[i+3:]
		if i := strings.IndexAny(t, "?#"); i >= 0 {
			t = t[:i] // only in a URL: "c#" is a word
		}
	} else if at := strings.IndexByte(t, '@'); at > 0 && !strings.ContainsAny(t[:at], "/: ") {
		// git@github.com:owner/repo
		if c := strings.IndexByte(t[at:], ':'); c > 0 && !strings.Contains(t[at:at+c], "/") {
			t = t[at+1:at+c] + "/" + t[at+c+1:]
		}
	}
	if at := strings.IndexByte(t, '@'); at > 0 && !strings.ContainsAny(t[:at], "/ ") && strings.Contains(t[at:], "/") {
		t = t[at+1:] // user@host/path
	}
	t = strings.TrimRight(t, "/")
	if strings.Contains(t, "/") && strings.HasSuffix(strings.ToLower(t), ".git") {
		t = t[:len(t)-4]
	}
	return t
}

// registryPages maps a registry page's prefix to how many path segments of
// the rest name the package (0: all of it).
var registryPages = []struct {
	prefix string
	segs   int
}{
	{"npmjs.com/package/", 1}, {"npmjs.org/package/", 1}, {"yarnpkg.com/package/", 1},
	{"pypi.org/project/", 1}, {"pypi.python.org/pypi/", 1}, {"crates.io/crates/", 1}, {"docs.rs/", 1},
	{"lib.rs/crates/", 1}, {"pkg.go.dev/", 0}, {"rubygems.org/gems/", 1}, {"nuget.org/packages/", 1},
	{"packagist.org/packages/", 2}, {"hub.docker.com/r/", 2},
}

// unwrap returns the package name a query wraps in a URL, a registry page or
// an install command ("https://github.com/a/b.git" → "github.com/a/b",
// "https://www.npmjs.com/package/@s/x" → "@s/x", "npm install x" → "x",
// "pypi x" → "x"), or "" when the query wraps nothing. The exact tiers try
// it beside the query itself.
func unwrap(s string) string {
	t := strings.TrimSpace(s)
	if f := strings.Fields(t); len(f) == 3 {
		for _, verb := range commands[strings.ToLower(f[0])] {
			if strings.ToLower(f[1]) == verb {
				t = f[2]
			}
		}
	} else if len(f) == 2 && hostWords[strings.ToLower(f[0])] {
		t = f[1] // "npm x", "pypi x"
	}
	for _, p := range []string{"npm:", "pypi:"} {
		if len(t) > len(p) && strings.EqualFold(t[:len(p)], p) {
			t = t[len(p):]
		}
	}
	t = trimURL(t)
	if len(t) > 4 && strings.EqualFold(t[:4], "www.") {
		t = t[4:]
	}
	for _, rp := range registryPages {
		if len(t) <= len(rp.prefix) || !strings.EqualFold(t[:len(rp.prefix)], rp.prefix) {
			continue
		}
		t = t[len(rp.prefix):]
		segs := rp.segs
		if strings.HasPrefix(t, "@") && segs == 1 {
			segs = 2 // an npm scope
		}
		if parts := strings.Split(t, "/"); segs > 0 && len(parts) > segs {
			t = strings.Join(parts[:segs], "/")
		}
		if rp.segs == 0 {
			// pkg.go.dev/path@version
			if at := strings.LastIndexByte(t, '@'); at > strings.LastIndexByte(t, '/') {
				t = t[:at]
			}
		}
		break
	}
	if t == "" || t == strings.TrimSpace(s) {
		return ""
	}
	return t
}
