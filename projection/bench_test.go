package projection

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cgcat/cgcat/server"
)

// benchCards is the catalog size of the first-sync benchmark
// (CGCAT_BENCH_CARDS overrides it).
func benchCards() int {
	if n, err := strconv.Atoi(os.Getenv("CGCAT_BENCH_CARDS")); err == nil && n > 0 {
		return n
	}
	return 1000
}

// BenchmarkFirstSync measures a first sync of 1k projects against the fake
// GBrain: cards per second and calls per card. Each iteration is a fresh
// catalog and a fresh brain (built outside the timer).
func BenchmarkFirstSync(b *testing.B) {
	n := benchCards()
	var cards, gets, puts int
	var elapsed, net time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := newEnv(b, n)
		p := e.projector()
		if _, err := e.conn.Client(e.ctx); err != nil {
			b.Fatal(err)
		}
		e.fake.ResetCalls(b)
		b.StartTimer()
		start := time.Now()
		rep, err := p.Drain(e.ctx)
		elapsed += time.Since(start)
		b.StopTimer()
		if err != nil || rep.Written != n {
			b.Fatalf("drain: %v %+v", err, rep)
		}
		net += time.Duration(p.netTime.Load())
		g, pu := e.calls()
		cards, gets, puts = cards+n, gets+g, puts+pu
		p.Release()
		e.conn.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(cards)/elapsed.Seconds(), "cards/s")
	// What the projector itself costs per card (store batches, encoding,
	// checks), without the time spent waiting for GBrain.
	b.ReportMetric(float64((elapsed-net).Microseconds())/1000/float64(cards), "own-ms/card")
	b.ReportMetric(float64(net.Microseconds())/1000/float64(cards), "gbrain-ms/card")
	b.ReportMetric(float64(gets)/float64(cards), "get_page/card")
	b.ReportMetric(float64(puts)/float64(cards), "put_page/card")
}

// BenchmarkRecallAddedLatency measures what recall adds to a search through
// the real frontend with a 300 ms budget: p50 and p99 of (search with recall
// − search without), the share of answers that fell back to degraded, and
// the latency of recall itself (unbudgeted), over 100 and 1k projected cards.
func BenchmarkRecallAddedLatency(b *testing.B) {
	for _, n := range []int{100, min(benchCards(), 1000)} {
		b.Run("cards="+strconv.Itoa(n), func(b *testing.B) { benchRecall(b, n) })
	}
}

func benchRecall(b *testing.B, n int) {
	e := newEnv(b, n)
	p := e.projector()
	if rep, err := p.Drain(e.ctx); err != nil || rep.Written != n {
		b.Fatalf("drain: %v %+v", err, rep)
	}
	if _, err := e.conn.Client(e.ctx); err != nil {
		b.Fatal(err)
	}
	plain := e.frontend(nil, 0)
	withRecall := e.frontend(e.recaller(), 300*time.Millisecond)
	queries := []string{"kw0001 reference", "widget kw0042", "billing kw0099", "reference", "kw0033"}
	var degraded int
	measure := func(f *server.Frontend, q string) time.Duration {
		start := time.Now()
		env, err := f.Projects(e.ctx, server.ProjectsArgs{Query: q, Limit: 10})
		if err != nil {
			b.Fatal(err)
		}
		if f == withRecall && env.GBrainState != server.GBrainOK {
			degraded++
		}
		return time.Since(start)
	}
	var added, raw []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := queries[i%len(queries)]
		base := measure(plain, q)
		with := measure(withRecall, q)
		added = append(added, with-base)
		start := time.Now()
		if _, err := e.recaller().Recall(e.ctx, q, 20); err != nil {
			b.Fatal(err)
		}
		raw = append(raw, time.Since(start))
	}
	b.StopTimer()
	pct := func(xs []time.Duration, q float64) float64 {
		slices.Sort(xs)
		return float64(xs[min(len(xs)-1, int(q*float64(len(xs))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(added, 0.50), "p50-added-ms")
	b.ReportMetric(pct(added, 0.99), "p99-added-ms")
	b.ReportMetric(100*float64(degraded)/float64(b.N), "degraded-%")
	b.ReportMetric(pct(raw, 0.50), "p50-recall-ms")
}
