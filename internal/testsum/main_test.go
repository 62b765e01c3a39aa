package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// The final summary repeats why each test failed, after the totals: a CI
// log cut to its tail still says it.
func TestFinishRepeatsWhyAfterTheTotals(t *testing.T) {
	var b bytes.Buffer
	s := newSummary(&b, 2)
	pkg := "github.com/cgcat/cgcat/cmd/cgcat"
	s.add(event{Action: "start", Package: pkg})
	s.add(event{Action: "output", Package: pkg, Test: "TestGood", Output: "=== RUN   TestGood\n"})
	s.add(event{Action: "pass", Package: pkg, Test: "TestGood"})
	s.add(event{Action: "output", Package: pkg, Test: "TestBad", Output: "=== RUN   TestBad\n"})
	for i := range 50 {
		s.add(event{Action: "output", Package: pkg, Test: "TestBad", Output: fmt.Sprintf("    bad_test.go:%d: line %d\n", i, i)})
	}
	s.add(event{Action: "output", Package: pkg, Test: "TestBad", Output: "    bad_test.go:99: the kill should land mid-drain: outbox 40 of 40\n"})
	s.add(event{Action: "fail", Package: pkg, Test: "TestBad"})
	s.add(event{Action: "fail", Package: pkg})
	if s.finish() {
		t.Fatal("finish says all passed")
	}
	out := b.String()
	_, tail, ok := strings.Cut(out, "tests: 1 passed, 1 failed")
	if !ok {
		t.Fatalf("no totals:\n%s", out)
	}
	for _, want := range []string{"FAIL " + pkg + " TestBad", "the kill should land mid-drain: outbox 40 of 40", "line 49", "(11 earlier lines above)"} {
		if !strings.Contains(tail, want) {
			t.Errorf("after the totals, %q is missing:\n%s", want, tail)
		}
	}
	if strings.Contains(tail, "line 10\n") || strings.Contains(tail, "=== RUN") {
		t.Errorf("the repeat should keep only the last %d lines, without RUN lines:\n%s", whyLines, tail)
	}
}

// A package that died outside any test (a panic in a goroutine) is
// repeated with its own words.
func TestFinishRepeatsAPackagePanic(t *testing.T) {
	var b bytes.Buffer
	s := newSummary(&b, 1)
	pkg := "github.com/cgcat/cgcat/local/scan"
	s.add(event{Action: "start", Package: pkg})
	s.add(event{Action: "output", Package: pkg, Output: "panic: runtime error: index out of range [3] with length 3\n"})
	s.add(event{Action: "output", Package: pkg, Output: "FAIL\tgithub.com/cgcat/cgcat/local/scan\t0.1s\n"})
	s.add(event{Action: "fail", Package: pkg})
	s.finish()
	_, tail, _ := strings.Cut(b.String(), "tests: 0 passed")
	if !strings.Contains(tail, "FAIL "+pkg+"\n") || !strings.Contains(tail, "index out of range") {
		t.Fatalf("the panic is not repeated at the end:\n%s", b.String())
	}
}
