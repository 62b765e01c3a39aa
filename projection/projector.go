package projection

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
)

// ErrNoLease means Drain was called without holding the projector lease (or
// after losing it).
var ErrNoLease = errors.New("this process does not hold the projector lease")

// Outcome is what became of one outbox row.
type Outcome string

const (
	Written   Outcome = "written"    // card written and read back
	Unchanged Outcome = "unchanged"  // card already as we last wrote it: one read, no write
	Adopted   Outcome = "adopted"    // a write whose answer was lost turned out to have landed
	Conflict  Outcome = "conflict"   // someone else changed the page: not overwritten
	NotShared Outcome = "not_shared" // the live policy does not share the project: nothing sent
	Dropped   Outcome = "dropped"    // the record is gone and so is its card
	Failed    Outcome = "failed"     // the card cannot be written as it is
	Retracted Outcome = "retracted"  // the card of a hidden or forgotten project was deleted
)

// Report counts the outcomes of a drain.
type Report struct {
	Rows      int `json:"rows"`
	Written   int `json:"written"`
	Unchanged int `json:"unchanged"`
	Adopted   int `json:"adopted"`
	Conflicts int `json:"conflicts"`
	NotShared int `json:"notShared"`
	Dropped   int `json:"dropped"`
	Failed    int `json:"failed"`
	Retracted int `json:"retracted"`
	// Remaining is the outbox depth when the drain ended.
	Remaining int `json:"remaining"`
	// Calls counts the GBrain calls the drain made; CardsPerSecond is the
	// cards written, adopted or retracted per second of Duration.
	Calls          int     `json:"calls"`
	CardsPerSecond float64 `json:"cardsPerSecond,omitempty"`
	Duration       string  `json:"duration,omitempty"`
}

// callTotal is how many GBrain calls went through the connection so far.
func (p *Projector) callTotal() int {
	n := 0
	for _, v := range p.conn.Calls() {
		n += v
	}
	return n
}

func (r *Report) add(o Outcome) {
	r.Rows++
	switch o {
	case Written:
		r.Written++
	case Unchanged:
		r.Unchanged++
	case Adopted:
		r.Adopted++
	case Conflict:
		r.Conflicts++
	case NotShared:
		r.NotShared++
	case Dropped:
		r.Dropped++
	case Failed:
		r.Failed++
	case Retracted:
		r.Retracted++
	}
}

// Progress is reported after every row of a drain.
type Progress struct {
	Done, Total int
	ProjectID   string
	Outcome     Outcome
	Report      Report
}

// PlanItem is what a drain would do with one row (dry run).
type PlanItem struct {
	ProjectID string  `json:"projectId"`
	Slug      string  `json:"slug,omitempty"`
	Name      string  `json:"name,omitempty"`
	Action    Outcome `json:"action"`
	Detail    string  `json:"detail,omitempty"`
}

// Projector drains the outbox into GBrain. It is used by one goroutine.
type Projector struct {
	st   *store.Store
	pol  catalog.Source // asked per record: the policy in force now
	set  Settings
	conn *Conn
	log  *slog.Logger

	// Progress, when set, is called after every row.
	Progress func(Progress)
	// RetryBudget bounds the backoff on transient failures of one call
	// (zero: 5 s). GBrain still down after it: the drain stops and the rows
	// wait in the outbox.
	RetryBudget time.Duration
	// MaxAmbiguous bounds the read-back-then-retry rounds of one card after
	// put_page answers were lost (zero: 3).
	MaxAmbiguous int

	lease *lease.Lease
	epoch uint64

	// BatchSize and BatchDelay bound how many finished rows wait for one
	// store batch, and for how long (zero: 50 rows, 1 s). A batch is one
	// synced LevelDB commit (tens of ms on a slow disk), so committing each
	// card alone would cost more than the network calls. Losing a batch (a
	// crash) loses nothing: the rows stay queued and the next drain finds
	// the cards already written and adopts them with one read each.
	BatchSize  int
	BatchDelay time.Duration

	// InFlight bounds the cards projected at once (zero: 8): each is still
	// read, checked, written and read back in turn, and two never share a
	// slug (the outbox holds one row per project).
	InFlight int

	stageMu     sync.Mutex
	staged      []func(tx *store.Tx) error
	stagedSince time.Time
	retracted   []gbrain.Tombstone // cards deleted by this drain (under stageMu)

	// netTime is the time spent inside GBrain calls, in ns (benchmarks).
	netTime atomic.Int64

	// listHook runs before every list_pages call (tests: pages shifting);
	// listLimit replaces the page size of list_pages (tests: many pages
	// from few cards).
	listHook  func(offset int)
	listLimit int
}

// stage adds the outcome of one row to the next batch.
func (p *Projector) stage(fn func(tx *store.Tx) error) {
	p.stageMu.Lock()
	defer p.stageMu.Unlock()
	if len(p.staged) == 0 {
		p.stagedSince = time.Now()
	}
	p.staged = append(p.staged, fn)
}

// flush commits the staged outcomes in one fenced batch.
func (p *Projector) flush(ctx context.Context, extra ...func(tx *store.Tx) error) error {
	p.stageMu.Lock()
	ops := append(p.staged, extra...)
	p.staged = nil
	p.stageMu.Unlock()
	if len(ops) == 0 {
		return nil
	}
	return p.commit(ctx, func(tx *store.Tx) error {
		for _, op := range ops {
			if err := op(tx); err != nil {
				return err
			}
		}
		return nil
	})
}

func (p *Projector) flushDue() bool {
	size, delay := p.BatchSize, p.BatchDelay
	if size <= 0 {
		size = 50
	}
	if delay <= 0 {
		delay = time.Second
	}
	p.stageMu.Lock()
	defer p.stageMu.Unlock()
	return len(p.staged) >= size || (len(p.staged) > 0 && time.Since(p.stagedSince) >= delay)
}

// NewProjector prepares a projector; it writes nothing until it holds the
// lease (TryAcquire / Acquire).
func NewProjector(st *store.Store, pol catalog.Source, set Settings, conn *Conn, log *slog.Logger) *Projector {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Projector{st: st, pol: pol, set: set, conn: conn, log: log}
}

// policy is the sharing view in force now.
func (p *Projector) policy() catalog.Policy { return p.pol.Policy() }

// TryAcquire takes the projector lease without waiting (lease.ErrHeld when
// another process projects) and starts a new fencing epoch.
func (p *Projector) TryAcquire(ctx context.Context) error {
	l, err := lease.TryAcquire(LeasePath(p.st.DataDir()))
	if err != nil {
		return err
	}
	return p.fence(ctx, l)
}

// Acquire waits for the projector lease.
func (p *Projector) Acquire(ctx context.Context, poll time.Duration) error {
	l, err := lease.Acquire(ctx, LeasePath(p.st.DataDir()), poll)
	if err != nil {
		return err
	}
	return p.fence(ctx, l)
}

func (p *Projector) fence(ctx context.Context, l *lease.Lease) error {
	var epoch uint64
	err := p.st.Update(ctx, func(tx *store.Tx) error {
		epoch = tx.BumpFence(fenceName)
		return nil
	})
	if err != nil {
		_ = l.Release()
		return err
	}
	p.lease, p.epoch = l, epoch
	return nil
}

// Holding reports whether this projector holds a lease that was not stolen.
func (p *Projector) Holding() bool { return p.lease != nil && !p.lease.Lost() }

// Release gives the lease back.
func (p *Projector) Release() {
	if p.lease != nil {
		_ = p.lease.Release()
		p.lease = nil
	}
}

type item struct {
	row  outbox.Row
	rec  *local.Project
	st   *State
	card *local.Card // the mirror's copy of its card, if any
}

// load reads the pending rows with their records and states in one View.
func (p *Projector) load(ctx context.Context) ([]item, error) {
	var items []item
	err := p.st.View(ctx, func(r *store.Reader) error {
		rows, err := outbox.Pending(r, 0)
		if err != nil && rows == nil {
			return err
		}
		for _, row := range rows {
			it := item{row: row}
			if it.rec, err = r.Project(row.ProjectID); err != nil {
				p.log.Warn("unreadable record; its card waits", "project", row.ProjectID, "err", err)
				continue
			}
			if it.st, err = readState(r, row.ProjectID); err != nil {
				return err
			}
			if slug, err := gbrain.CardSlug(p.set.SlugPrefix, row.ProjectID); err == nil {
				it.card, _ = r.Card(slug)
			}
			items = append(items, it)
		}
		return nil
	})
	return items, err
}

// commit runs one fenced batch. It outlives a cancelled ctx briefly, so
// what a finished network write did is still recorded.
func (p *Projector) commit(ctx context.Context, fn func(tx *store.Tx) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return p.st.Update(ctx, func(tx *store.Tx) error {
		if err := tx.CheckFence(fenceName, p.epoch); err != nil {
			return err
		}
		return fn(tx)
	})
}

func (p *Projector) depth(ctx context.Context) int {
	n := 0
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = p.st.View(ctx, func(r *store.Reader) error { n = outbox.Depth(r); return nil })
	return n
}

// Plan says what a drain would do with every pending row, reading GBrain
// but writing nothing anywhere (dry run). It needs no lease.
func (p *Projector) Plan(ctx context.Context) ([]PlanItem, error) {
	items, err := p.load(ctx)
	if err != nil {
		return nil, err
	}
	plan := make([]PlanItem, 0, len(items))
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return plan, err
		}
		out, pi, err := p.projectOne(ctx, it, true)
		if err != nil {
			return plan, err
		}
		pi.Action = out
		plan = append(plan, pi)
	}
	return plan, nil
}
