package projection

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
)

// Drain projects every pending row, then the rows that arrived meanwhile,
// up to InFlight cards at once. It stops early (rows stay in the outbox,
// nothing is lost) when GBrain is unreachable after the retry budget, when
// GBrain refuses something that is not about one card, when the lease is
// lost, or when ctx ends; cards already in flight then finish (a write is
// never abandoned half way by cgcat's own choice).
func (p *Projector) Drain(ctx context.Context) (rep Report, err error) {
	if !p.Holding() {
		return rep, ErrNoLease
	}
	if err := p.mayWrite(ctx); err != nil {
		return rep, err
	}
	p.stageMu.Lock()
	p.staged, p.retracted = nil, nil
	p.stageMu.Unlock()
	start := time.Now()
	calls0 := p.callTotal()
	defer func() {
		rep.Duration = time.Since(start).Round(time.Millisecond).String()
		rep.Calls = p.callTotal() - calls0
		if s := time.Since(start).Seconds(); s > 0 && rep.Written+rep.Adopted+rep.Retracted > 0 {
			rep.CardsPerSecond = float64(rep.Written+rep.Adopted+rep.Retracted) / s
		}
		var last []func(tx *store.Tx) error
		if rep.Rows > 0 {
			sr := SyncRecord{At: time.Now().UTC(), PID: os.Getpid(), Report: rep, Duration: rep.Duration}
			last = append(last, func(tx *store.Tx) error { return lastSyncRow.Put(tx, sr) })
		}
		if ferr := p.flush(ctx, last...); ferr != nil && err == nil {
			err = ferr
		}
		if terr := p.tombstones(ctx); terr != nil {
			p.log.Warn("the cards taken back are not listed on this machine's page yet; other machines drop them at their next full refresh", "err", terr)
		}
		rep.Remaining = p.depth(ctx)
	}()
	tried := map[string]outbox.Row{}
	total := 0
	for {
		if err := p.flush(ctx); err != nil {
			return rep, err
		}
		items, err := p.load(ctx)
		if err != nil {
			return rep, err
		}
		var todo []item
		for _, it := range items {
			if prev, ok := tried[it.row.ProjectID]; ok && prev.Seq == it.row.Seq && prev.RecordRevision == it.row.RecordRevision && prev.Enqueued.Equal(it.row.Enqueued) {
				continue
			}
			todo = append(todo, it)
		}
		if len(todo) == 0 {
			return rep, nil
		}
		total += len(todo)
		for _, it := range todo {
			tried[it.row.ProjectID] = it.row
		}
		if err := p.drainItems(ctx, todo, &rep, total); err != nil {
			return rep, err
		}
	}
}

func (p *Projector) inFlight() int {
	if p.InFlight > 0 {
		return p.InFlight
	}
	return 8
}

// drainItems projects todo with up to InFlight workers; outcomes are
// counted, staged and flushed here, in the caller's goroutine. The first
// error stops new work; what is in flight finishes.
func (p *Projector) drainItems(ctx context.Context, todo []item, rep *Report, total int) error {
	type result struct {
		it  item
		out Outcome
		err error
	}
	jobs := make(chan item)
	results := make(chan result)
	var wg sync.WaitGroup
	for range min(p.inFlight(), len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range jobs {
				out, _, err := p.projectOne(ctx, it, false)
				results <- result{it, out, err}
			}
		}()
	}
	defer func() {
		close(jobs)
		wg.Wait()
	}()
	var first error
	next, busy := 0, 0
	for (first == nil && next < len(todo)) || busy > 0 {
		var send chan item
		var it item
		if first == nil && next < len(todo) {
			switch {
			case ctx.Err() != nil:
				first = ctx.Err()
			case !p.Holding():
				first = fmt.Errorf("%w: %w", ErrNoLease, store.ErrFenced)
			default:
				send, it = jobs, todo[next]
			}
			if first != nil {
				continue // nothing more is sent; what is in flight is awaited
			}
		}
		select {
		case send <- it:
			next++
			busy++
		case r := <-results:
			busy--
			if r.err != nil {
				if ctx.Err() == nil && !errors.Is(r.err, store.ErrFenced) {
					row, rerr := r.it.row, r.err
					p.stage(func(tx *store.Tx) error { return outbox.Retry(tx, row, rerr) })
				}
				if first == nil {
					first = r.err
				}
				continue
			}
			rep.add(r.out)
			if p.flushDue() {
				if err := p.flush(ctx); err != nil && first == nil {
					first = err
				}
			}
			if p.Progress != nil {
				p.Progress(Progress{Done: rep.Rows, Total: total, ProjectID: r.it.row.ProjectID, Outcome: r.out, Report: *rep})
			}
		}
	}
	return first
}

// mayWrite says whether this machine may write cards now: not while it is
// retired, nor while a lost catalog's ids are pending (the cards that could
// give them back were not read yet: a card written now could duplicate
// one).
func (p *Projector) mayWrite(ctx context.Context) error {
	ms, err := Machines(ctx, p.st)
	if err != nil {
		return err
	}
	if mi := ms[p.set.MachineID]; mi.RetiredBy != "" {
		return retiredError(p.set.MachineID, mi)
	}
	rs, err := ReadRecovery(ctx, p.st)
	if err != nil {
		return err
	}
	if rs.Blocks() {
		return rs.PendingError()
	}
	return nil
}
