package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
	"github.com/cgcat/cgcat/projection"
)

// dialForCLI connects to GBrain for a command a person runs: what GBrain
// says on stderr while it starts is shown at once, and a silence of a few
// seconds is explained (a brain held by another gbrain command delays
// GBrain's answer by up to 30 s), never waited on without a word.
func dialForCLI(ctx context.Context, cfg *config.Config, logger *slog.Logger, errOut io.Writer) (*projection.Conn, error) {
	c, err := projection.Connection(cfg)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	dialing := true
	opts := gbrain.Options{ExpectedSource: cfg.GBrain.ExpectedSource, ExpectedBrain: cfg.GBrain.ExpectedBrain, Logger: logger,
		OnStderr: func(line string) {
			mu.Lock()
			defer mu.Unlock()
			if dialing {
				fmt.Fprintf(errOut, "gbrain: %s\n", local.Printable(line))
			}
		}}
	conn := projection.NewConnWith(c, opts)
	slow := time.AfterFunc(cliSlowDial, func() {
		mu.Lock()
		defer mu.Unlock()
		if dialing {
			fmt.Fprintf(errOut, "cgcat: GBrain has not answered for %s; its brain may be held by another gbrain command (init, sync, embed), which makes GBrain wait up to 30 s before it answers. Still waiting (Ctrl-C to stop)…\n", cliSlowDial)
		}
	})
	_, err = conn.Client(ctx)
	slow.Stop()
	mu.Lock()
	dialing = false
	mu.Unlock()
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// cliSlowDial is how long a command waits for GBrain in silence before it
// says why it may be waiting.
var cliSlowDial = 3 * time.Second

// recordContact writes what this command learned of GBrain where every host
// reads gbrainState.
func recordContact(ctx context.Context, st *store.Store, err error) {
	c := local.GBrainContact{OK: err == nil, At: time.Now().UTC()}
	if err != nil {
		c.Error = err.Error()
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_ = st.Update(wctx, func(tx *store.Tx) error { tx.PutGBrainContact(c); return nil })
}

// waitForProjector follows another process's drain until the outbox is
// empty (done), or takes the lease itself once that process lets it go.
func waitForProjector(ctx context.Context, st *store.Store, p *projection.Projector, stall time.Duration, errOut io.Writer, tty, lines bool) (pid int, done bool, err error) {
	_, pid = lease.Holder(projection.LeasePath(st.DataDir()))
	fmt.Fprintf(errOut, "cgcat: another cgcat process (pid %d) is writing GBrain cards; waiting for it to drain the outbox…\n", pid)
	lastDepth, lastChange := -1, time.Now()
	for {
		d := outboxDepth(ctx, st)
		if d == 0 {
			if tty {
				fmt.Fprint(errOut, "\r\033[K")
			}
			return pid, true, nil
		}
		if d != lastDepth {
			if lines {
				fmt.Fprintf(errOut, "waiting pid=%d depth=%d\n", pid, d)
			} else if tty {
				fmt.Fprintf(errOut, "\r\033[Kwaiting for pid %d: %d cards left", pid, d)
			}
			if lastDepth < 0 || d < lastDepth {
				lastChange = time.Now()
			}
			lastDepth = d
		}
		if time.Since(lastChange) > stall {
			return pid, false, fmt.Errorf("the process writing GBrain cards (pid %d) made no progress for %s with %d cards left; is its GBrain connection down? see `cgcat gbrain status`", pid, stall, d)
		}
		select {
		case <-ctx.Done():
			return pid, false, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
		// The holder stopped (or crashed): take over.
		if err := p.TryAcquire(ctx); err == nil {
			if tty {
				fmt.Fprint(errOut, "\r\033[K")
			}
			return pid, false, nil
		} else if !errors.Is(err, lease.ErrHeld) {
			return pid, false, err
		}
	}
}

func outboxDepth(ctx context.Context, st *store.Store) int {
	n := 0
	_ = st.View(ctx, func(r *store.Reader) error { n = outbox.Depth(r); return nil })
	return n
}
