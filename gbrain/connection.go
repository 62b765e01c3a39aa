package gbrain

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Connection says how to reach GBrain: either a stdio child (Command, with
// Args, Env and Cwd) or an HTTP URL (`gbrain serve --http`, its MCP endpoint
// such as http://127.0.0.1:3131/mcp). An HTTP connection authenticates with
// OAuth client credentials (the client id and secret in the environment
// variables named ClientIDEnv and ClientSecretEnv: tokens are fetched from
// GBrain's token endpoint and renewed before they expire) or with a static
// bearer token (in the variable named TokenEnv; GBrain writes a static
// token's pages to its `default` source). Secrets are read from the
// environment when dialing and never stored here.
type Connection struct {
	Command         string            `json:"command,omitempty"` // absolute path of the gbrain executable
	Args            []string          `json:"args,omitempty"`    // e.g. ["serve"]
	Env             map[string]string `json:"env,omitempty"`     // added to cgcat's environment
	Cwd             string            `json:"cwd,omitempty"`     // absolute; empty = cgcat's working directory
	URL             string            `json:"url,omitempty"`     // http(s) MCP endpoint
	TokenEnv        string            `json:"tokenEnv,omitempty"`
	ClientIDEnv     string            `json:"clientIdEnv,omitempty"`
	ClientSecretEnv string            `json:"clientSecretEnv,omitempty"`
}

// HTTP reports whether this is an HTTP connection.
func (c Connection) HTTP() bool { return c.URL != "" }

// AuthMode is how an HTTP connection authenticates: AuthClientCredentials,
// AuthStaticToken or AuthNone ("" for a stdio connection).
func (c Connection) AuthMode() string {
	switch {
	case c.URL == "":
		return ""
	case c.ClientIDEnv != "":
		return AuthClientCredentials
	case c.TokenEnv != "":
		return AuthStaticToken
	}
	return AuthNone
}

// Validate checks the connection's shape without touching anything.
func (c Connection) Validate() error {
	switch {
	case c.Command != "" && c.URL != "":
		return errors.New("gbrain connection: set either command or url, not both")
	case c.Command == "" && c.URL == "":
		return errors.New("gbrain connection: command or url is required")
	case c.Command != "":
		return c.validateCommand()
	default:
		return c.validateURL()
	}
}

// validateCommand checks a stdio connection: absolute paths, environment
// names, and none of the url connection's credentials.
func (c Connection) validateCommand() error {
	if !filepath.IsAbs(c.Command) {
		return fmt.Errorf("gbrain connection: command %q must be an absolute path", c.Command)
	}
	if c.Cwd != "" && !filepath.IsAbs(c.Cwd) {
		return fmt.Errorf("gbrain connection: cwd %q must be an absolute path", c.Cwd)
	}
	for k := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("gbrain connection: bad environment variable name %q", k)
		}
	}
	if c.TokenEnv != "" || c.ClientIDEnv != "" || c.ClientSecretEnv != "" {
		return errors.New("gbrain connection: tokenEnv, clientIdEnv and clientSecretEnv apply to url connections only")
	}
	return nil
}

// validateURL checks an HTTP connection: an absolute http(s) URL without
// credentials, none of the command connection's settings, and its auth.
func (c Connection) validateURL() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("gbrain connection: url %q must be an absolute http(s) URL", c.URL)
	}
	if u.User != nil {
		return errors.New("gbrain connection: url must not carry credentials; name environment variables in clientIdEnv and clientSecretEnv")
	}
	if len(c.Args) > 0 || len(c.Env) > 0 || c.Cwd != "" {
		return errors.New("gbrain connection: args, env and cwd apply to command connections only")
	}
	return c.validateAuth()
}

func (c Connection) validateAuth() error {
	switch {
	case c.TokenEnv != "" && (c.ClientIDEnv != "" || c.ClientSecretEnv != ""):
		return errors.New("gbrain connection: set either tokenEnv (a static token) or clientIdEnv and clientSecretEnv (OAuth client credentials), not both")
	case c.ClientIDEnv != "" && c.ClientSecretEnv == "":
		return errors.New("gbrain connection: clientIdEnv needs clientSecretEnv (the variable holding the client secret)")
	case c.ClientSecretEnv != "" && c.ClientIDEnv == "":
		return errors.New("gbrain connection: clientSecretEnv needs clientIdEnv (the variable holding the client id)")
	}
	for _, f := range []struct{ field, v string }{{"tokenEnv", c.TokenEnv}, {"clientIdEnv", c.ClientIDEnv}, {"clientSecretEnv", c.ClientSecretEnv}} {
		if err := checkEnvName(f.v); f.v != "" && err != nil {
			return fmt.Errorf("gbrain connection: %s: %w", f.field, err)
		}
	}
	return nil
}

// checkEnvName checks that name can be the name of an environment variable
// holding a credential (letters, digits and _, not starting with a digit) and
// does not look like a GBrain credential itself (gbrain_…): secrets live in
// the environment, never in the config file.
func checkEnvName(name string) error {
	if strings.HasPrefix(strings.ToLower(name), "gbrain_cl_") || strings.HasPrefix(strings.ToLower(name), "gbrain_cs_") ||
		strings.HasPrefix(strings.ToLower(name), "gbrain_at_") || (strings.HasPrefix(name, "gbrain_") && len(name) > 40) {
		return errors.New("this looks like a GBrain credential, not the name of an environment variable: put the value in an environment variable and write that variable's name here (secrets never go into the config file)")
	}
	if name == "" {
		return errors.New("is empty")
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return fmt.Errorf("%q is not an environment variable name (letters, digits and _, not starting with a digit)", name)
		}
	}
	return nil
}
