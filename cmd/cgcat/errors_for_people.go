package main

import (
	"errors"
	"fmt"
	"log/slog"
	"syscall"

	"github.com/cgcat/cgcat/local/store"
)

// Errors for people. The library packages say what happened (store: the
// catalog store is damaged, busy, cannot be written, was not published);
// this file alone adds what to do about it, naming cgcat's commands and the
// shell's. Every command's failure (run, main.go), serve's log, and the
// errors that reach a tool answer through the composition root (wire.go)
// go through explain; so does every error logged through cgcat's logger
// (explainAttr), serve's included.

// explained is an error with the advice for it: its text is for people,
// and errors.Is and errors.As still see the cause.
type explained struct {
	err    error
	advice string
}

func (e *explained) Error() string { return e.err.Error() + "; " + e.advice }
func (e *explained) Unwrap() error { return e.err }

// explain adds to err what a person can do about it; an error with no
// known advice (or explained already) is returned as it is.
func explain(err error) error {
	var done *explained
	if err == nil || errors.As(err, &done) {
		return err
	}
	if a := advice(err); a != "" {
		return &explained{err: err, advice: a}
	}
	return err
}

// advice is what to do about err ("" when nothing is known). The most
// specific cause comes first: a failed publish wraps a failed write.
func advice(err error) string {
	var (
		pe *store.PublishError
		we *store.WriteError
		be *store.BusyError
		ce *store.CorruptError
		ie *store.IdentityError
	)
	switch {
	case errors.As(err, &pe):
		what := "the next change publishes it (`cgcat scan`)"
		if errors.As(pe.Err, &we) {
			what = writeAdvice(we) + "; then `cgcat scan` publishes it"
		}
		return what + " — meanwhile they read the store itself"
	case errors.As(err, &we):
		return writeAdvice(we) + " — until then cgcat answers from the catalog as it was"
	case errors.As(err, &be):
		a := "answers still work from the published catalog, but nothing can be written until it lets go — see `cgcat doctor`"
		if be.Holder.PID > 0 && be.Holder.Stopped {
			a = fmt.Sprintf("resume process %d with `kill -CONT %d` or end it; ", be.Holder.PID, be.Holder.PID) + a
		}
		return a
	case errors.As(err, &ce):
		return "run `cgcat store recover` to rebuild it from what is readable (ids of every readable record are kept; a fresh scan refills anything lost)"
	case errors.Is(err, store.ErrNewerFormat):
		return "upgrade cgcat or point dataDir elsewhere"
	case errors.Is(err, store.ErrRecoverBusy):
		return "stop it (or wait) and run `cgcat store recover` again"
	case errors.As(err, &ie):
		return "move it aside and run any cgcat command to make a new one (this machine's GBrain cards will then count as another machine's)"
	}
	return ""
}

// writeAdvice says what to do about a store that cannot be written.
func writeAdvice(we *store.WriteError) string {
	switch {
	case errors.Is(we.Err, syscall.ENOSPC), errors.Is(we.Err, syscall.EDQUOT):
		return "free some space on that disk"
	case errors.Is(we.Err, syscall.EROFS):
		return "the data dir is on a read-only file system: point dataDir at a writable directory"
	case errors.Is(we.Err, syscall.EACCES), errors.Is(we.Err, syscall.EPERM):
		return "make the data dir writable for this user"
	}
	return "free some space or fix the data dir's permissions"
}

// explainAttr makes every error a log line carries (whichever package
// logged it through cgcat's logger) say what to do about it too.
func explainAttr(_ []string, a slog.Attr) slog.Attr {
	if err, ok := a.Value.Any().(error); ok && a.Value.Kind() == slog.KindAny {
		return slog.Any(a.Key, explain(err))
	}
	return a
}
