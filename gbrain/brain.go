package gbrain

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Brain is what cgcat's projection asks of a GBrain: the few typed calls
// the projector, the mirror, retraction and recall make. [*Client]
// implements it over stdio or HTTP; tests run the same client over the
// in-process fake of package gbraintest ([DialTransport]). Every error is
// classed ([Classify]): Definite, Transient, or Ambiguous for a write whose
// outcome is unknown. Implementations are safe for concurrent use.
type Brain interface {
	// GetPage reads one page of the expected source, with its
	// re-serialised markdown when includeContent. A page that is absent,
	// soft-deleted, of another source or answered under another slug is an
	// error (ErrPageNotFound, ErrForeignSource, ErrSlugMismatch: Definite);
	// a read never changes GBrain, so a lost answer is Transient.
	GetPage(ctx context.Context, slug string, includeContent bool) (*Page, error)
	// PutPage writes a whole page (last writer wins, no compare-and-swap)
	// and returns only when GBrain answered written or skipped for this
	// very slug. A lost answer is Ambiguous: read back and compare before
	// any retry. It refuses to write without an expected source.
	PutPage(ctx context.Context, slug, content string) (*PutResult, error)
	// DeletePage soft-deletes a page (restorable 72 h; a later put brings it
	// back). ErrPageNotFound when there is none; a lost answer is
	// Ambiguous (read back: absent means deleted).
	DeletePage(ctx context.Context, slug string) (*DeleteResult, error)
	// ListPages returns one page of list_pages rows (no cursor: offset, or
	// updated_after, which keeps rows strictly later; a soft delete does not
	// move updated_at). Rows shift under concurrent writes. A row of
	// another source is ErrForeignSource (Definite).
	ListPages(ctx context.Context, o ListOptions) ([]PageRef, error)
	// Search is keyword search (any word, title and body); Query is the
	// semantic query pinned to the expected source. Hits of other sources
	// are dropped.
	Search(ctx context.Context, query string, limit int) ([]Chunk, error)
	Query(ctx context.Context, o QueryOptions) ([]Chunk, error)
	// CheckSource confirms the expected source is registered
	// (ErrSourceMissing, Definite, when not: every write would fail).
	CheckSource(ctx context.Context) error
	// Lost says why the connection is gone (nil while usable); a lost
	// connection stays lost: Close it and dial again.
	Lost() error
	// Close ends the connection (a stdio child's stdin first).
	Close() error
}

var _ Brain = (*Client)(nil)

// DialTransport completes the MCP handshake over a transport the caller
// made — a GBrain served inside this process (the tests' fake) — and
// returns a client that behaves as a stdio client does, without a child: a
// transport that reports transport.ErrTransportClosed is a lost
// connection. opts are checked and defaulted as by [Dial]. Errors are
// *DialError.
func DialTransport(ctx context.Context, tr transport.Interface, opts Options) (*Client, error) {
	if opts.ExpectedSource != "" && !ValidSourceID(opts.ExpectedSource) {
		return nil, &DialError{Class: Definite, Err: fmt.Errorf("%w: %q (want [a-z0-9-]{1,32})", ErrInvalidSourceID, opts.ExpectedSource)}
	}
	opts = opts.withDefaults()
	c := &Client{opts: opts, log: opts.Logger, tr: tr}
	c.mc = client.NewClient(tr, client.WithProtocolVersion(ProtocolVersion))
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancelLife = cancel
	if err := c.mc.Start(life); err != nil {
		cancel()
		return nil, &DialError{Class: Transient, Err: fmt.Errorf("start in-process gbrain: %w", err)}
	}
	hctx, hcancel := context.WithTimeout(ctx, opts.HandshakeTimeout)
	defer hcancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = ProtocolVersion
	req.Params.ClientInfo = mcp.Implementation{Name: opts.ClientName, Version: opts.ClientVersion}
	res, err := c.mc.Initialize(hctx, req)
	if err != nil {
		_ = c.shutdown()
		if errors.Is(hctx.Err(), context.DeadlineExceeded) {
			return nil, &DialError{Class: Transient, Err: &HandshakeTimeoutError{After: opts.HandshakeTimeout}}
		}
		return nil, &DialError{Class: Transient, Err: fmt.Errorf("gbrain handshake: %w", err)}
	}
	c.info = ServerInfo{Name: res.ServerInfo.Name, Version: res.ServerInfo.Version, ProtocolVersion: res.ProtocolVersion}
	return c, nil
}
