package fakeserver

import (
	"context"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Transport is one in-process connection to the server, as a stdio child
// would be one process: calls run in their own goroutine, so a caller whose
// deadline passes gets its answer lost while the call still lands later
// (a slow server finishing a write its client gave up on), and a fault
// switch that drops the connection closes this transport for good
// (transport.ErrTransportClosed, as a child's end of stdout).
type Transport struct {
	inner *transport.InProcessTransport

	mu     sync.Mutex
	closed bool
}

var _ transport.Interface = (*Transport)(nil)

// Transport opens a new in-process connection to m (the server's MCP()).
func (s *Server) Transport(m *server.MCPServer) *Transport {
	return &Transport{inner: transport.NewInProcessTransport(m)}
}

func (t *Transport) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

func (t *Transport) Start(ctx context.Context) error {
	if t.isClosed() {
		return transport.ErrTransportClosed
	}
	return t.inner.Start(ctx)
}

func (t *Transport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if t.isClosed() {
		return nil, transport.ErrTransportClosed
	}
	type answer struct {
		res *transport.JSONRPCResponse
		err error
	}
	dropped := make(chan struct{})
	var once sync.Once
	cctx := withDrop(context.WithoutCancel(ctx), func() {
		once.Do(func() {
			t.mu.Lock()
			t.closed = true
			t.mu.Unlock()
			close(dropped)
		})
	})
	done := make(chan answer, 1)
	go func() {
		res, err := t.inner.SendRequest(cctx, req)
		done <- answer{res, err}
	}()
	select {
	case a := <-done:
		select {
		case <-dropped:
			return nil, transport.ErrTransportClosed
		default:
		}
		if t.isClosed() {
			return nil, transport.ErrTransportClosed
		}
		return a.res, a.err
	case <-dropped:
		return nil, transport.ErrTransportClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (t *Transport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	if t.isClosed() {
		return transport.ErrTransportClosed
	}
	return t.inner.SendNotification(ctx, n)
}

func (t *Transport) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	t.inner.SetNotificationHandler(h)
}

func (t *Transport) Close() error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	return t.inner.Close()
}

func (t *Transport) GetSessionId() string { return "" }
