package projection

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local/config"
)

// overHTTP points the env at the fake served over HTTP (`gbrain serve
// --http`), with an OAuth client registered for source (its
// credentials in the environment), through the config as a user writes it.
func (e *env) overHTTP(o gbraintest.HTTPOptions, source string) *gbraintest.HTTPServer {
	e.t.Helper()
	srv := e.fake.ServeHTTP(e.t, o)
	id, secret := e.fake.RegisterClient(e.t, "cgcat", source, nil, 0)
	hc := srv.Connection(e.t, id, secret)
	e.cfg.Connections = map[string]config.Connection{"fake": {URL: hc.URL, ClientIDEnv: hc.ClientIDEnv, ClientSecretEnv: hc.ClientSecretEnv}}
	conn, err := Connection(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	if conn.URL != hc.URL || conn.ClientIDEnv != hc.ClientIDEnv || conn.ClientSecretEnv != hc.ClientSecretEnv || conn.TokenEnv != "" || conn.Command != "" {
		e.t.Fatalf("config maps to %+v, want %+v", conn, hc)
	}
	e.conn.Close()
	e.reconnect = func() *Conn {
		c := NewConnWith(conn, gbrain.Options{ExpectedSource: testSource, HandshakeTimeout: 10 * time.Second, CallTimeout: 5 * time.Second})
		e.t.Cleanup(func() { c.Close() })
		return c
	}
	e.conn = e.reconnect()
	return srv
}

func (e *env) wantWrittenOnce(n int) {
	e.t.Helper()
	for _, rec := range e.records() {
		slug, _ := gbrain.CardSlug(e.set.SlugPrefix, rec.ID)
		p := e.fake.Page(e.t, testSource, slug)
		switch {
		case p == nil:
			e.t.Errorf("%s: no card", slug)
		case p.Versions != 0:
			e.t.Errorf("%s: written %d times (a write was repeated)", slug, p.Versions+1)
		}
	}
	if d := e.depth(); d != 0 {
		e.t.Errorf("outbox depth %d after the sync", d)
	}
}

// A sync longer than a token's life: the token is renewed before it runs
// out, no call is refused, every card is written once.
func TestSyncOverHTTPOutlivesItsToken(t *testing.T) {
	t.Parallel()
	const n = 12
	e := newEnv(t, n)
	e.overHTTP(gbraintest.HTTPOptions{TokenTTL: 4}, testSource)
	// 800 ms a call: 12 cards, 8 at a time, x 3 calls take about 4.8 s,
	// beyond the renewal of a 4 s token (2.2 s into its life; GBrain's
	// whole-second expiry leaves it at least 3 s).
	e.fake.SetControl(t, gbraintest.Control{DelayMs: 800})
	start := time.Now()
	rep := e.drain(e.projector())
	if rep.Written != n {
		t.Fatalf("report %+v", rep)
	}
	st := e.fake.HTTP(t)
	if took := time.Since(start); st.TokensIssued < 2 || st.Unauthorized != 0 {
		t.Errorf("sync of %s: %+v (want a renewal and no 401)", took.Round(time.Millisecond), st)
	}
	if a := clientOf(e.conn.Current()).Auth(); a.Rejections != 0 || a.Fetches != st.TokensIssued {
		t.Errorf("client auth %+v, fake %+v", a, st)
	}
	e.wantWrittenOnce(n)
}

// Tokens that stop working mid-sync (expired early, revoked): a refused
// read is sent again with a new token; a refused write was not applied, is
// retried by the projector with a new token, and lands once.
func TestSyncOverHTTPRefusedMidSync(t *testing.T) {
	t.Parallel()
	const n = 8
	e := newEnv(t, n)
	e.overHTTP(gbraintest.HTTPOptions{}, testSource)
	p := e.projector()
	p.InFlight = 1 // the refusals below land between cards
	p.Progress = func(pr Progress) {
		switch pr.Done {
		case 2:
			e.fake.ExpireTokens(t) // the next call (a read) is refused
		case 5:
			e.fake.SetControl(t, gbraintest.Control{ExpireTokensBefore: []string{"put_page"}})
		}
	}
	rep := e.drain(p)
	if rep.Written != n || rep.Conflicts != 0 || rep.Adopted != 0 {
		t.Fatalf("report %+v", rep)
	}
	st := e.fake.HTTP(t)
	if st.Unauthorized != 2 || st.TokensIssued != 3 {
		t.Errorf("fake saw %+v (want two 401s, three tokens)", st)
	}
	calls := e.fake.Calls(t)
	// Three calls per card; the refused calls never ran. whoami once per
	// token that wrote.
	if calls["put_page"] != n || calls["get_page"] != 2*n || calls["whoami"] != 3 {
		t.Errorf("calls %v", calls)
	}
	e.wantWrittenOnce(n)
}

// A token bound to another source: nothing is written anywhere, the rows
// wait, and the error says what to do.
func TestSyncOverHTTPWrongSourceWritesNothing(t *testing.T) {
	t.Parallel()
	const n = 3
	e := newEnv(t, n)
	e.overHTTP(gbraintest.HTTPOptions{}, "default")
	_, err := e.projector().Drain(e.ctx)
	if !errors.Is(err, gbrain.ErrWrongWriteSource) {
		t.Fatalf("drain: %v", err)
	}
	if calls := e.fake.Calls(t); calls["put_page"] != 0 {
		t.Errorf("calls %v", calls)
	}
	if d := e.depth(); d != n {
		t.Errorf("outbox depth %d, want %d (nothing lost)", d, n)
	}
}

// `cgcat serve`'s GBrain service over HTTP: it projects and recalls, and
// keeps doing both after every token it holds stopped working.
func TestServiceOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	e.overHTTP(gbraintest.HTTPOptions{}, testSource)
	e.cfg.GBrain.SemanticSearch = true // GBrain's query on the query path
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	s := StartWith(ctx, e.cfg, e.st, e.pol, nil, e.service(fastService()))
	waitFor(t, "the first drain", 15*time.Second, func() bool { return e.depth() == 0 && len(e.listed()) == 3 })
	e.fake.ExpireTokens(t)
	hits, err := s.Recall().Recall(e.ctx, "kw0002", 5)
	if err != nil || len(hits) != 1 || hits[0].ProjectID != e.record("pkg-0002").ID {
		t.Fatalf("recall after the token expired: %+v %v", hits, err)
	}
	e.fake.ExpireTokens(t)
	target := e.record("pkg-0001")
	writePkg(t, target.Root, "pkg-0001", "a brand new purpose")
	e.rescan()
	waitFor(t, "the changed card", 10*time.Second, func() bool {
		return strings.Contains(e.fake.Content(t, testSource, e.slug(target.ID)), "a brand new purpose")
	})
	// The status is read at the end of a round: a round that the second
	// expiry caught between a renewal and its retry failed (a token refused
	// right after it was issued is not retried again), and its error stays
	// until the round that wrote the card ends.
	waitFor(t, "a round without error", 10*time.Second, func() bool {
		st := s.Status()
		return st.Connected && st.LastErr == ""
	})
	// Two connections over HTTP (the projector's and recall's), each with
	// its tokens: at most one new token per connection per expiry, however
	// many requests met the expired one (a request in flight and the next
	// one may both be refused once: two per connection per expiry at
	// most), never a request refused twice.
	if h := e.fake.HTTP(t); h.TokensIssued < 4 || h.TokensIssued > 6 || h.Unauthorized < 2 || h.Unauthorized > 8 {
		t.Errorf("fake saw %+v (want one new token per connection per expiry, and each request in flight at an expiry refused once)", h)
	}
	cancel()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the service did not stop")
	}
}
