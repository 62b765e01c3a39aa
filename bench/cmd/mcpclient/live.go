//go:build unix

package main

// mcpclient live -config C -root R -data D [-events 50] [-idle 60s] [-bulk 100] [-storm 20000]
//
// The catalog follows the disk (issue 22): two serves on one data dir over
// the tree of the config, with no refresh asked. It measures, in each
// serve, the time from mkdir / mv / rm of a project to the first answer
// that shows it (p50/p99 over the events); 100 projects appearing at once
// (an archive renamed into place) to the answer that shows the last of
// them; the idle CPU and memory of both serves while nothing changes; the
// watches used; and the time to converge after a storm of directories
// past the watcher's bound (its events overflow, everything is walked
// again).

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type watchFile struct {
	Pid       int    `json:"pid"`
	Mode      string `json:"mode"`
	Live      bool   `json:"live"`
	Pending   bool   `json:"pending"`
	Watches   int    `json:"watches"`
	Overflows uint64 `json:"overflows"`
}

func readWatch(data string) watchFile {
	var w watchFile
	b, _ := os.ReadFile(filepath.Join(data, "watch.state"))
	_ = json.Unmarshal(b, &w)
	return w
}

func waitLive(data string, limit time.Duration) (watchFile, error) {
	deadline := time.Now().Add(limit)
	for {
		w := readWatch(data)
		if w.Mode == "events" && w.Live && !w.Pending {
			return w, nil
		}
		if time.Now().After(deadline) {
			return w, fmt.Errorf("no live watcher after %s: %+v", limit, w)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mkProject(dir, name string) {
	must(os.MkdirAll(filepath.Join(dir, ".codegraph"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"`+name+`","description":"live bench `+name+`"}`), 0o644))
	must(os.WriteFile(filepath.Join(dir, ".codegraph", "codegraph.db"), append([]byte("SQLite format 3\x00"), make([]byte, 4080)...), 0o644))
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// shows reports whether the answer for name has a present project at path
// (want) or has none there (!want).
func (s *server) shows(name, path string, want bool) bool {
	e, err := s.projects(map[string]any{"query": name, "limit": 50})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range e.Projects {
		if p.ProjectPath != nil && *p.ProjectPath == path {
			return want
		}
	}
	return !want
}

// await polls every serve until each shows the change; it returns each
// serve's latency from t0.
func await(serves []*server, t0 time.Time, name, path string, want bool) []time.Duration {
	lat := make([]time.Duration, len(serves))
	left := len(serves)
	deadline := t0.Add(2 * time.Minute)
	for left > 0 {
		for i, s := range serves {
			if lat[i] == 0 && s.shows(name, path, want) {
				lat[i] = time.Since(t0)
				left--
			}
		}
		if time.Now().After(deadline) {
			log.Fatalf("%s at %s (present %v) not shown within 2 minutes", name, path, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return lat
}

func runLive(bin, cfg, root, data string, events, bulk, storm int, idle time.Duration) {
	var serves []*server
	for range 2 {
		s, err := startServer(bin, cfg)
		if err != nil {
			log.Fatal(err)
		}
		defer s.stop()
		serves = append(serves, s)
	}
	t0 := time.Now()
	w, err := waitLive(data, 10*time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "watcher live %s after start (pid %d, %d watches)\n", time.Since(t0).Round(time.Millisecond), w.Pid, w.Watches)
	watcher, other := serves[0], serves[1]
	if other.cmd.Process.Pid == w.Pid {
		watcher, other = other, watcher
	}
	liveIdle(watcher, other, w, idle)
	area := liveEvents(serves, root, events)
	dest := liveBulk(serves, root, bulk)
	sd := liveStorm(serves, watcher, root, data, storm)
	must(os.RemoveAll(sd))
	must(os.RemoveAll(dest))
	must(os.RemoveAll(area))
	if strings.TrimSpace(watcher.stderr.String()) != "" {
		fmt.Fprintf(os.Stderr, "watching serve's stderr:\n%s\n", watcher.stderr.String())
	}
}

// liveIdle measures both serves while nothing changes for the idle window:
// CPU, memory, and the watches used.
func liveIdle(watcher, other *server, w watchFile, idle time.Duration) {
	time.Sleep(5 * time.Second)
	c0w, c0o := procCPU(watcher.cmd.Process.Pid), procCPU(other.cmd.Process.Pid)
	time.Sleep(idle)
	cw, co := procCPU(watcher.cmd.Process.Pid)-c0w, procCPU(other.cmd.Process.Pid)-c0o
	mw, mo := smaps(watcher.cmd.Process.Pid), smaps(other.cmd.Process.Pid)
	fmt.Printf("| idle %s | watching serve | %.2f %% of a core | PSS %.1f MB | RSS %.1f MB | %d watches |\n", idle, 100*cw.Seconds()/idle.Seconds(), mw["Pss"], mw["Rss"], w.Watches)
	fmt.Printf("| idle %s | other serve | %.2f %% of a core | PSS %.1f MB | RSS %.1f MB | |\n", idle, 100*co.Seconds()/idle.Seconds(), mo["Pss"], mo["Rss"])
}

// liveEvents makes a new project, moves it and removes it, events times,
// and prints each serve's latency for each kind. It returns the directory
// the events happened in.
func liveEvents(serves []*server, root string, events int) (area string) {
	lat := map[string][][]time.Duration{}
	area = filepath.Join(root, "live-bench")
	must(os.MkdirAll(area, 0o755))
	time.Sleep(500 * time.Millisecond)
	for i := range events {
		name := fmt.Sprintf("livebench-%d-%d", os.Getpid(), i)
		p := filepath.Join(area, name)
		staging := filepath.Join(filepath.Dir(root), ".live-staging-"+name)
		mkProject(staging, name)
		t := time.Now()
		must(os.Rename(staging, p)) // appears whole, as `mkdir` + `codegraph init` finished
		lat["mkdir"] = append(lat["mkdir"], await(serves, t, name, p, true))
		moved := p + "-moved"
		t = time.Now()
		must(os.Rename(p, moved))
		lat["mv"] = append(lat["mv"], await(serves, t, name, moved, true))
		t = time.Now()
		must(os.RemoveAll(moved))
		lat["rm (record missing)"] = append(lat["rm (record missing)"], await(serves, t, name, moved, false))
	}
	for _, kind := range []string{"mkdir", "mv", "rm (record missing)"} {
		for si, who := range []string{"serve 1", "serve 2"} {
			var d []time.Duration
			for _, l := range lat[kind] {
				d = append(d, l[si])
			}
			fmt.Printf("| %s | %s | p50 %.0f ms | p99 %.0f ms | max %.0f ms | %d events |\n", kind, who, ms(pct(d, 0.5)), ms(pct(d, 0.99)), ms(pct(d, 1)), len(d))
		}
	}
	return area
}

// liveBulk renames an archive of bulk projects into place at once and
// prints when the last of them shows. It returns where they landed.
func liveBulk(serves []*server, root string, bulk int) (dest string) {
	staging := filepath.Join(filepath.Dir(root), fmt.Sprintf(".live-bulk-%d", os.Getpid()))
	var names []string
	for i := range bulk {
		name := fmt.Sprintf("livebulk-%d-%d", os.Getpid(), i)
		mkProject(filepath.Join(staging, "pkgs", name), name)
		names = append(names, name)
	}
	dest = filepath.Join(root, fmt.Sprintf("unpacked-%d", os.Getpid()))
	t := time.Now()
	must(os.Rename(staging, dest))
	// One rename, one patch: the last name stands for all; the others are
	// checked right after, without waiting.
	worst := await(serves, t, names[len(names)-1], filepath.Join(dest, "pkgs", names[len(names)-1]), true)
	for _, name := range names {
		for _, s := range serves {
			if !s.shows(name, filepath.Join(dest, "pkgs", name), true) {
				log.Fatalf("%s not shown once the last of the bulk was", name)
			}
		}
	}
	fmt.Printf("| %d projects at once | serve 1 / serve 2 | all visible after %.0f / %.0f ms | | | |\n", bulk, ms(worst[0]), ms(worst[1]))
	return dest
}

// liveStorm stops the watching serve (a busy or suspended process) while
// more directories appear than the kernel queues events for
// (fs.inotify.max_queued_events); it overflows, and walks everything again
// once it runs. It prints the time to converge and returns the storm's
// directory.
func liveStorm(serves []*server, watcher *server, root, data string, storm int) (sd string) {
	before := readWatch(data)
	sd = filepath.Join(root, fmt.Sprintf("storm-%d", os.Getpid()))
	must(os.Mkdir(sd, 0o755))
	time.Sleep(500 * time.Millisecond)
	must(watcher.cmd.Process.Signal(syscall.SIGSTOP))
	for i := range storm {
		must(os.Mkdir(filepath.Join(sd, fmt.Sprintf("d%06d", i)), 0o755))
	}
	name := fmt.Sprintf("livestorm-%d", os.Getpid())
	sp := filepath.Join(sd, "d000000", name)
	mkProject(sp, name)
	t := time.Now()
	must(watcher.cmd.Process.Signal(syscall.SIGCONT))
	l := await(serves, t, name, sp, true)
	after, err := waitLive(data, 10*time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("| storm of %d directories while the watcher was stopped | serve 1 / serve 2 | converged %.0f / %.0f ms after it resumed | overflows %d → %d | watches %d | |\n", storm, ms(l[0]), ms(l[1]), before.Overflows, after.Overflows, after.Watches)
	return sd
}
