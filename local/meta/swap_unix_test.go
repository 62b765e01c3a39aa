//go:build unix

package meta_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/cgcat/cgcat/local/nofollow/nofollowtest"
)

// TestReadDirAfterSwap: once the scanner has opened a project root, a swap
// of that root (or of its .git or codegraph directory) for a symlink to
// another project cannot make ReadDir read the other project's files.
func TestReadDirAfterSwap(t *testing.T) {
	files := func(word string) map[string]string {
		return map[string]string{
			"package.json":           `{"name":"` + word + `-pkg","description":"` + word + ` description"}`,
			"README.md":              word + " readme.\n",
			".git/HEAD":              "ref: refs/heads/" + word + "\n",
			".git/config":            "[remote \"origin\"]\n\turl = https://example.com/" + word + ".git\n",
			"codegraph/project.json": `{"aliases":["` + word + `-alias"]}`,
		}
	}
	secret := tree(t, "secret", files("secretword"))
	proj := tree(t, "proj", files("public"))
	w := nofollowtest.Watch(t, secret, filepath.Join(secret, "README.md"))

	d, err := nofollow.OpenDir(proj)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// Swap the root and its subdirectories for symlinks into the secret
	// project, after the open.
	for _, sub := range []string{".git", "codegraph"} {
		if err := os.Rename(filepath.Join(proj, sub), filepath.Join(proj, sub+".old")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(secret, sub), filepath.Join(proj, sub)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(proj, proj+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, proj); err != nil {
		t.Fatal(err)
	}
	m := meta.ReadDir(d, meta.Limits{})
	b, _ := json.Marshal(m)
	if strings.Contains(string(b), "secretword") {
		t.Errorf("read the other project's files: %s", b)
	}
	if m.Name != "public-pkg" || m.Readme != "public readme." {
		t.Errorf("the opened root's own files were not read: %s", b)
	}
	// .git and codegraph are symlinks out of the root now: skipped, said so.
	for _, f := range []string{".git", "codegraph/project.json"} {
		if !strings.Contains(strings.Join(m.Problems, "\n"), f+": symlink points outside the project, skipped") {
			t.Errorf("no problem for %s: %q", f, m.Problems)
		}
	}
	if w != nil {
		if seen := w.Seen(); len(seen) > 0 {
			t.Errorf("the other project was read: %q", seen)
		}
	}
	// By path, the swapped root is refused rather than followed.
	m = meta.Read(proj, meta.Limits{})
	if b, _ := json.Marshal(m); strings.Contains(string(b), "secretword") || len(m.Problems) != 1 || !strings.Contains(m.Problems[0], "symlink") {
		t.Errorf("Read of a symlinked root: %s", b)
	}
}
