package gbrain_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
)

// other is a server on another origin that records every request it gets,
// with its Authorization header and body.
type other struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newOther(t *testing.T) *other {
	o := &other{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		o.mu.Lock()
		o.seen = append(o.seen, r.Method+" "+r.URL.Path+" auth="+r.Header.Get("Authorization")+" body="+string(b))
		o.mu.Unlock()
		http.Error(w, "not here", http.StatusNotFound)
	}))
	t.Cleanup(o.Close)
	return o
}

// leaked is every request other saw that carried a credential.
func (o *other) leaked(secret string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, s := range o.seen {
		if strings.Contains(s, secret) || !strings.Contains(s, "auth= body=") {
			out = append(out, s)
		}
	}
	return out
}

// Credentials go only to the configured origin (issue 23, case 6): a
// configured server that answers 307 to another host, at the token
// endpoint, at /mcp or at its discovery document, makes the dial fail with
// an error naming both origins, and the other host receives neither the
// client secret nor the bearer token.
func TestRedirectToAnotherOriginCarriesNoCredentials(t *testing.T) {
	const secret, token = "client-s3cret", "bearer-t0ken"
	t.Setenv("CGCAT_TEST_RID", "cgcat-client")
	t.Setenv("CGCAT_TEST_RSECRET", secret)
	t.Setenv("CGCAT_TEST_RTOKEN", token)
	for _, tc := range []struct {
		name     string
		redirect string // the path the configured server redirects
		conn     func(url string) gbrain.Connection
	}{
		{"token endpoint", "/token", func(u string) gbrain.Connection {
			return gbrain.Connection{URL: u + "/mcp", ClientIDEnv: "CGCAT_TEST_RID", ClientSecretEnv: "CGCAT_TEST_RSECRET"}
		}},
		{"mcp with a static token", "/mcp", func(u string) gbrain.Connection {
			return gbrain.Connection{URL: u + "/mcp", TokenEnv: "CGCAT_TEST_RTOKEN"}
		}},
		{"mcp with an OAuth token", "/mcp", func(u string) gbrain.Connection {
			return gbrain.Connection{URL: u + "/mcp", ClientIDEnv: "CGCAT_TEST_RID", ClientSecretEnv: "CGCAT_TEST_RSECRET"}
		}},
		{"discovery document", "/.well-known/oauth-authorization-server", func(u string) gbrain.Connection {
			return gbrain.Connection{URL: u + "/mcp", ClientIDEnv: "CGCAT_TEST_RID", ClientSecretEnv: "CGCAT_TEST_RSECRET"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOther(t)
			var cfgURL string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == tc.redirect {
					http.Redirect(w, r, o.URL+r.URL.Path, http.StatusTemporaryRedirect)
					return
				}
				switch r.URL.Path {
				case "/.well-known/oauth-authorization-server":
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"issuer":"`+cfgURL+`","token_endpoint":"`+cfgURL+`/token","grant_types_supported":["client_credentials"],"token_endpoint_auth_methods_supported":["client_secret_post"]}`)
				case "/token":
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"access_token":"`+token+`","token_type":"bearer","expires_in":3600}`)
				default:
					http.Redirect(w, r, o.URL+r.URL.Path, http.StatusTemporaryRedirect)
				}
			}))
			defer srv.Close()
			cfgURL = srv.URL
			_, err := gbrain.Dial(ctx, tc.conn(srv.URL), gbrain.Options{HandshakeTimeout: 5 * time.Second, CallTimeout: 5 * time.Second})
			wantClass(t, err, gbrain.Definite, gbrain.ErrRedirect)
			if msg := err.Error(); !strings.Contains(msg, srv.URL) || !strings.Contains(msg, o.URL) {
				t.Errorf("the error does not name both origins: %s", msg)
			}
			if msg := err.Error(); strings.Contains(msg, secret) || strings.Contains(msg, token) {
				t.Errorf("the error carries a credential: %s", msg)
			}
			if l := o.leaked(secret); len(l) > 0 {
				t.Errorf("the other origin received credentials: %q", l)
			}
		})
	}
}
