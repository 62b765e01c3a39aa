package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/cgcat/cgcat/local/store"
)

// The store's errors say what happened; cmd/cgcat adds what to do, and
// the texts people saw before the advice moved out of the store are the
// same word for word.
func TestStoreErrorsForPeople(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&store.CorruptError{Dir: "/d/catalog.db", Err: errors.New("bad block")},
			"catalog store /d/catalog.db is damaged (bad block); run `cgcat store recover` to rebuild it from what is readable (ids of every readable record are kept; a fresh scan refills anything lost)"},
		{&store.BusyError{Dir: "/d/catalog.db", Wait: "5s", Holder: store.Holder{PID: 42}},
			"catalog store stayed busy for 5s: process 42 kept /d/catalog.db locked; answers still work from the published catalog, but nothing can be written until it lets go — see `cgcat doctor`"},
		{&store.BusyError{Dir: "/d/catalog.db", Wait: "5s", Holder: store.Holder{PID: 42, Stopped: true}},
			"catalog store stayed busy for 5s: process 42 (stopped) kept /d/catalog.db locked; resume process 42 with `kill -CONT 42` or end it; answers still work from the published catalog, but nothing can be written until it lets go — see `cgcat doctor`"},
		{&store.WriteError{Dir: "/d", Err: syscall.ENOSPC},
			"cannot write the catalog store in /d (no space left on device); free some space on that disk — until then cgcat answers from the catalog as it was"},
		{&store.WriteError{Dir: "/d", Err: syscall.EROFS},
			"cannot write the catalog store in /d (read-only file system); the data dir is on a read-only file system: point dataDir at a writable directory — until then cgcat answers from the catalog as it was"},
		{&store.PublishError{Dir: "/d", Committed: true, Err: &store.WriteError{Dir: "/d", Err: syscall.ENOSPC}},
			"the change was saved in the catalog store, but publishing it for other cgcat processes in /d failed (no space left on device); free some space on that disk; then `cgcat scan` publishes it — meanwhile they read the store itself"},
		{&store.PublishError{Dir: "/d", Err: errors.New("rename failed")},
			"publishing the catalog for other cgcat processes in /d failed (rename failed); the next change publishes it (`cgcat scan`) — meanwhile they read the store itself"},
		{fmt.Errorf("%w: /d/catalog.db has format 9, this binary understands up to 3", store.ErrNewerFormat),
			"store was written by a newer cgcat: /d/catalog.db has format 9, this binary understands up to 3; upgrade cgcat or point dataDir elsewhere"},
		{&store.IdentityError{Path: "/d/identity.json"},
			"identity file /d/identity.json is damaged; move it aside and run any cgcat command to make a new one (this machine's GBrain cards will then count as another machine's)"},
	}
	for _, c := range cases {
		for _, advice := range []string{"cgcat", "kill -CONT", "free some space", "upgrade", "move it aside"} {
			if strings.Contains(c.err.Error(), advice) && !strings.Contains(c.want[:strings.Index(c.want, ";")], advice) {
				t.Errorf("the library error itself carries advice (%q): %s", advice, c.err)
			}
		}
		got := explain(c.err)
		if got.Error() != c.want {
			t.Errorf("for people:\n got %s\nwant %s", got, c.want)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("the explained error hides its cause %T", c.err)
		}
		if twice := explain(got); twice.Error() != c.want {
			t.Errorf("explained twice: %s", twice)
		}
	}
	if err := errors.New("plain"); explain(err) != err {
		t.Error("an error with no advice must come back as it is")
	}
}

// A command's failure and serve's log say what to do, from the same place.
func TestFailuresAndLogsAreExplained(t *testing.T) {
	busy := &store.BusyError{Dir: "/d/catalog.db", Wait: "5s", Holder: store.Holder{PID: 42, Stopped: true}}
	var log bytes.Buffer
	newLogger(&log).Error("discovery failed", "err", fmt.Errorf("scan: %w", busy))
	if !strings.Contains(log.String(), "kill -CONT 42") {
		t.Errorf("the log line does not say what to do: %s", log.String())
	}
	if msg := explain(&exitError{code: 1, err: busy}).Error(); !strings.Contains(msg, "kill -CONT 42") {
		t.Errorf("a command's failure does not say what to do: %s", msg)
	}
}
