package gbrain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// fetch asks the token endpoint for a new token (caller holds fetchMu).
func (s *tokenSource) fetch(ctx context.Context) error {
	s.mu.Lock()
	endpoint := s.endpoint
	s.mu.Unlock()
	if endpoint == "" {
		ep, err := s.discover(ctx)
		if err != nil {
			return err
		}
		endpoint = ep
		s.mu.Lock()
		s.endpoint = ep
		s.mu.Unlock()
	}
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {s.clientID},
		"client_secret": {s.secret},
		"scope":         {TokenScope},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return &AuthError{Class: Definite, Err: fmt.Errorf("gbrain token endpoint %s: %w", endpoint, err)}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	start := s.now()
	resp, err := withRedirects(s.hc, noRedirects).Do(req)
	if errors.Is(err, ErrRedirect) {
		s.forgetEndpoint()
		return &AuthError{Class: Definite, Err: fmt.Errorf("gbrain token endpoint %s: %w", endpoint, stripURLError(err))}
	}
	if err != nil {
		s.forgetEndpoint()
		return &AuthError{Class: Transient, Err: fmt.Errorf("gbrain token endpoint %s: %w", endpoint, stripURLError(err))}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var ans struct {
		AccessToken string      `json:"access_token"`
		TokenType   string      `json:"token_type"`
		ExpiresIn   json.Number `json:"expires_in"`
		Scope       string      `json:"scope"`
		Error       string      `json:"error"`
		Description string      `json:"error_description"`
	}
	jerr := json.Unmarshal(body, &ans)
	switch {
	case resp.StatusCode == http.StatusOK && jerr == nil && ans.AccessToken != "":
	case resp.StatusCode == http.StatusTooManyRequests:
		return &AuthError{Class: Transient, Err: fmt.Errorf("gbrain token endpoint %s: rate limited (HTTP 429: %s); GBrain allows 50 token requests per 15 minutes per address by default — is another process fetching tokens in a loop?", endpoint, oauthReason(ans.Error, ans.Description, body))}
	case resp.StatusCode >= 500:
		return &AuthError{Class: Transient, Err: fmt.Errorf("gbrain token endpoint %s: HTTP %d: %s", endpoint, resp.StatusCode, oauthReason(ans.Error, ans.Description, body))}
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnauthorized:
		return &AuthError{Class: Definite, Err: fmt.Errorf("%w: GBrain refused %s (%s). Check both values; the client must be registered with `gbrain auth register-client NAME --grant-types client_credentials --scopes \"read write\" --source SOURCE`",
			ErrCredentialsRefused, s.describe(), oauthReason(ans.Error, ans.Description, body))}
	default:
		s.forgetEndpoint()
		return &AuthError{Class: Definite, Err: fmt.Errorf("gbrain token endpoint %s: HTTP %d: %s", endpoint, resp.StatusCode, oauthReason(ans.Error, ans.Description, body))}
	}
	if !strings.EqualFold(ans.TokenType, "bearer") {
		return &AuthError{Class: Definite, Err: fmt.Errorf("gbrain token endpoint %s: token_type %q, want bearer", endpoint, ans.TokenType)}
	}
	lifetime := time.Hour // expires_in is only RECOMMENDED; a 401 renews it anyway
	if ans.ExpiresIn != "" {
		secs, err := strconv.ParseFloat(string(ans.ExpiresIn), 64)
		if err != nil || secs <= 0 {
			return &AuthError{Class: Definite, Err: fmt.Errorf("gbrain token endpoint %s: expires_in %q is not a positive number", endpoint, ans.ExpiresIn)}
		}
		lifetime = time.Duration(secs * float64(time.Second))
	}
	s.mu.Lock()
	s.tok = ans.AccessToken
	s.gen++
	s.fetches++
	// Counted from when the request left: the server's clock started no
	// earlier.
	s.expires = start.Add(lifetime)
	s.lifetime = lifetime
	s.scopes = strings.Fields(ans.Scope)
	s.nextTry = time.Time{}
	s.mu.Unlock()
	s.log.Debug("fetched a GBrain token", "expires_in", lifetime, "scopes", ans.Scope)
	return nil
}

func (s *tokenSource) forgetEndpoint() {
	s.mu.Lock()
	s.endpoint = ""
	s.mu.Unlock()
}

// discover reads GBrain's authorization-server metadata and returns the
// token endpoint to use: the one the document names, on the host of the
// configured url. A document naming `localhost` while the url says
// `127.0.0.1` (GBrain without --public-url) is the same server: only the
// path is taken. Another host is refused: client secrets go only to the
// host the config names.
func (s *tokenSource) discover(ctx context.Context) (string, error) {
	where := s.origin.String() + "/.well-known/oauth-authorization-server"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return "", &AuthError{Class: Definite, Err: err}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.hc.Do(req)
	if errors.Is(err, ErrRedirect) {
		return "", &AuthError{Class: Definite, Err: fmt.Errorf("gbrain OAuth discovery %s: %w", where, stripURLError(err))}
	}
	if err != nil {
		return "", &AuthError{Class: Transient, Err: fmt.Errorf("gbrain OAuth discovery %s: %w", where, stripURLError(err))}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256<<10))
	switch {
	case resp.StatusCode >= 500:
		return "", &AuthError{Class: Transient, Err: fmt.Errorf("gbrain OAuth discovery %s: HTTP %d", where, resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return "", &AuthError{Class: Definite, Err: fmt.Errorf("gbrain OAuth discovery %s: HTTP %d; is url the MCP endpoint of `gbrain serve --http` (e.g. http://127.0.0.1:3131/mcp)?", where, resp.StatusCode)}
	}
	var md struct {
		Issuer        string   `json:"issuer"`
		TokenEndpoint string   `json:"token_endpoint"`
		Grants        []string `json:"grant_types_supported"`
		AuthMethods   []string `json:"token_endpoint_auth_methods_supported"`
	}
	if err := json.Unmarshal(body, &md); err != nil || md.TokenEndpoint == "" {
		return "", &AuthError{Class: Definite, Err: fmt.Errorf("gbrain OAuth discovery %s: no token_endpoint in the answer: %w", where, garbage("not OAuth metadata", string(body)))}
	}
	if len(md.Grants) > 0 && !slices.Contains(md.Grants, "client_credentials") {
		return "", &AuthError{Class: Definite, Err: fmt.Errorf("gbrain OAuth discovery %s: the server does not offer the client_credentials grant (offers %s)", where, strings.Join(md.Grants, ", "))}
	}
	if len(md.AuthMethods) > 0 && !slices.Contains(md.AuthMethods, "client_secret_post") {
		return "", &AuthError{Class: Definite, Err: fmt.Errorf("gbrain OAuth discovery %s: the token endpoint does not take credentials in the form body (client_secret_post); it offers %s", where, strings.Join(md.AuthMethods, ", "))}
	}
	ep, err := sameServer(s.origin, md.TokenEndpoint)
	if err != nil {
		return "", &AuthError{Class: Definite, Err: fmt.Errorf("gbrain OAuth discovery %s: %w", where, err)}
	}
	return ep, nil
}

// sameServer resolves the token endpoint a discovery document names
// against the configured origin: same origin as is; a loopback alias
// (localhost, 127.0.0.1, ::1) with the same scheme and port becomes the
// configured host; anything else is an error.
func sameServer(origin *url.URL, endpoint string) (string, error) {
	ep, err := origin.Parse(endpoint)
	if err != nil || (ep.Scheme != "http" && ep.Scheme != "https") {
		return "", fmt.Errorf("token_endpoint %q is not an http(s) URL", endpoint)
	}
	if ep.Scheme == origin.Scheme && strings.EqualFold(ep.Host, origin.Host) {
		return ep.String(), nil
	}
	if ep.Scheme == origin.Scheme && portOf(ep) == portOf(origin) && loopback(ep.Hostname()) && loopback(origin.Hostname()) {
		ep.Host = origin.Host
		return ep.String(), nil
	}
	return "", fmt.Errorf("the token endpoint %s is on another server than the configured url (%s); cgcat sends client secrets only to the configured server. "+
		"Set url to GBrain's public address (its --public-url), or start `gbrain serve --http --public-url %s`", endpoint, origin, origin)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// oauthReason is an OAuth error answer in a few words, never echoing a
// request.
func oauthReason(code, desc string, body []byte) string {
	switch {
	case code != "" && desc != "":
		return code + ": " + desc
	case code != "":
		return code
	}
	const max = 200
	s := strings.TrimSpace(string(body))
	if len(s) > max {
		s = s[:max] + "…"
	}
	if s == "" {
		s = "(empty answer)"
	}
	return strings.ToValidUTF8(s, "")
}

// bearerErrorDescription returns error_description (else error) from a
// WWW-Authenticate: Bearer challenge.
func bearerErrorDescription(values []string) string {
	for _, v := range values {
		for _, key := range []string{"error_description", "error"} {
			i := strings.Index(v, key+`="`)
			if i < 0 {
				continue
			}
			rest := v[i+len(key)+2:]
			if j := strings.IndexByte(rest, '"'); j >= 0 {
				return rest[:j]
			}
		}
	}
	return ""
}

// stripURLError drops the *url.Error wrapper (method and URL) that net/http
// adds; the callers name the URL themselves.
func stripURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
