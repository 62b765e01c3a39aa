package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// liveFixture writes a valid config whose deny root is deny (padded so
// that every variant has the same size) and returns its path.
func liveFixture(t *testing.T, dir, path, deny string) {
	t.Helper()
	body := `{"version":1,"dataDir":"` + dir + `/data","discovery":{"roots":["` + dir + `"]},"sharing":{"roots":["` + dir + `"],"denyRoots":["` + dir + "/" + deny + `"]}}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func denied(t *testing.T, l *Live) string {
	t.Helper()
	c, err := l.Current()
	if err != nil || c == nil {
		t.Fatalf("Current: %v", err)
	}
	return filepath.Base(c.Sharing.DenyRoots[0])
}

// waitTick waits until the file system's clock has moved past the status
// change time of path (ext4's follows the kernel's coarse clock): a later
// change then gets another ctime. It waits on the clock, never for a fixed
// time.
func waitTick(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	_, _, was := fileIdentity(fi)
	probe := path + ".tick"
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		pi, err := os.Stat(probe)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, now := fileIdentity(pi); now > was {
			os.Remove(probe)
			return
		}
	}
	t.Fatal("the file system's clock did not move")
}

// copyKeepingTime does what `cp -p` does to an existing file: the new
// content written in place, then the source's times put back.
func copyKeepingTime(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(to, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// A config of the same size written with the old modification time (`cp
// -p`, `rsync -a`, `tar`) is another file: its status-change time moved
// (issue 23, case 7). The stamp is trusted here (no racy window).
func TestLiveSeesSameStampCopy(t *testing.T) {
	old := racyConfig
	racyConfig = 0
	defer func() { racyConfig = old }()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	liveFixture(t, dir, path, "aaa")
	if fi, _ := os.Stat(path); fi != nil {
		if _, _, ctime := fileIdentity(fi); ctime == 0 {
			t.Skip("no status-change time on this platform")
		}
	}
	other := filepath.Join(dir, "other.json")
	liveFixture(t, dir, other, "bbb")
	past := time.Now().Add(-time.Hour)
	for _, p := range []string{path, other} {
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(path, cfg, nil, nil)
	if got := denied(t, l); got != "aaa" {
		t.Fatalf("denies %s", got)
	}
	if got := denied(t, l); got != "aaa" { // the doubt of the start is gone
		t.Fatalf("denies %s", got)
	}
	if l.doubt {
		t.Fatal("an old file's stamp is still in doubt")
	}
	waitTick(t, path)
	copyKeepingTime(t, other, path)
	if fi, _ := os.Stat(path); !fi.ModTime().Equal(past) || fi.Size() != int64(len(readAll(t, other))) {
		t.Fatal("fixture: the copy did not keep size and time")
	}
	if got := denied(t, l); got != "bbb" {
		t.Fatalf("after a same-size copy with the old time, still denies %s", got)
	}
}

// A rewrite within one clock tick can leave every field of a stat as it
// was (same size, a put-back mtime, a ctime in the same tick, the same
// inode): a stamp taken within racyConfig of the file's last change is in
// doubt, and the content decides.
func TestLiveSeesRewriteInTheSameTick(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	liveFixture(t, dir, path, "aaa")
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(path, cfg, nil, nil)
	if got := denied(t, l); got != "aaa" {
		t.Fatalf("denies %s", got)
	}
	if !l.doubt {
		t.Fatal("a stamp of a file written just now is trusted")
	}
	liveFixture(t, dir, path, "bbb")
	// What a stat in the same tick would say: exactly the stamp held.
	l.mu.Lock()
	l.stamp = statConfig(path)
	l.mu.Unlock()
	if got := denied(t, l); got != "bbb" {
		t.Fatalf("a rewrite the stat cannot see: still denies %s", got)
	}
	// Unchanged content in doubt: no reload (the same *Config).
	a, _ := l.Current()
	b, _ := l.Current()
	if a != b {
		t.Error("an unchanged file was loaded again")
	}
}

// The config file is read without waiting on what stands there: a FIFO
// in its place is an error that says so (the last valid config stays).
func TestLiveRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	liveFixture(t, dir, path, "aaa")
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(path, cfg, nil, nil)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(path); err != nil {
		t.Skip("mkfifo:", err)
	}
	c, err := l.Current()
	if c != cfg || err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a FIFO config: %v %v", c, err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Load of a FIFO: %v", err)
	}
}

func readAll(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
