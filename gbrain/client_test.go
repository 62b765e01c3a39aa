package gbrain_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
)

func TestMain(m *testing.M) { os.Exit(gbraintest.Main(m)) }

const (
	src    = "cgcat-cards"
	prefix = "catalog/codegraph"
)

var ctx = context.Background()

func card(id string, rev uint64) gbrain.Card {
	return gbrain.Card{
		ProjectID: id, MachineID: "m-1", Name: "Acme Payments " + id,
		Description:    "Go client for the Acme payments API: charges and refunds.",
		Tags:           []string{"sdk"},
		Packages:       []string{"github.com/acme/payments-go", "@acme/payments"},
		Keywords:       []string{"billing"},
		RecordRevision: rev,
	}
}

func slugOf(t *testing.T, id string) string {
	t.Helper()
	s, err := gbrain.CardSlug(prefix, id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func encode(t *testing.T, c gbrain.Card) string {
	t.Helper()
	s, err := gbrain.Encode(c, gbrain.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wantClass(t *testing.T, err error, class gbrain.Class, sentinels ...error) {
	t.Helper()
	if err == nil {
		t.Fatalf("want a %s error, got nil", class)
	}
	if got := gbrain.Classify(err); got != class {
		t.Errorf("class = %s, want %s (%v)", got, class, err)
	}
	for _, s := range sentinels {
		if !errors.Is(err, s) {
			t.Errorf("error %q does not match %q", err, s)
		}
	}
}

func TestTypedCalls(t *testing.T) {
	fake := gbraintest.New(t, src)
	// Strict parameters: any parameter GBrain does not document is an error.
	fake.SetControl(t, gbraintest.Control{StrictParams: true})
	c := fake.Dial(t, gbrain.Options{ExpectedSource: src})

	if info := c.ServerInfo(); info.Name != "gbrain" || info.Version != "0.46.28.0" || info.ProtocolVersion != "2025-06-18" {
		t.Errorf("server info %+v", info)
	}
	starts := fake.Starts(t)
	if len(starts) != 1 || starts[0].EnvSource != src || starts[0].Source != src || starts[0].SkipHooks != "1" {
		t.Errorf("child started with %+v", starts)
	}
	if err := c.CheckSource(ctx); err != nil {
		t.Fatal(err)
	}
	who, err := c.Whoami(ctx)
	if err != nil || who.Transport != "stdio" {
		t.Fatalf("whoami %+v %v", who, err)
	}
	sources, err := c.SourcesList(ctx)
	if err != nil || len(sources) != 2 {
		t.Fatalf("sources %+v %v", sources, err)
	}

	fake.ResetCalls(t)
	slug := slugOf(t, "p-1")
	cd := card("p-1", 3)
	written := encode(t, cd)
	// The projector's path for a new card: read (absent), write, read back.
	if _, err := c.GetPage(ctx, slug, true); !errors.Is(err, gbrain.ErrPageNotFound) {
		t.Fatalf("get before put: %v", err)
	}
	res, err := c.PutPage(ctx, slug, written)
	if err != nil || res.Status != gbrain.StatusWritten || res.Slug != slug {
		t.Fatalf("put %+v %v", res, err)
	}
	page, err := c.GetPage(ctx, slug, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := fake.Calls(t); !reflect.DeepEqual(got, map[string]int{"get_page": 2, "put_page": 1}) {
		t.Errorf("calls %v, want one read + one write + one read-back", got)
	}
	if !page.HasContent || page.Content == written {
		t.Errorf("content should be GBrain's re-serialised form, not the bytes written")
	}
	if page.SourceID != src || page.Type != "project" || page.Title != cd.Name || page.ContentHash == "" {
		t.Errorf("page %+v", page)
	}
	if !reflect.DeepEqual(page.Tags, []string{gbrain.CardTag, gbrain.FormatTag, gbrain.MachineTag(cd.MachineID), "sdk"}) {
		t.Errorf("tags %v", page.Tags)
	}
	if _, ok := page.Frontmatter["id"]; ok {
		t.Error("frontmatter has an id")
	}
	got, err := gbrain.Decode(page.Content)
	if err != nil {
		t.Fatalf("decode read-back: %v\n%s", err, page.Content)
	}
	if want := gbrain.Normalize(cd); !reflect.DeepEqual(got, want) {
		t.Errorf("read-back card\n got %#v\nwant %#v", got, want)
	}
	noContent, err := c.GetPage(ctx, slug, false)
	if err != nil || noContent.HasContent {
		t.Errorf("get without content: %+v %v", noContent, err)
	}

	// A second card and a page that is not ours.
	if _, err := c.PutPage(ctx, slugOf(t, "p-2"), encode(t, card("p-2", 1))); err != nil {
		t.Fatal(err)
	}
	if st := fake.Put(t, src, "notes/human", "---\ntitle: Notes\n---\nA person's page about payments."); st != gbrain.StatusWritten {
		t.Fatal(st)
	}
	refs, err := c.ListPages(ctx, gbrain.ListOptions{Tag: gbrain.CardTag, Sort: gbrain.SortSlug, Limit: 1})
	if err != nil || len(refs) != 1 || refs[0].Slug != slugOf(t, "p-1") || refs[0].SourceID != src {
		t.Fatalf("list page 1: %+v %v", refs, err)
	}
	refs, err = c.ListPages(ctx, gbrain.ListOptions{Tag: gbrain.CardTag, Sort: gbrain.SortSlug, Limit: 1, Offset: 1})
	if err != nil || len(refs) != 1 || refs[0].Slug != slugOf(t, "p-2") {
		t.Fatalf("list page 2: %+v %v", refs, err)
	}
	if _, err := c.ListPages(ctx, gbrain.ListOptions{Limit: 101}); !errors.Is(err, gbrain.ErrInvalidArgument) {
		t.Errorf("limit 101: %v", err)
	}

	// Search: any word, title and body; the body carries package names.
	hits, err := c.Search(ctx, "zzz refunds", 10)
	if err != nil || len(hits) != 2 {
		t.Fatalf("search %+v %v", hits, err)
	}
	hits, err = c.Search(ctx, "acme", 10)
	if err != nil || len(hits) != 2 || hits[0].SourceID != src {
		t.Fatalf("search package %+v %v", hits, err)
	}
	hits, err = c.Search(ctx, "nothingmatches", 10)
	if err != nil || hits == nil || len(hits) != 0 {
		t.Fatalf("empty search %#v %v", hits, err)
	}
	hits, err = c.Query(ctx, gbrain.QueryOptions{Query: "person", Limit: 5})
	if err != nil || len(hits) != 1 || hits[0].Slug != "notes/human" {
		t.Fatalf("query %+v %v", hits, err)
	}
}

func TestReserialisedFixedPoint(t *testing.T) {
	fake := gbraintest.New(t, src)
	c := fake.Dial(t, gbrain.Options{ExpectedSource: src})
	slug := slugOf(t, "p-fixed")
	if _, err := c.PutPage(ctx, slug, encode(t, card("p-fixed", 1))); err != nil {
		t.Fatal(err)
	}
	read := func() *gbrain.Page {
		p, err := c.GetPage(ctx, slug, true)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := read()
	h := gbrain.ContentHash(first.Content)
	if !strings.HasSuffix(first.Content, "\n") || strings.HasSuffix(first.Content, "\n\n") {
		t.Errorf("content should end in exactly one newline: %q", first.Content[len(first.Content)-20:])
	}
	// Writing the read-back form back is NOT a no-op (key order differs from
	// what was written, so GBrain's content_hash differs) ...
	res, err := c.PutPage(ctx, slug, first.Content)
	if err != nil || res.Status != gbrain.StatusWritten {
		t.Fatalf("first write-back: %+v %v", res, err)
	}
	second := read()
	if second.Content != first.Content || gbrain.ContentHash(second.Content) != h {
		t.Errorf("read-back form is not a fixed point:\n%s\n---\n%s", first.Content, second.Content)
	}
	// ... only the second write-back is skipped.
	res, err = c.PutPage(ctx, slug, second.Content)
	if err != nil || res.Status != gbrain.StatusSkipped {
		t.Fatalf("second write-back: %+v %v", res, err)
	}
	if p := fake.Page(t, src, slug); p.Versions != 1 {
		t.Errorf("versions = %d, want 1", p.Versions)
	}
	// An identical put of what we wrote is skipped too? No: the last
	// written form is now the read-back one; our original bytes differ.
	res, err = c.PutPage(ctx, slug, encode(t, card("p-fixed", 1)))
	if err != nil || res.Status != gbrain.StatusWritten {
		t.Fatalf("rewrite original: %+v %v", res, err)
	}
	res, err = c.PutPage(ctx, slug, encode(t, card("p-fixed", 1)))
	if err != nil || res.Status != gbrain.StatusSkipped {
		t.Fatalf("identical put: %+v %v", res, err)
	}
}

func TestErrorMapping(t *testing.T) {
	fake := gbraintest.New(t, src)
	c := fake.Dial(t, gbrain.Options{ExpectedSource: src})

	_, err := c.GetPage(ctx, "catalog/codegraph/none", true)
	wantClass(t, err, gbrain.Definite, gbrain.ErrPageNotFound)
	var te *gbrain.ToolError
	if !errors.As(err, &te) || te.Code != "page_not_found" || te.Message == "" {
		t.Errorf("tool error %+v", te)
	}

	// Refused before sending: uppercase slugs, empty content.
	fake.ResetCalls(t)
	_, err = c.PutPage(ctx, "Catalog/codegraph/P1", "x")
	wantClass(t, err, gbrain.Definite, gbrain.ErrInvalidSlug)
	_, err = c.GetPage(ctx, "catalog/codegraph/P1", false)
	wantClass(t, err, gbrain.Definite, gbrain.ErrInvalidSlug)
	_, err = c.PutPage(ctx, "catalog/x", "  \n")
	wantClass(t, err, gbrain.Definite, gbrain.ErrInvalidArgument)
	if calls := fake.Calls(t); len(calls) != 0 {
		t.Errorf("refused calls reached gbrain: %v", calls)
	}

	// status "error" (invalid frontmatter) is an error although not isError.
	_, err = c.PutPage(ctx, "catalog/bad-yaml", "---\ntitle: [unterminated\n---\nbody\n")
	wantClass(t, err, gbrain.Definite, gbrain.ErrPutRejected)

	// Frontmatter id de-duplication: the second slug is skipped and the
	// answer names the first one.
	if _, err := c.PutPage(ctx, "notes/first", "---\nid: same\ntitle: First\n---\nbody one\n"); err != nil {
		t.Fatal(err)
	}
	_, err = c.PutPage(ctx, "notes/second", "---\nid: same\ntitle: Second\n---\nbody two\n")
	wantClass(t, err, gbrain.Definite, gbrain.ErrSlugMismatch)
	var sm *gbrain.SlugMismatchError
	if !errors.As(err, &sm) || sm.Got != "notes/first" || sm.Status != gbrain.StatusSkipped {
		t.Errorf("slug mismatch %+v", sm)
	}
	if fake.Page(t, src, "notes/second") != nil {
		t.Error("second slug was created")
	}

	// Lowercasing on write only: another client writes a mixed-case slug.
	fake.Put(t, src, "Notes/MixedCase", "---\ntitle: Mixed\n---\nbody\n")
	if _, err := c.GetPage(ctx, "notes/mixedcase", false); err != nil {
		t.Errorf("lowercased slug not found: %v", err)
	}

	// Unpinned clients may read but never write.
	u := fake.Dial(t, gbrain.Options{})
	_, err = u.PutPage(ctx, "catalog/x", "x")
	wantClass(t, err, gbrain.Definite, gbrain.ErrNoSource)
	wantClass(t, u.CheckSource(ctx), gbrain.Definite, gbrain.ErrNoSource)
}

func TestGarbageAnswers(t *testing.T) {
	fake := gbraintest.New(t, src)
	c := fake.Dial(t, gbrain.Options{ExpectedSource: src})
	fake.SetControl(t, gbraintest.Control{Garbage: []string{"get_page", "put_page", "search"}})

	_, err := c.GetPage(ctx, "catalog/x", true)
	wantClass(t, err, gbrain.Definite, gbrain.ErrGarbage)
	if !strings.Contains(err.Error(), "gbrain answered garbage") || !strings.Contains(err.Error(), "502 Bad Gateway") {
		t.Errorf("message %q", err)
	}
	_, err = c.Search(ctx, "x", 1)
	wantClass(t, err, gbrain.Definite, gbrain.ErrGarbage)
	// A garbled answer to a write leaves its outcome unknown.
	_, err = c.PutPage(ctx, "catalog/x", "---\ntitle: X\n---\nbody\n")
	wantClass(t, err, gbrain.Ambiguous, gbrain.ErrGarbage)
	if fake.Page(t, src, "catalog/x") == nil {
		t.Error("the fake should have applied the write before answering garbage")
	}
}

func TestPGLiteAlreadyOpen(t *testing.T) {
	fake := gbraintest.New(t, src)
	fake.SetControl(t, gbraintest.Control{ExitAtStart: "pglite"})
	_, err := gbrain.Dial(ctx, fake.Connection(), gbrain.Options{ExpectedSource: src, HandshakeTimeout: 10 * time.Second})
	wantClass(t, err, gbrain.Definite, gbrain.ErrBrainLocked, gbrain.ErrProcessExited)
	var pe *gbrain.ProcessExitedError
	if !errors.As(err, &pe) || pe.Code != 1 {
		t.Fatalf("process exit %+v", pe)
	}
	msg := err.Error()
	for _, want := range []string{"gbrain process exited (code 1)", "already open", "Postgres-backed brain", "gbrain serve --http"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if errors.Is(err, gbrain.ErrHandshakeTimeout) {
		t.Error("an exit is not a timeout")
	}
}

func TestHandshakeTimeoutVersusExit(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		fake := gbraintest.New(t, src)
		// A GBrain that would take an hour to answer: a Dial that waited
		// for it instead of its handshake timeout would hang the test.
		fake.SetControl(t, gbraintest.Control{StartDelayMs: int(time.Hour / time.Millisecond)})
		_, err := gbrain.Dial(ctx, fake.Connection(), gbrain.Options{ExpectedSource: src, HandshakeTimeout: 300 * time.Millisecond})
		wantClass(t, err, gbrain.Transient, gbrain.ErrHandshakeTimeout)
		if errors.Is(err, gbrain.ErrProcessExited) {
			t.Error("a timeout is not an exit")
		}
		if !strings.Contains(err.Error(), "gbrain handshake timed out after 300ms") {
			t.Errorf("message %q", err)
		}
	})
	t.Run("exit", func(t *testing.T) {
		fake := gbraintest.New(t, src)
		fake.SetControl(t, gbraintest.Control{ExitAtStart: "crash"})
		_, err := gbrain.Dial(ctx, fake.Connection(), gbrain.Options{ExpectedSource: src, HandshakeTimeout: 10 * time.Second})
		wantClass(t, err, gbrain.Transient, gbrain.ErrProcessExited)
		if errors.Is(err, gbrain.ErrHandshakeTimeout) || errors.Is(err, gbrain.ErrBrainLocked) {
			t.Error("a crash is neither a timeout nor a locked brain")
		}
		if !strings.Contains(err.Error(), "gbrain process exited (code 3)") || !strings.Contains(err.Error(), "simulated crash") {
			t.Errorf("message %q", err)
		}
	})
	t.Run("no such command", func(t *testing.T) {
		_, err := gbrain.Dial(ctx, gbrain.Connection{Command: "/nonexistent/gbrain"}, gbrain.Options{})
		wantClass(t, err, gbrain.Definite)
	})
}

func TestDropAfterApplyIsAmbiguous(t *testing.T) {
	fake := gbraintest.New(t, src)
	c := fake.Dial(t, gbrain.Options{ExpectedSource: src})
	slug := slugOf(t, "p-drop")
	content := encode(t, card("p-drop", 1))
	fake.SetControl(t, gbraintest.Control{DropAfterApply: []string{"put_page"}})

	_, err := c.PutPage(ctx, slug, content)
	wantClass(t, err, gbrain.Ambiguous, gbrain.ErrConnectionLost, gbrain.ErrProcessExited)
	if !gbrain.IsAmbiguous(err) || gbrain.IsTransient(err) {
		t.Error("IsAmbiguous/IsTransient disagree")
	}
	if !strings.Contains(err.Error(), "exited (code 2)") || !strings.Contains(err.Error(), "dropped after applying put_page") {
		t.Errorf("message %q", err)
	}
	// The connection stays down; nothing more is sent on it.
	if !errors.Is(c.Lost(), gbrain.ErrProcessExited) {
		t.Errorf("Lost() = %v", c.Lost())
	}
	_, err = c.GetPage(ctx, slug, true)
	wantClass(t, err, gbrain.Transient, gbrain.ErrNotConnected)

	// A new connection reads back: the write did happen.
	fake.SetControl(t, gbraintest.Control{})
	c2 := fake.Dial(t, gbrain.Options{ExpectedSource: src})
	p, err := c2.GetPage(ctx, slug, true)
	if err != nil {
		t.Fatalf("read back after drop: %v", err)
	}
	if card, err := gbrain.Decode(p.Content); err != nil || card.ProjectID != "p-drop" {
		t.Errorf("read-back card %+v %v", card, err)
	}
	if n := fake.Calls(t)["put_page"]; n != 1 {
		t.Errorf("put_page calls = %d", n)
	}
}

func TestDropBeforeApplyIsAmbiguousToo(t *testing.T) {
	fake := gbraintest.New(t, src)
	c := fake.Dial(t, gbrain.Options{ExpectedSource: src})
	slug := slugOf(t, "p-drop")
	fake.SetControl(t, gbraintest.Control{DropBeforeApply: []string{"put_page"}})
	_, err := c.PutPage(ctx, slug, encode(t, card("p-drop", 1)))
	// The client cannot tell the two drops apart: both are ambiguous.
	wantClass(t, err, gbrain.Ambiguous, gbrain.ErrConnectionLost)

	fake.SetControl(t, gbraintest.Control{})
	c2 := fake.Dial(t, gbrain.Options{ExpectedSource: src})
	if _, err := c2.GetPage(ctx, slug, false); !errors.Is(err, gbrain.ErrPageNotFound) {
		t.Errorf("read back: %v", err)
	}
}

func TestCallTimeout(t *testing.T) {
	fake := gbraintest.New(t, src)
	c := fake.Dial(t, gbrain.Options{ExpectedSource: src, CallTimeout: 200 * time.Millisecond})
	slug := slugOf(t, "p-slow")
	fake.SetControl(t, gbraintest.Control{DelayMs: 700, DelayTools: []string{"put_page", "get_page"}})

	_, err := c.GetPage(ctx, slug, false)
	wantClass(t, err, gbrain.Transient, gbrain.ErrCallTimeout)
	_, err = c.PutPage(ctx, slug, encode(t, card("p-slow", 1)))
	wantClass(t, err, gbrain.Ambiguous, gbrain.ErrCallTimeout)

	// The slow write lands after we gave up; the connection is still good.
	fake.SetControl(t, gbraintest.Control{})
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.GetPage(ctx, slug, true)
		if err == nil {
			break
		}
		if !(errors.Is(err, gbrain.ErrPageNotFound) || gbrain.IsTransient(err)) || time.Now().After(deadline) {
			t.Fatalf("read back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A cancelled caller context during a write is ambiguous as well.
	fake.SetControl(t, gbraintest.Control{DelayMs: 500, DelayTools: []string{"put_page"}})
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = c.PutPage(cctx, slugOf(t, "p-cancel"), encode(t, card("p-cancel", 1)))
	wantClass(t, err, gbrain.Ambiguous, context.DeadlineExceeded)
}

func TestSourceSafety(t *testing.T) {
	fake := gbraintest.New(t, src)

	_, err := gbrain.Dial(ctx, fake.Connection(), gbrain.Options{ExpectedSource: "Bad_Source"})
	wantClass(t, err, gbrain.Definite, gbrain.ErrInvalidSourceID)

	conn := fake.Connection()
	conn.Env["GBRAIN_SOURCE"] = "other"
	_, err = gbrain.Dial(ctx, conn, gbrain.Options{ExpectedSource: src})
	wantClass(t, err, gbrain.Definite)

	// Well-formed but unregistered: CheckSource says so; a put fails on
	// GBrain's foreign key.
	c := fake.Dial(t, gbrain.Options{ExpectedSource: "not-registered"})
	err = c.CheckSource(ctx)
	wantClass(t, err, gbrain.Definite, gbrain.ErrSourceMissing)
	if !strings.Contains(err.Error(), "gbrain sources add not-registered") {
		t.Errorf("message %q", err)
	}
	_, err = c.PutPage(ctx, "catalog/x", "---\ntitle: X\n---\nbody\n")
	wantClass(t, err, gbrain.Definite, gbrain.ErrInternal)
	if !strings.Contains(err.Error(), "pages_source_id_fkey") {
		t.Errorf("message %q", err)
	}

	// A server that serves another source than ours: every page read is
	// refused, search hits are dropped.
	fake.Put(t, "default", "catalog/codegraph/p-1", encode(t, card("p-1", 1)))
	fake.Env["GBRAIN_FAKE_FORCE_SOURCE"] = "default"
	w := fake.Dial(t, gbrain.Options{ExpectedSource: src})
	_, err = w.GetPage(ctx, "catalog/codegraph/p-1", true)
	wantClass(t, err, gbrain.Definite, gbrain.ErrForeignSource)
	var fe *gbrain.ForeignSourceError
	if !errors.As(err, &fe) || fe.Source != "default" || fe.Expected != src {
		t.Errorf("foreign source %+v", fe)
	}
	_, err = w.ListPages(ctx, gbrain.ListOptions{Tag: gbrain.CardTag})
	wantClass(t, err, gbrain.Definite, gbrain.ErrForeignSource)
	hits, err := w.Search(ctx, "payments", 5)
	if err != nil || len(hits) != 0 {
		t.Errorf("foreign hits kept: %+v %v", hits, err)
	}
}

func TestConnectionValidate(t *testing.T) {
	bad := []gbrain.Connection{
		{},
		{Command: "gbrain"},
		{Command: "/bin/gbrain", URL: "http://x"},
		{Command: "/bin/gbrain", Cwd: "rel"},
		{Command: "/bin/gbrain", TokenEnv: "T"},
		{URL: "ftp://x"},
		{URL: "http://user:pw@x/mcp"},
		{URL: "http://x/mcp", Args: []string{"a"}},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v validated", c)
		}
	}
	_, err := gbrain.Dial(ctx, gbrain.Connection{URL: "http://127.0.0.1:1/mcp", TokenEnv: "CGCAT_TEST_EMPTY_TOKEN"}, gbrain.Options{})
	wantClass(t, err, gbrain.Definite)
}

// Every card shape survives GBrain's re-serialisation.
func TestCardsThroughGBrain(t *testing.T) {
	fake := gbraintest.New(t, src)
	c := fake.Dial(t, gbrain.Options{ExpectedSource: src})
	cards := []struct {
		card gbrain.Card
		proj string
	}{
		{gbrain.Card{ProjectID: "p-min", MachineID: "m1", Name: "min"}, ""},
		{gbrain.Card{ProjectID: "p-cjk", MachineID: "m1", Name: "支付 SDK: 'quoted' #1", Description: "- starts with a dash, has: colons # and hashes",
			Packages: []string{"@scope/pkg", "123", "true", "null", "2024-01-02"}, Keywords: []string{"[x]", "a, b"}, Tags: []string{"Mixed Case"},
			RecordRevision: 1 << 40, Path: "/home/dev/code/acme payments/支付"}, gbrain.ProjectionLocalPaths},
	}
	for _, tc := range cards {
		content, err := gbrain.Encode(tc.card, gbrain.EncodeOptions{Projection: tc.proj})
		if err != nil {
			t.Fatal(err)
		}
		slug := slugOf(t, tc.card.ProjectID)
		if _, err := c.PutPage(ctx, slug, content); err != nil {
			t.Fatal(err)
		}
		p, err := c.GetPage(ctx, slug, true)
		if err != nil {
			t.Fatal(err)
		}
		got, err := gbrain.Decode(p.Content)
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.card.ProjectID, err, p.Content)
		}
		if want := gbrain.Normalize(tc.card); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v\n%s", tc.card.ProjectID, got, want, p.Content)
		}
	}
}

// delete_page soft-deletes: the page is gone for get, a second delete says
// it already was, an unknown slug is page_not_found — and a lost answer is
// ambiguous (the delete may have landed).
func TestDeletePage(t *testing.T) {
	f := gbraintest.New(t, src)
	c := f.Dial(t, gbrain.Options{ExpectedSource: src})
	slug := slugOf(t, "p-del")
	if _, err := c.PutPage(ctx, slug, encode(t, card("p-del", 1))); err != nil {
		t.Fatal(err)
	}
	r, err := c.DeletePage(ctx, slug)
	if err != nil || r.Status != gbrain.StatusSoftDeleted || r.Slug != slug {
		t.Fatalf("delete: %+v %v", r, err)
	}
	_, err = c.GetPage(ctx, slug, true)
	wantClass(t, err, gbrain.Definite, gbrain.ErrPageNotFound)
	if p := f.Page(t, src, slug); p == nil || p.DeletedAt == "" {
		t.Fatalf("the fake should keep the page soft-deleted: %+v", p)
	}
	if r, err = c.DeletePage(ctx, slug); err != nil || r.Status != gbrain.StatusAlreadyDeleted {
		t.Fatalf("second delete: %+v %v", r, err)
	}
	_, err = c.DeletePage(ctx, slugOf(t, "p-never"))
	wantClass(t, err, gbrain.Definite, gbrain.ErrPageNotFound)
	_, err = c.DeletePage(ctx, "Catalog/Upper")
	wantClass(t, err, gbrain.Definite, gbrain.ErrInvalidSlug)

	unpinned := f.Dial(t, gbrain.Options{})
	_, err = unpinned.DeletePage(ctx, slug)
	wantClass(t, err, gbrain.Definite, gbrain.ErrNoSource)

	f.SetControl(t, gbraintest.Control{DropAfterApply: []string{"delete_page"}})
	if _, err := c.PutPage(ctx, slug, encode(t, card("p-del", 2))); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeletePage(ctx, slug)
	wantClass(t, err, gbrain.Ambiguous)
	if p := f.Page(t, src, slug); p == nil || p.DeletedAt == "" {
		t.Fatalf("the dropped delete was applied first: %+v", p)
	}
}

// OnStderr sees what the child says while it runs, line by line.
func TestOnStderrStreamsTheChildsLines(t *testing.T) {
	f := gbraintest.New(t, src)
	var mu sync.Mutex
	var lines []string
	c := f.Dial(t, gbrain.Options{ExpectedSource: src, OnStderr: func(l string) {
		mu.Lock()
		lines = append(lines, l)
		mu.Unlock()
	}})
	_ = c
	// The child wrote the line before it answered; its copy to us may lag.
	for deadline := time.Now().Add(5 * time.Second); ; {
		mu.Lock()
		got := strings.Join(lines, "\n")
		mu.Unlock()
		if strings.Contains(got, "serving MCP over stdio") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stderr lines: %q", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The expected brain is pinned for a stdio child (GBRAIN_BRAIN_ID, as the
// source is with GBRAIN_SOURCE): an inherited value never wins, and a brain
// GBrain does not know stops the child with GBrain's own words.
func TestExpectedBrainIsPinnedForAStdioChild(t *testing.T) {
	t.Setenv("GBRAIN_BRAIN_ID", "inherited-mount")
	f := gbraintest.New(t, src)
	f.Dial(t, gbrain.Options{ExpectedSource: src, ExpectedBrain: "host"})
	starts := f.Starts(t)
	if len(starts) != 1 || starts[0].EnvBrain != "host" {
		t.Fatalf("the child saw GBRAIN_BRAIN_ID %+v", starts)
	}
	_, err := gbrain.Dial(ctx, f.Connection(), gbrain.Options{ExpectedSource: src, ExpectedBrain: "work-notes", HandshakeTimeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), `Unknown brain: "work-notes"`) {
		t.Fatalf("an unknown brain: %v", err)
	}
	_, err = gbrain.Dial(ctx, f.Connection(), gbrain.Options{ExpectedSource: src, ExpectedBrain: "Bad Brain"})
	wantClass(t, err, gbrain.Definite)
	conn := f.Connection()
	conn.Env["GBRAIN_BRAIN_ID"] = "other"
	_, err = gbrain.Dial(ctx, conn, gbrain.Options{ExpectedSource: src, ExpectedBrain: "host"})
	if err == nil || !strings.Contains(err.Error(), "conflicts with the expected brain") {
		t.Fatalf("a conflicting env: %v", err)
	}
}
