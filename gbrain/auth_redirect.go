package gbrain

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Credentials go only to the configured origin (R43). net/http follows a
// redirect by itself: a 307 re-sends a POST's body (client_secret in the
// token request) to wherever Location says, and authTransport would add
// the bearer token on every hop. So every HTTP client of a connection has
// a redirect policy: a redirect to another origin (scheme, host and port)
// is an error naming both; the token request, which carries the secret,
// follows no redirect at all; and authTransport adds the token only to a
// request for the configured origin.

// ErrRedirect is the error (wrapped) when GBrain's server answered a
// redirect cgcat does not follow.
var ErrRedirect = errors.New("redirect refused")

// originOf is scheme://host[:port] of u, the host lowercased.
func originOf(u *url.URL) string {
	return u.Scheme + "://" + strings.ToLower(u.Host)
}

// sameOrigin reports whether u is on the configured origin.
func sameOrigin(origin, u *url.URL) bool {
	return u.Scheme == origin.Scheme && strings.EqualFold(u.Host, origin.Host)
}

// sameOriginRedirects is a CheckRedirect that follows a redirect only
// within the configured origin (at most 10, as net/http's default).
func sameOriginRedirects(origin *url.URL) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if !sameOrigin(origin, req.URL) {
			return fmt.Errorf("%w: %s answered a redirect to %s; cgcat sends credentials only to the configured origin %s (set the connection's url to the address GBrain really serves)",
				ErrRedirect, originOf(via[len(via)-1].URL), originOf(req.URL), originOf(origin))
		}
		if len(via) >= 10 {
			return fmt.Errorf("%w: stopped after 10 redirects", ErrRedirect)
		}
		return nil
	}
}

// noRedirects is the CheckRedirect of the token request: the client secret
// is never sent again to where a redirect points, even on the same origin
// (the discovery document names the endpoint; a redirect is not it).
func noRedirects(req *http.Request, via []*http.Request) error {
	return fmt.Errorf("%w: the token endpoint %s answered a redirect to %s; cgcat sends the client secret only to the token endpoint itself, never on a redirect",
		ErrRedirect, via[0].URL.Redacted(), req.URL.Redacted())
}

// withRedirects is a copy of hc with the redirect policy check.
func withRedirects(hc *http.Client, check func(*http.Request, []*http.Request) error) *http.Client {
	c := *hc
	c.CheckRedirect = check
	return &c
}
