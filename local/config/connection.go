package config

import (
	"fmt"
	"net/url"
	"strings"
)

// checkConnectionAuth validates how a connection authenticates: tokenEnv,
// clientIdEnv and clientSecretEnv belong to url connections, name
// environment variables (never hold a secret), and a url connection uses
// either a static token or client credentials.
func checkConnectionAuth(field string, conn Connection) error {
	fail := func(f, format string, a ...any) error {
		return &Error{Field: f, Problem: fmt.Sprintf(format, a...)}
	}
	named := []struct{ key, value string }{{"tokenEnv", conn.TokenEnv}, {"clientIdEnv", conn.ClientIDEnv}, {"clientSecretEnv", conn.ClientSecretEnv}}
	if conn.Command != "" {
		for _, n := range named {
			if n.value != "" {
				return fail(field+"."+n.key, "applies to url connections only; a stdio command is started by cgcat and needs no credentials")
			}
		}
		return nil
	}
	if u, err := url.Parse(conn.URL); err != nil || u.Host == "" {
		return fail(field+".url", "%q is not an absolute URL (e.g. http://127.0.0.1:3131/mcp)", conn.URL)
	} else if u.User != nil {
		return fail(field+".url", "must not carry credentials; put them in environment variables named by clientIdEnv and clientSecretEnv")
	}
	for _, n := range named {
		if n.value == "" {
			continue
		}
		if problem := envNameProblem(n.value); problem != "" {
			return fail(field+"."+n.key, "%s", problem)
		}
	}
	switch {
	case conn.TokenEnv != "" && (conn.ClientIDEnv != "" || conn.ClientSecretEnv != ""):
		return fail(field, "has both tokenEnv and client credentials; use clientIdEnv and clientSecretEnv (a client registered with `gbrain auth register-client … --source SOURCE`; a static token writes to GBrain's default source), or tokenEnv alone")
	case conn.ClientIDEnv != "" && conn.ClientSecretEnv == "":
		return fail(field+".clientSecretEnv", "is required with clientIdEnv: name the environment variable holding the client secret")
	case conn.ClientSecretEnv != "" && conn.ClientIDEnv == "":
		return fail(field+".clientIdEnv", "is required with clientSecretEnv: name the environment variable holding the client id")
	}
	return nil
}

// envNameProblem says what is wrong with an environment variable name ("" if
// nothing): it must be letters, digits and _, and must not be a GBrain
// credential pasted in by mistake.
func envNameProblem(name string) string {
	low := strings.ToLower(name)
	for _, p := range []string{"gbrain_cl_", "gbrain_cs_", "gbrain_at_"} {
		if strings.HasPrefix(low, p) {
			return "looks like a GBrain credential, not the name of an environment variable: put the value in an environment variable and write that variable's name here (secrets never go into the config file)"
		}
	}
	if strings.HasPrefix(low, "gbrain_") && len(name) > 40 {
		return "looks like a GBrain token, not the name of an environment variable: put the token in an environment variable and write that variable's name here (secrets never go into the config file)"
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return fmt.Sprintf("%q is not an environment variable name (letters, digits and _, not starting with a digit)", name)
		}
	}
	return ""
}
