package gbrain

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestToolErrorSentinels(t *testing.T) {
	for code, sentinel := range codeSentinels {
		err := fmt.Errorf("wrapped: %w", &CallError{Tool: "get_page", Class: Definite, Err: &ToolError{Code: code}})
		if !errors.Is(err, sentinel) {
			t.Errorf("%s does not match its sentinel", code)
		}
		if code != "page_not_found" && errors.Is(err, ErrPageNotFound) {
			t.Errorf("%s matches ErrPageNotFound", code)
		}
	}
	te := &ToolError{Code: "ambiguous_slug", Message: "several", Candidates: []string{"a/b", "a/c"}}
	if !errors.Is(te, ErrAmbiguousSlug) || !strings.Contains(te.Error(), "a/b, a/c") {
		t.Errorf("ambiguous slug: %v", te)
	}
	if errors.Is(&ToolError{Code: "something_new"}, ErrInternal) {
		t.Error("unknown code matched a sentinel")
	}
}

func TestClasses(t *testing.T) {
	cases := []struct {
		code     string
		mutating bool
		want     Class
	}{
		{"page_not_found", false, Definite},
		{"internal_error", true, Definite},
		{"invalid_params", true, Definite},
		{"rate_limited", true, Transient},
		{"unavailable", false, Transient},
		{"database_error", false, Transient},
		{"database_error", true, Ambiguous},
		{"embedding_failed", true, Ambiguous},
	}
	for _, tc := range cases {
		if got := toolErrorClass(tc.code, tc.mutating); got != tc.want {
			t.Errorf("%s mutating=%v: %s, want %s", tc.code, tc.mutating, got, tc.want)
		}
	}
	if Classify(nil) != 0 || Classify(errors.New("x")) != Definite {
		t.Error("Classify of nil / foreign errors")
	}
	amb := fmt.Errorf("outer: %w", &CallError{Tool: "put_page", Class: Ambiguous, Err: ErrCallTimeout})
	if !IsAmbiguous(amb) || IsTransient(amb) || IsDefinite(amb) || !errors.Is(amb, ErrCallTimeout) {
		t.Error("ambiguous predicates")
	}
	if !strings.Contains(amb.Error(), "read back before retrying") {
		t.Errorf("message %q", amb)
	}
	if !IsTransient(&DialError{Class: Transient, Err: &HandshakeTimeoutError{}}) {
		t.Error("dial error class")
	}
}

func TestProcessExitedMessages(t *testing.T) {
	locked := &ProcessExitedError{Code: 1, Stderr: "[gbrain] Error: GBrain's local database is already open through `gbrain serve` (pid 7).\n"}
	if !errors.Is(locked, ErrBrainLocked) || !errors.Is(locked, ErrProcessExited) {
		t.Error("locked brain sentinels")
	}
	plain := &ProcessExitedError{Code: -1, Signal: "killed", Stderr: "boom\n"}
	if errors.Is(plain, ErrBrainLocked) || plain.Error() != "gbrain process exited (signal killed): boom" {
		t.Errorf("plain exit: %q", plain.Error())
	}
	tb := newTailBuffer(8)
	fmt.Fprint(tb, "0123456789")
	fmt.Fprint(tb, "ab")
	if tb.String() != "456789ab" {
		t.Errorf("tail %q", tb.String())
	}
}
