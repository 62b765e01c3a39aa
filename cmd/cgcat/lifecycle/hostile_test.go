//go:build linux

package lifecycle

// Hostile files among the operations (issue 23): a FIFO under a project,
// and a config edit a stat of mtime and size cannot see.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func (r *run) hostileOps() []op {
	live := func() bool { return len(r.m.live()) > 0 }
	always := func() bool { return true }
	return []op{
		{"fifo-under-project", 2, live, r.opFIFOUnderProject},
		{"same-stamp-config", 3, always, r.opSameStampConfig},
	}
}

// opFIFOUnderProject gives a live project a .git file naming a git dir
// whose commondir is a FIFO that no one ever writes to, and a FIFO beside
// its manifest. A plain open of either waits for ever: every scan and
// serve must go on, listing the project and the healthy ones beside it
// (the settles and answer checks say so).
func (r *run) opFIFOUnderProject() {
	p := r.pick(func(*proj) bool { return true })
	if p == nil {
		return
	}
	gd := r.w.abs(fmt.Sprintf("gitdirs/%d-%d", p.key, r.step))
	must(r, os.MkdirAll(gd, 0o755))
	must(r, os.WriteFile(filepath.Join(gd, "HEAD"), []byte("ref: refs/heads/fifo\n"), 0o644))
	if err := syscall.Mkfifo(filepath.Join(gd, "commondir"), 0o644); err != nil {
		r.t.Fatalf("mkfifo: %v", err)
	}
	must(r, os.WriteFile(filepath.Join(p.path, ".git"), []byte("gitdir: "+gd+"\n"), 0o644))
	pipe := filepath.Join(p.path, "events.pipe")
	if _, err := os.Lstat(pipe); err != nil {
		if err := syscall.Mkfifo(pipe, 0o644); err != nil {
			r.t.Fatalf("mkfifo: %v", err)
		}
	}
	r.log("fifo under project #%d at %s: .git names %s, whose commondir is a FIFO; and a FIFO events.pipe", p.key, r.rel(p.path), r.rel(gd))
}

// opSameStampConfig changes the config (a deny root toggled) the way `cp
// -p`, `rsync -a` or `tar` would put a prepared file in place: written in
// place, padded to the old size when it is not longer, and the old
// modification time put back. Every process must apply it before its next
// answer (R37), as for any other edit.
func (r *run) opSameStampConfig() {
	fi, err := os.Stat(r.w.cfgPath)
	if err != nil {
		r.t.Fatal(err)
	}
	d := r.w.deny[r.rng.IntN(len(r.w.deny))]
	r.c.deny[d.key] = !r.c.deny[d.key]
	// The new content, rendered as the world writes it, to a side file.
	side := *r.w
	side.cfgPath = r.w.cfgPath + ".next"
	must(r, side.writeConfig(r.c, r.gbConf))
	b, err := os.ReadFile(side.cfgPath)
	must(r, err)
	must(r, os.Remove(side.cfgPath))
	sameSize := int64(len(b)) <= fi.Size()
	if sameSize {
		b = append(b, strings.Repeat(" ", int(fi.Size())-len(b))...)
	}
	f, err := os.OpenFile(r.w.cfgPath, os.O_WRONLY|os.O_TRUNC, 0)
	must(r, err)
	_, err = f.Write(b)
	must(r, err)
	must(r, f.Close())
	must(r, os.Chtimes(r.w.cfgPath, fi.ModTime(), fi.ModTime()))
	how := "same size and mtime"
	if !sameSize {
		how = fmt.Sprintf("same mtime, %d bytes longer", int64(len(b))-fi.Size())
	}
	r.configWritten(fmt.Sprintf("deny root %s (%s) %v, written in place with the old stamp (%s, as cp -p; mtime %s)", d.key, d.how, r.c.deny[d.key], how, fi.ModTime().Format(time.RFC3339Nano)))
}
