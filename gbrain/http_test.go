package gbrain_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cgcat/cgcat/gbrain"
)

// An HTTP GBrain (`gbrain serve --http`): the bearer token comes from the
// environment variable named in the connection, at dial time.
func TestHTTPConnection(t *testing.T) {
	s := server.NewMCPServer("gbrain", "0.46.28.0")
	s.AddTool(mcp.NewTool("whoami"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`{"transport": "legacy", "token_name": "cgcat", "scopes": ["read", "write"]}`), nil
	})
	var sawToken atomic.Value
	h := server.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		sawToken.Store(auth)
		if auth != "Bearer s3cret" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="gbrain"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	conn := gbrain.Connection{URL: srv.URL + "/mcp", TokenEnv: "CGCAT_TEST_GBRAIN_TOKEN"}

	t.Setenv("CGCAT_TEST_GBRAIN_TOKEN", "s3cret")
	c, err := gbrain.Dial(context.Background(), conn, gbrain.Options{HandshakeTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	who, err := c.Whoami(context.Background())
	if err != nil || who.Transport != "legacy" || len(who.Scopes) != 2 {
		t.Fatalf("whoami %+v %v", who, err)
	}
	if c.StderrTail() != "" {
		t.Error("an HTTP connection has no stderr")
	}

	t.Setenv("CGCAT_TEST_GBRAIN_TOKEN", "wrong")
	_, err = gbrain.Dial(context.Background(), conn, gbrain.Options{HandshakeTimeout: 5 * time.Second})
	wantClass(t, err, gbrain.Definite)
	if !strings.Contains(err.Error(), "authorization refused") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("message %q (must name the problem, never the token)", err)
	}
	if got, _ := sawToken.Load().(string); got != "Bearer wrong" {
		t.Errorf("server saw %q", got)
	}

	// Nobody listening: transient.
	srv.Close()
	_, err = gbrain.Dial(context.Background(), conn, gbrain.Options{HandshakeTimeout: 2 * time.Second})
	wantClass(t, err, gbrain.Transient)
}
