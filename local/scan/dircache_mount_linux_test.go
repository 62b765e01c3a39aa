package scan

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mountOrSkip mounts (as root; the test is skipped where mounting is not
// allowed) and unmounts when the test ends.
func mountOrSkip(t *testing.T, src, dst, fstype string, flags uintptr, data string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	if err := unix.Mount(src, dst, fstype, flags, data); err != nil {
		t.Skipf("cannot mount %s on %s here: %v", src, dst, err)
	}
	t.Cleanup(func() { unmount(t, dst) })
}

func unmount(t *testing.T, dst string) {
	t.Helper()
	if err := unix.Unmount(dst, unix.MNT_DETACH); err != nil && err != unix.EINVAL {
		t.Errorf("unmount %s: %v", dst, err)
	}
}

// TestDirCacheBindMount: a folder covered by a bind mount (or a tmpfs)
// between passes changes neither its own times nor its parent's, and the
// folder the walk opens there is another one. The pass finds what is under
// the mount, and after the unmount what is under the folder again.
func TestDirCacheBindMount(t *testing.T) {
	noRacyStamps(t) // passes made at different moments are compared, stamps too
	const m = 40 * time.Millisecond
	root := cacheTree(t)
	needCache(t, root)
	opt := testOptions(root)
	st := newStore(t)
	time.Sleep(2 * m)
	runPass(t, st, opt, margin(m))
	b := filepath.Join(root, "a", "b")
	// a/b shows d now (d's folders are in the cache too, under d's
	// identity), and h a fresh tmpfs holding a project.
	mountOrSkip(t, filepath.Join(root, "d"), b, "", unix.MS_BIND, "")
	h := filepath.Join(root, "h")
	mountOrSkip(t, "tmpfs", h, "tmpfs", 0, "size=1m")
	mkProject(t, filepath.Join(h, "q"))
	time.Sleep(2 * m)
	r := runPass(t, st, opt, margin(m))
	sameFindings(t, "mounted", r, uncached(t, opt))
	wantPresent(t, r, filepath.Join(b, "p4"), filepath.Join(h, "q"))
	wantGone(t, r, filepath.Join(b, "p2"), filepath.Join(b, "c", "p3"))
	time.Sleep(2 * m)
	r = runPass(t, st, opt, margin(m))
	sameFindings(t, "mounted, again", r, uncached(t, opt))
	if r.listed != 0 {
		t.Fatalf("a pass over the unchanged mounted tree listed %d directories", r.listed)
	}
	unmount(t, b)
	unmount(t, h)
	time.Sleep(2 * m)
	r = runPass(t, st, opt, margin(m))
	sameFindings(t, "unmounted", r, uncached(t, opt))
	wantPresent(t, r, filepath.Join(b, "p2"), filepath.Join(b, "c", "p3"))
	wantGone(t, r, filepath.Join(b, "p4"), filepath.Join(h, "q"))
}

// TestDirCacheUntrustedFileSystem: folders on a file system that is not
// known to keep directory times (ramfs here; NFS, FUSE, overlays and FAT
// are the real ones) are listed on every pass.
func TestDirCacheUntrustedFileSystem(t *testing.T) {
	noRacyStamps(t) // passes made at different moments are compared, stamps too
	const m = 40 * time.Millisecond
	root := cacheTree(t)
	needCache(t, root)
	h := filepath.Join(root, "h")
	mountOrSkip(t, "ramfs", h, "ramfs", 0, "")
	mkProject(t, filepath.Join(h, "q", "r"))
	opt := testOptions(root)
	st := newStore(t)
	time.Sleep(2 * m)
	runPass(t, st, opt, margin(m))
	time.Sleep(2 * m)
	r := runPass(t, st, opt, margin(m))
	sameFindings(t, "ramfs", r, uncached(t, opt))
	wantPresent(t, r, filepath.Join(h, "q", "r"))
	if r.listed != 3 { // h, q, r: the rest of the tree came from the cache
		t.Fatalf("%d directories listed, want the 3 on ramfs", r.listed)
	}
}
