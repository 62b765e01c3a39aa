package projection

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local/config"
)

// gbrainLatency is GBrain 0.46.28's latency per call over HTTP, as measured
// (GBRAIN.md: p50 get_page 10–13 ms, put_page 23–42 ms, list_pages 6–10
// ms): the fake waits as long, so calls in flight show what they buy.
var gbrainLatency = map[string]int{"get_page": 12, "put_page": 30, "list_pages": 8, "whoami": 5, "sources_list": 5}

// syncEnv is an env whose fake is a process in memory mode (a call costs
// the tool, not a rewrite of a state file), over stdio or HTTP.
func syncEnv(b *testing.B, n int, overHTTP bool) *env {
	e := newProcessEnv(b, n)
	e.fake.Env["GBRAIN_FAKE_MEMORY"] = "1"
	e.fake.SetControl(b, gbraintest.Control{DelaysMs: gbrainLatency})
	opts := gbrain.Options{ExpectedSource: testSource, HandshakeTimeout: 60 * time.Second, CallTimeout: 60 * time.Second}
	if !overHTTP {
		e.conn = e.newConn(opts)
		return e
	}
	// The client is registered before the server starts: a fake in memory
	// mode reads its state file once, at start.
	id, secret := e.fake.RegisterClient(b, "bench", testSource, nil, 0)
	srv := e.fake.ServeHTTP(b, gbraintest.HTTPOptions{Env: map[string]string{"GBRAIN_FAKE_MEMORY": "1"}})
	hc := srv.Connection(b, id, secret)
	e.cfg.Connections = map[string]config.Connection{"fake": {URL: hc.URL, ClientIDEnv: hc.ClientIDEnv, ClientSecretEnv: hc.ClientSecretEnv}}
	e.conn = NewConnWith(hc, opts)
	b.Cleanup(func() { e.conn.Close() })
	return e
}

// BenchmarkSyncCardsPerSecond measures 200 new cards (CGCAT_BENCH_SYNC
// overrides it), their re-sync (every card queued again, unchanged) and a
// re-sync with nothing queued, over stdio and HTTP, one card in flight and
// eight, against the fake with GBrain's latency per call.
func BenchmarkSyncCardsPerSecond(b *testing.B) {
	n := 200
	if v, err := strconv.Atoi(os.Getenv("CGCAT_BENCH_SYNC")); err == nil && v > 0 {
		n = v
	}
	for _, transport := range []string{"stdio", "http"} {
		for _, inflight := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/inflight=%d", transport, inflight), func(b *testing.B) {
				var first, resync, idle float64
				var firstCalls, resyncCalls, idleCalls int
				for i := 0; i < b.N; i++ {
					e := syncEnv(b, n, transport == "http")
					p := e.projector()
					p.InFlight = inflight
					if _, err := e.conn.Client(e.ctx); err != nil {
						b.Fatal(err)
					}
					rep := e.drain(p)
					if rep.Written != n {
						b.Fatalf("first sync: %+v", rep)
					}
					first += rep.CardsPerSecond
					firstCalls += rep.Calls
					var ids []string
					for _, r := range e.records() {
						ids = append(ids, r.ID)
					}
					e.enqueue(ids...)
					start := time.Now()
					rep = e.drain(p)
					if rep.Unchanged != n {
						b.Fatalf("re-sync: %+v", rep)
					}
					resync += float64(n) / time.Since(start).Seconds()
					resyncCalls += rep.Calls
					rep = e.drain(p)
					idle += float64(rep.Rows)
					idleCalls += rep.Calls
					p.Release()
				}
				b.ReportMetric(first/float64(b.N), "first-cards/s")
				b.ReportMetric(float64(firstCalls)/float64(b.N*n), "first-calls/card")
				b.ReportMetric(resync/float64(b.N), "resync-cards/s")
				b.ReportMetric(float64(resyncCalls)/float64(b.N*n), "resync-calls/card")
				b.ReportMetric(float64(idleCalls)/float64(b.N), "nochange-calls")
			})
		}
	}
}

// BenchmarkFleetSim is 50 machines x 2,000 projects on one brain (the
// in-process fake stands for it; CGCAT_FLEET_MACHINES and
// CGCAT_FLEET_PROJECTS override the sizes): one observer machine mirrors
// all 100k cards; then what its refresh costs with no change, and what a
// new card costs to reach it (the same on every machine: the fleet's load
// is that times the machines). GBrain's own latency is not simulated here:
// calls are what the fleet costs a server.
func BenchmarkFleetSim(b *testing.B) {
	machines, projects := 50, 2000
	if v, err := strconv.Atoi(os.Getenv("CGCAT_FLEET_MACHINES")); err == nil && v > 0 {
		machines = v
	}
	if v, err := strconv.Atoi(os.Getenv("CGCAT_FLEET_PROJECTS")); err == nil && v > 0 {
		projects = v
	}
	e := newEnv(b, 0)
	for m := range machines {
		pages := make(map[string]string, projects)
		for i := range projects {
			id := fmt.Sprintf("cg_%02d%014d", m, i)
			pages[e.slug(id)] = otherCard(b, id, fmt.Sprintf("m_sim%02d", m), fmt.Sprintf("svc-%02d-%05d", m, i), "a service of the fleet", false)
		}
		e.fake.PutMany(b, testSource, pages)
	}
	total := machines * projects
	p := e.projector()
	start := time.Now()
	full := e.refresh(p)
	fullTook := time.Since(start)
	if full.Written != total {
		b.Fatalf("full refresh: %+v", full)
	}
	// Older than the margin: as a brain whose cards were written a while ago.
	aged := time.Now().Add(-time.Hour).UTC()
	e.fake.EditAll(b, func(pg *gbraintest.Page) {
		pg.UpdatedAt, pg.UpdatedMicro = aged.Format("2006-01-02T15:04:05.000Z"), aged.UnixMicro()
	})
	if _, err := p.RefreshMirror(e.ctx, MirrorOptions{Full: true}); err != nil {
		b.Fatal(err)
	}
	b.Run("nochange", func(b *testing.B) {
		calls := 0
		for i := 0; i < b.N; i++ {
			rep := e.refresh(p)
			if rep.Full || rep.Read != 0 {
				b.Fatalf("idle refresh: %+v", rep)
			}
			calls += rep.Calls
		}
		b.ReportMetric(float64(calls)/float64(b.N), "calls/refresh")
		b.ReportMetric(float64(calls*machines)/float64(b.N), "fleet-calls/round")
	})
	fresh := 0 // across runs of the sub-benchmark: a new card every time
	b.Run("newcard", func(b *testing.B) {
		calls := 0
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			fresh++
			id := fmt.Sprintf("cg_new%013d", fresh)
			e.fake.Put(b, testSource, e.slug(id), otherCard(b, id, "m_sim00", "fresh", "a new service", false))
			b.StartTimer()
			rep := e.refresh(p)
			if rep.Read != 1 || rep.Written != 1 {
				b.Fatalf("refresh after a new card: %+v", rep)
			}
			calls += rep.Calls
		}
		b.ReportMetric(float64(calls)/float64(b.N), "calls/refresh")
	})
	b.Logf("first (full) refresh of %d cards: %d calls, %s", total, full.Calls, fullTook.Round(time.Millisecond))
}

// BenchmarkPropagation measures the time from a project found on machine A
// (its scan committed) to its card in machine B's mirror, both running
// the GBrain service over HTTP (the in-process fake with GBrain's latency
// per call): A drains at its next poll of the store (1 s), B reads the card
// at its next round (CGCAT_PROPAGATION_ROUND_S, 5 s here; checkSeconds, 60
// by default, in a serve). ms/op is the propagation.
func BenchmarkPropagation(b *testing.B) {
	round := 5 * time.Second
	if v, err := strconv.Atoi(os.Getenv("CGCAT_PROPAGATION_ROUND_S")); err == nil && v > 0 {
		round = time.Duration(v) * time.Second
	}
	a := newEnv(b, 1)
	a.overHTTP(gbraintest.HTTPOptions{}, testSource)
	a.fake.SetControl(b, gbraintest.Control{DelaysMs: gbrainLatency})
	m := a.anotherMachine(b, 1)
	m.overHTTP(gbraintest.HTTPOptions{}, testSource)
	opt := ServiceOptions{RoundEvery: round, Poll: time.Second, LeaseEvery: 100 * time.Millisecond, HandshakeTimeout: 30 * time.Second, CallTimeout: 30 * time.Second}
	ctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	sa := StartWith(ctx, a.cfg, a.st, a.pol, nil, a.service(opt))
	sb := StartWith(ctx, m.cfg, m.st, m.pol, nil, m.service(opt))
	deadline := func(what string, ok func() bool) {
		for end := time.Now().Add(5 * time.Minute); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(end) {
				b.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	deadline("both services' first rounds", func() bool { return sa.Status().Rounds > 0 && sb.Status().Rounds > 0 })
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		name := fmt.Sprintf("fresh-%04d", i)
		mkProject(b, filepath.Join(a.root, name), name, "a project found just now", "fresh")
		b.StartTimer()
		start := time.Now()
		a.rescan()
		var id string
		for _, r := range a.records() {
			if r.Meta.Name == name {
				id = r.ID
			}
		}
		slug := a.slug(id)
		deadline("the card on B", func() bool { _, ok := m.mirror()[slug]; return ok })
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "propagation-ms")
	b.ReportMetric(round.Seconds(), "round-s")
	cancel()
	<-sa.Done()
	<-sb.Done()
}
