// Command testsum runs `go test -json` with the arguments it is given
// (./... when none) and prints what a person waiting for it needs: one line
// per package as it ends, with the time since the start and how many
// packages are done; every 30 s without news, which packages are still
// running and for how long; the output of every failed test, and of a
// package that did not build; and at the end the totals and what failed.
// It exits with go test's status. Unless told otherwise it gives each
// package an hour (-timeout=1h) instead of go test's 10 minutes.
//
//	go run ./internal/testsum ./...            # the README's test command
//	go run ./internal/testsum -short ./local/...
//
// It owns only this summary: it never changes what go test runs or checks.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		args = []string{"./..."}
	}
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-timeout") }) {
		// go test gives a package 10 minutes by default; the process
		// suites under cmd/cgcat take 6 on a loaded 2-core machine and
		// more beside other CPU-bound jobs, where the default killed them
		// (and the -race store tests) while they were still passing.
		args = append([]string{"-timeout=1h"}, args...)
	}
	total := countPackages(args)
	cmd := exec.Command("go", append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	s := newSummary(os.Stdout, total)
	s.say("go test %s", strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	events := make(chan event)
	go decode(out, events, s)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case e, ok := <-events:
			if !ok {
				done = true
				break
			}
			s.add(e)
		case <-tick.C:
			s.heartbeat(30 * time.Second)
		}
	}
	werr := cmd.Wait()
	ok := s.finish()
	if werr != nil || !ok {
		os.Exit(1)
	}
}

// event is one line of `go test -json` (test2json's TestEvent).
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string // build-output and build-fail events
}

func decode(r io.Reader, events chan<- event, s *summary) {
	defer close(events)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			// Not an event (a line go test printed as it is).
			e = event{Action: "output", Output: sc.Text() + "\n"}
		}
		events <- e
	}
}

// countPackages asks go list how many packages the patterns in args name
// (0 when it cannot tell: the count is only shown).
func countPackages(args []string) int {
	var patterns []string
	valued := map[string]bool{"-run": true, "-skip": true, "-count": true, "-timeout": true, "-p": true, "-parallel": true,
		"-tags": true, "-bench": true, "-benchtime": true, "-cpu": true, "-coverprofile": true, "-exec": true, "-ldflags": true, "-gcflags": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-args":
			i = len(args)
		case valued[a]:
			i++
		case !strings.HasPrefix(a, "-"):
			patterns = append(patterns, a)
		}
	}
	out, err := exec.Command("go", append([]string{"list", "-e"}, patterns...)...).Output()
	if err != nil {
		return 0
	}
	return strings.Count(string(out), "\n")
}

// summary keeps what the events said so far.
type summary struct {
	w        io.Writer
	start    time.Time
	last     time.Time // when a line was last printed
	total    int
	done     int
	running  map[string]time.Time // package → when it started
	output   map[string][]string  // "pkg\x00test" → its output lines
	pkgOut   map[string][]string  // package-level output (build errors, panics)
	failed   []string             // "pkg TestName" and "pkg (build)" in order
	why      map[string][]string  // failed entry → the output that says why
	skipped  []string             // "pkg TestName: why"
	tests    map[string]int       // action → count of tests
	packages map[string]int       // action → count of packages
}

func newSummary(w io.Writer, total int) *summary {
	now := time.Now()
	return &summary{w: w, start: now, last: now, total: total, running: map[string]time.Time{},
		output: map[string][]string{}, pkgOut: map[string][]string{}, why: map[string][]string{}, tests: map[string]int{}, packages: map[string]int{}}
}

func (s *summary) say(format string, a ...any) {
	fmt.Fprintf(s.w, "[%7s] %s\n", clock(time.Since(s.start)), fmt.Sprintf(format, a...))
	s.last = time.Now()
}

func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

func (s *summary) add(e event) {
	switch {
	case e.Action == "build-output":
		s.pkgOut[e.ImportPath] = append(s.pkgOut[e.ImportPath], e.Output)
	case e.Action == "build-fail":
		s.fail(e.ImportPath+" (build)", s.pkgOut[e.ImportPath])
		s.say("FAIL %s does not build", short(e.ImportPath))
		for _, l := range s.pkgOut[e.ImportPath] {
			fmt.Fprint(s.w, "        "+l)
		}
		delete(s.pkgOut, e.ImportPath)
	case e.Package == "":
		if e.Output != "" {
			fmt.Fprint(s.w, e.Output) // go test's own words (e.g. a setup error)
		}
	case e.Action == "start":
		s.running[e.Package] = time.Now()
	case e.Action == "output":
		if e.Test == "" {
			s.pkgOut[e.Package] = append(s.pkgOut[e.Package], e.Output)
		} else {
			k := e.Package + "\x00" + e.Test
			s.output[k] = append(s.output[k], e.Output)
		}
	case e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		s.tests[e.Action]++
		k := e.Package + "\x00" + e.Test
		if e.Action == "skip" && !strings.Contains(e.Test, "/") {
			s.skipped = append(s.skipped, short(e.Package)+" "+e.Test+": "+skipReason(s.output[k]))
		}
		if e.Action == "fail" {
			s.fail(e.Package+" "+e.Test, s.output[k])
			s.say("FAIL %s %s (%.1fs)", short(e.Package), e.Test, e.Elapsed)
			for _, l := range s.output[k] {
				fmt.Fprint(s.w, "        "+l)
			}
		}
		delete(s.output, k)
	case e.Action == "pass" || e.Action == "fail" || e.Action == "skip":
		s.packageDone(e)
	}
}

func (s *summary) packageDone(e event) {
	delete(s.running, e.Package)
	s.packages[e.Action]++
	s.done++
	of := ""
	if s.total > 0 {
		of = fmt.Sprintf(" (%d/%d)", s.done, s.total)
	}
	word := map[string]string{"pass": "ok  ", "fail": "FAIL", "skip": "--  "}[e.Action]
	note := ""
	if e.Action == "skip" {
		note = " no tests"
	}
	s.say("%s %s %.1fs%s%s", word, short(e.Package), e.Elapsed, note, of)
	if e.Action == "fail" {
		// A test that never ended: the binary died under it (a panic
		// in a goroutine, the -timeout), its output says why.
		for _, k := range slices.Sorted(maps.Keys(s.output)) {
			pkg, test, _ := strings.Cut(k, "\x00")
			if pkg != e.Package {
				continue
			}
			s.fail(pkg+" "+test+" (did not end)", s.output[k])
			s.say("FAIL %s %s did not end", short(pkg), test)
			for _, l := range s.output[k] {
				fmt.Fprint(s.w, "        "+l)
			}
			delete(s.output, k)
		}
		// A panic, a build error or a timeout is said outside any test.
		var lines []string
		for _, l := range s.pkgOut[e.Package] {
			if !strings.HasPrefix(l, "FAIL") && !strings.HasPrefix(l, "ok ") && l != "PASS\n" {
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 && !slices.ContainsFunc(s.failed, func(f string) bool { return strings.HasPrefix(f, e.Package+" ") }) {
			s.fail(e.Package, lines)
		}
		for _, l := range lines {
			fmt.Fprint(s.w, "        "+l)
		}
	}
	delete(s.pkgOut, e.Package)
}

// heartbeat says what is still running when nothing was said for quiet.
func (s *summary) heartbeat(quiet time.Duration) {
	if time.Since(s.last) < quiet {
		return
	}
	if len(s.running) == 0 {
		s.say("building and starting tests...")
		return
	}
	type run struct {
		pkg  string
		for_ time.Duration
	}
	var runs []run
	for p, t := range s.running {
		runs = append(runs, run{p, time.Since(t)})
	}
	slices.SortFunc(runs, func(a, b run) int { return int(b.for_ - a.for_) })
	var parts []string
	for _, r := range runs {
		parts = append(parts, fmt.Sprintf("%s %s", short(r.pkg), clock(r.for_)))
	}
	s.say("still running: %s", strings.Join(parts, ", "))
}

// finish prints the totals and what failed, and reports whether all passed.
func (s *summary) finish() bool {
	s.say("%d packages: %d ok, %d failed, %d without tests; tests: %d passed, %d failed, %d skipped",
		s.done, s.packages["pass"], s.packages["fail"], s.packages["skip"], s.tests["pass"], s.tests["fail"], s.tests["skip"])
	for _, sk := range s.skipped {
		fmt.Fprintln(s.w, "skipped "+sk)
	}
	// What failed is said again last, with the end of its output: a CI
	// that keeps only the log's tail still shows why.
	for _, f := range s.failed {
		fmt.Fprintln(s.w, "FAIL "+f)
		lines := s.why[f]
		if len(lines) > whyLines {
			fmt.Fprintf(s.w, "        (%d earlier lines above)\n", len(lines)-whyLines)
			lines = lines[len(lines)-whyLines:]
		}
		for _, l := range lines {
			fmt.Fprint(s.w, "        "+l)
		}
	}
	return len(s.failed) == 0 && s.packages["fail"] == 0
}

// whyLines is how much of a failure's output the final summary repeats.
const whyLines = 40

// fail records a failure and the output that says why.
func (s *summary) fail(entry string, lines []string) {
	s.failed = append(s.failed, entry)
	var kept []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "=== RUN") || strings.HasPrefix(t, "=== PAUSE") || strings.HasPrefix(t, "=== CONT") {
			continue
		}
		kept = append(kept, l)
	}
	s.why[entry] = kept
}

// skipReason is the first line a skipped test logged (its t.Skip message).
func skipReason(lines []string) string {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(l, "--- ") {
			if len(l) > 200 {
				l = l[:200] + "..."
			}
			return l
		}
	}
	return "(no reason given)"
}

// short drops the module path: the lines stay readable.
func short(pkg string) string {
	if p, ok := strings.CutPrefix(pkg, "github.com/cgcat/cgcat/"); ok {
		return p
	}
	return pkg
}
