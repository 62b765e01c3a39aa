package fakebrain

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// OAuth as `gbrain serve --http` does it (GBrain 0.46.28.0,
// src/core/oauth-provider.ts and src/commands/serve-http.ts): clients
// registered with `gbrain auth register-client` carry a write source and
// scopes; the client_credentials grant mints access tokens (no refresh
// token) that expire after the client's token TTL or the server's
// --token-ttl; static tokens from `gbrain auth create` never expire and
// write to the "default" source. Secrets and tokens are stored as SHA-256
// hashes, as GBrain does.

// OAuthClient is one registered client.
type OAuthClient struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	SecretHash string   `json:"secret_hash"`
	Grants     []string `json:"grants"`
	Scopes     []string `json:"scopes"`
	Source     string   `json:"source"`
	TokenTTL   int      `json:"token_ttl,omitempty"` // seconds; 0 = the server's --token-ttl
	Revoked    bool     `json:"revoked,omitempty"`
}

// AccessToken is one issued OAuth access token.
type AccessToken struct {
	Hash      string   `json:"hash"`
	ClientID  string   `json:"client_id"`
	Scopes    []string `json:"scopes"`
	ExpiresAt int64    `json:"expires_at"` // Unix seconds
}

// LegacyToken is a static token from `gbrain auth create`.
type LegacyToken struct {
	Name    string `json:"name"`
	Hash    string `json:"hash"`
	Revoked bool   `json:"revoked,omitempty"`
}

// HTTPStats counts what the HTTP side saw (tests and figures).
type HTTPStats struct {
	TokensIssued int `json:"tokens_issued"`
	TokenDenied  int `json:"token_denied"` // token requests refused (bad credentials, rate limit)
	Unauthorized int `json:"unauthorized"` // 401 answers on /mcp
	Requests     int `json:"requests"`     // POST /mcp requests that passed authentication
}

// Caller is who an authenticated HTTP request comes from.
type Caller struct {
	OAuth      bool
	ClientID   string
	ClientName string
	TokenName  string // legacy
	Scopes     []string
	ExpiresAt  int64
	Source     string   // where its writes land
	Federated  []string // reads it may name (OAuth); nil = any (legacy)
}

func hashSecret(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// RegisterClient is `gbrain auth register-client NAME --grant-types G
// --scopes S --source SOURCE [--token-ttl N]`. The source must be
// registered. It returns the client id and its secret (shown once).
func (b *Brain) RegisterClient(st *State, name string, grants, scopes []string, source string, tokenTTL int) (id, secret string, err error) {
	if source == "" {
		source = "default"
	}
	if !slices.Contains(b.registered(st), source) {
		return "", "", fmt.Errorf("Source %q does not exist. Create it first: gbrain sources add %s ...", source, source)
	}
	if len(grants) == 0 {
		grants = []string{"client_credentials"}
	}
	if len(scopes) == 0 {
		scopes = []string{"read"}
	}
	id = "gbrain_cl_" + randomHex(32)
	secret = "gbrain_cs_" + randomHex(32)
	st.Clients = append(st.Clients, &OAuthClient{ID: id, Name: name, SecretHash: hashSecret(secret),
		Grants: grants, Scopes: scopes, Source: source, TokenTTL: tokenTTL})
	return id, secret, nil
}

// CreateToken is `gbrain auth create NAME`: a static token with full
// access that writes to "default".
func CreateToken(st *State, name string) string {
	tok := "gbrain_" + randomHex(32)
	st.Legacy = append(st.Legacy, &LegacyToken{Name: name, Hash: hashSecret(tok)})
	return tok
}

func (st *State) client(id string) *OAuthClient {
	for _, c := range st.Clients {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// TokenAnswer is the token endpoint's success body.
type TokenAnswer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
	Scope       string `json:"scope"`
}

// ExchangeClientCredentials mints an access token; an error's text is
// GBrain's error_description (answered as invalid_grant).
func ExchangeClientCredentials(st *State, clientID, secret, scope string, serverTTL int, now time.Time) (*TokenAnswer, error) {
	c := st.client(clientID)
	switch {
	case c == nil:
		return nil, fmt.Errorf("Client not found")
	case c.Revoked:
		return nil, fmt.Errorf("Client has been revoked")
	case !slices.Contains(c.Grants, "client_credentials"):
		return nil, fmt.Errorf("Client credentials grant not authorized for this client")
	case c.SecretHash != hashSecret(secret):
		return nil, fmt.Errorf("Invalid client secret")
	}
	requested := c.Scopes
	if scope != "" {
		requested = strings.Fields(scope)
	}
	granted := []string{}
	for _, s := range requested {
		if hasScope(c.Scopes, s) {
			granted = append(granted, s)
		}
	}
	ttl := serverTTL
	if c.TokenTTL > 0 {
		ttl = c.TokenTTL
	}
	tok := "gbrain_at_" + randomHex(32)
	// GBrain: expires_at = floor(now) + ttl, and a token is expired once
	// expires_at < now (fractional): it lives between ttl-1 and ttl s.
	st.Tokens = append(st.Tokens, &AccessToken{Hash: hashSecret(tok), ClientID: clientID, Scopes: granted, ExpiresAt: now.Unix() + int64(ttl)})
	st.HTTP.TokensIssued++
	return &TokenAnswer{AccessToken: tok, TokenType: "bearer", ExpiresIn: ttl, Scope: strings.Join(granted, " ")}, nil
}

// VerifyToken is GBrain's verifyAccessToken plus the SDK's expiry check:
// the caller, or the error_description of the 401.
func VerifyToken(st *State, tok string, now time.Time) (*Caller, string) {
	h := hashSecret(tok)
	for _, t := range st.Tokens {
		if t.Hash != h {
			continue
		}
		if float64(t.ExpiresAt) < float64(now.UnixNano())/1e9 {
			return nil, "Token expired"
		}
		c := st.client(t.ClientID)
		if c == nil || c.Revoked {
			return nil, "Invalid token"
		}
		return &Caller{OAuth: true, ClientID: c.ID, ClientName: c.Name, Scopes: t.Scopes, ExpiresAt: t.ExpiresAt,
			Source: c.Source, Federated: []string{c.Source}}, ""
	}
	for _, l := range st.Legacy {
		if l.Hash == h && !l.Revoked {
			return &Caller{TokenName: l.Name, ClientID: l.Name, ClientName: l.Name,
				Scopes: []string{"read", "write", "admin"}, ExpiresAt: now.Unix() + 365*24*3600, Source: "default"}, ""
		}
	}
	return nil, "Invalid token"
}

// ExpireTokens makes every access token issued so far expired (as if their
// time had run out).
func ExpireTokens(st *State, now time.Time) {
	for _, t := range st.Tokens {
		t.ExpiresAt = now.Unix() - 1
	}
}

// hasScope: admin implies every scope, write implies read.
func hasScope(granted []string, want string) bool {
	for _, s := range granted {
		if s == want || s == "admin" || (want == "read" && s == "write") {
			return true
		}
	}
	return false
}

// HasScope is exported for the server's per-tool check.
func HasScope(granted []string, want string) bool { return hasScope(granted, want) }
