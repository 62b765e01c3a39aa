package projection

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/server"
)

// mirrorBenchCards is the brain size of the mirror benchmark
// (CGCAT_BENCH_MIRROR_CARDS overrides it; 10k by default).
func mirrorBenchCards() int {
	if n, err := strconv.Atoi(os.Getenv("CGCAT_BENCH_MIRROR_CARDS")); err == nil && n > 0 {
		return n
	}
	return 10000
}

// BenchmarkMirrorRefresh measures one mirror refresh over a brain of 10k
// cards (another machine's; CGCAT_BENCH_MIRROR_CARDS=100000 for 100k) with
// 0 and with 100 of them changed since the last refresh, against the
// in-process fake. It reports the calls of a refresh and, as ms/op, its
// time (GBrain's own latency is not in it: calls x GBrain's per-call time
// is); the first (full) refresh of an empty mirror is reported once as
// full-ms, and a full listing of a filled mirror as relist-ms.
func BenchmarkMirrorRefresh(b *testing.B) {
	n := mirrorBenchCards()
	e := newEnv(b, 0)
	pages := make(map[string]string, n)
	for i := range n {
		id := fmt.Sprintf("cg_%016d", i)
		pages[e.slug(id)] = otherCard(b, id, "m_other", fmt.Sprintf("svc-%05d", i), fmt.Sprintf("service %d of the other machine", i), false)
	}
	e.fake.PutMany(b, testSource, pages)
	e.conn.Close()
	e.conn = e.newConn(gbrain.Options{ExpectedSource: testSource, HandshakeTimeout: 60 * time.Second, CallTimeout: 60 * time.Second})
	c, err := e.conn.Client(e.ctx)
	if err != nil {
		b.Fatal(err)
	}
	p := e.projector()
	start := time.Now()
	full, err := p.RefreshMirror(e.ctx, MirrorOptions{})
	fullTook := time.Since(start)
	if err != nil || full.Written != n {
		b.Fatalf("full refresh: %v %+v", err, full)
	}
	// Written a while ago (beyond the incremental listing's margin).
	aged := time.Now().Add(-time.Hour).UTC()
	e.fake.EditAll(b, func(pg *gbraintest.Page) {
		pg.UpdatedAt, pg.UpdatedMicro = aged.Format("2006-01-02T15:04:05.000Z"), aged.UnixMicro()
	})
	relist, err := p.RefreshMirror(e.ctx, MirrorOptions{Full: true})
	if err != nil || relist.Read != n {
		b.Fatalf("full relisting: %v %+v", err, relist)
	}
	// The full listing a refresh makes now and then (FullEvery), nothing
	// changed: list_pages of every card, no read.
	start = time.Now()
	again, err := p.RefreshMirror(e.ctx, MirrorOptions{Full: true})
	againTook := time.Since(start)
	if err != nil || again.Read != 0 {
		b.Fatalf("full listing: %v %+v", err, again)
	}
	round := 0 // across runs: every round changes the pages anew
	for _, changed := range []int{0, 100} {
		b.Run(fmt.Sprintf("cards=%d/changed=%d", n, changed), func(b *testing.B) {
			var lists, reads int
			var net, took time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				round++
				for j := range changed {
					id := fmt.Sprintf("cg_%016d", (j*97+round*13)%n)
					content := otherCard(b, id, "m_other", fmt.Sprintf("svc-%d", j), fmt.Sprintf("changed in round %d", round), false)
					if _, err := c.PutPage(e.ctx, e.slug(id), content); err != nil {
						b.Fatal(err)
					}
				}
				before := e.conn.Calls()
				net0 := time.Duration(p.netTime.Load())
				b.StartTimer()
				start := time.Now()
				rep, err := p.RefreshMirror(e.ctx, MirrorOptions{})
				took += time.Since(start)
				b.StopTimer()
				net += time.Duration(p.netTime.Load()) - net0
				if err != nil || rep.Read != changed || rep.Written != changed {
					b.Fatalf("refresh: %v %+v", err, rep)
				}
				after := e.conn.Calls()
				lists += after["list_pages"] - before["list_pages"]
				reads += after["get_page"] - before["get_page"]
				b.StartTimer()
			}
			b.ReportMetric(float64(lists)/float64(b.N), "list_pages/op")
			b.ReportMetric(float64(reads)/float64(b.N), "get_page/op")
			b.ReportMetric(float64(fullTook.Milliseconds()), "full-ms")
			b.ReportMetric(float64(againTook.Milliseconds()), "fulllist-ms")
			b.ReportMetric(float64(again.Calls), "fulllist-calls")
			// cgcat's own share (store reads, decoding, the batch), apart
			// from the time spent waiting for GBrain (here: the fake).
			b.ReportMetric(float64((took-net).Microseconds())/1000/float64(b.N), "own-ms/op")
			b.ReportMetric(float64(net.Microseconds())/1000/float64(b.N), "gbrain-ms/op")
		})
	}
}

// BenchmarkQueryMirrorOnOff measures a search through the real frontend
// with GBrain off and on, at 1k and 10k projects, interleaved query by query
// over the same store so that the machine's drift hits both alike. With
// GBrain on the mirror holds a card of every project (as a sync leaves it)
// and 10 % more from another machine. The local queries answer the same
// either way; "pulsar" finds only the other machine's cards, so with
// GBrain on it answers ten historical projects instead of no_matches (more
// work by design; reported apart). The goal: on within 10 % of off.
func BenchmarkQueryMirrorOnOff(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		if n > mirrorBenchCards() && n > 1000 {
			continue
		}
		e := newEnv(b, n)
		recs := e.records()
		id := e.st.Identity()
		if err := e.st.Update(e.ctx, func(tx *store.Tx) error {
			for _, r := range recs {
				card, slug, _, err := encode(r, e.set)
				if err != nil {
					return err
				}
				lc := localCard(slug, card)
				lc.RootKey = id.RootKey(pathid.Key(r.Root))
				lc.UpdatedAt = "2026-12-01T00:00:00.000Z"
				if err := tx.PutCard(lc); err != nil {
					return err
				}
			}
			for i := range n / 10 {
				pid := fmt.Sprintf("cg_%016d", i)
				if err := tx.PutCard(&local.Card{Slug: e.slug(pid), ProjectID: pid, MachineID: "m_other",
					Name: fmt.Sprintf("pulsar-%d", i), Description: "pulsar queue " + strings.Repeat("x", i%7)}); err != nil {
					return err
				}
			}
			tx.PutGBrainContact(local.GBrainContact{OK: true, At: time.Now().UTC().Add(time.Hour)})
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		offCfg, onCfg := *e.cfg, *e.cfg
		offCfg.GBrain.Enabled = false
		off, on := e.frontendWith(&offCfg), e.frontendWith(&onCfg)
		for _, set := range []struct {
			name    string
			queries []string
		}{
			{"local-queries", []string{"widget kw0042", "billing team", "kw0777", "service number 12", "nothing-matches-this"}},
			{"historical-query", []string{"pulsar"}},
		} {
			b.Run(fmt.Sprintf("projects=%d/%s", n, set.name), func(b *testing.B) {
				var tOff, tOn time.Duration
				ask := func(f *server.Frontend, q string) time.Duration {
					start := time.Now()
					if _, err := f.Projects(e.ctx, server.ProjectsArgs{Query: q, Limit: 10}); err != nil {
						b.Fatal(err)
					}
					return time.Since(start)
				}
				for i := 0; i < b.N; i++ {
					q := set.queries[i%len(set.queries)]
					if i%2 == 0 {
						tOff += ask(off, q)
						tOn += ask(on, q)
					} else {
						tOn += ask(on, q)
						tOff += ask(off, q)
					}
				}
				b.ReportMetric(float64(tOff.Microseconds())/float64(b.N), "off-us/query")
				b.ReportMetric(float64(tOn.Microseconds())/float64(b.N), "on-us/query")
				b.ReportMetric(100*(float64(tOn)/float64(tOff)-1), "on-vs-off-%")
			})
		}
	}
}

// frontendWith is the real frontend over the env's store with cfg and no
// recall.
func (e *env) frontendWith(cfg *config.Config) *server.Frontend {
	f := server.NewFrontend(server.Options{
		Config: config.Fixed(cfg),
		Open: func(ctx context.Context, _ *config.Config) (*catalog.Catalog, server.Discovery, error) {
			cat, err := catalog.Load(ctx, e.st)
			return cat, nil, err
		},
	})
	if err := f.Ready(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	return f
}
