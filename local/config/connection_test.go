package config

import (
	"strings"
	"testing"
)

func TestConnectionAuthFields(t *testing.T) {
	dir := t.TempDir()
	valid := `"version":1,"dataDir":"` + dir + `/data"`
	conn := func(body string) string {
		return `{` + valid + `,"gbrain":{"enabled":true,"connectionRef":"g"},"connections":{"g":` + body + `}}`
	}
	for _, tc := range []struct{ name, body, want string }{
		{"token on command", `{"command":"/bin/gbrain","tokenEnv":"T"}`, `connections.g.tokenEnv: applies to url connections only`},
		{"client id on command", `{"command":"/bin/gbrain","clientIdEnv":"ID"}`, `connections.g.clientIdEnv: applies to url connections only`},
		{"both kinds", `{"url":"http://127.0.0.1:3131/mcp","tokenEnv":"T","clientIdEnv":"ID","clientSecretEnv":"S"}`, `connections.g: has both tokenEnv and client credentials`},
		{"id without secret", `{"url":"http://127.0.0.1:3131/mcp","clientIdEnv":"ID"}`, `connections.g.clientSecretEnv: is required with clientIdEnv`},
		{"secret without id", `{"url":"http://127.0.0.1:3131/mcp","clientSecretEnv":"S"}`, `connections.g.clientIdEnv: is required with clientSecretEnv`},
		{"secret in file", `{"url":"http://127.0.0.1:3131/mcp","clientIdEnv":"ID","clientSecretEnv":"gbrain_cs_0123456789abcdef"}`, `connections.g.clientSecretEnv: looks like a GBrain credential`},
		{"id in file", `{"url":"http://127.0.0.1:3131/mcp","clientIdEnv":"gbrain_cl_0123","clientSecretEnv":"S"}`, `connections.g.clientIdEnv: looks like a GBrain credential`},
		{"token in file", `{"url":"http://127.0.0.1:3131/mcp","tokenEnv":"gbrain_0123456789abcdef0123456789abcdef0123456789"}`, `connections.g.tokenEnv: looks like a GBrain token`},
		{"bad name", `{"url":"http://127.0.0.1:3131/mcp","clientIdEnv":"MY-ID","clientSecretEnv":"S"}`, `connections.g.clientIdEnv: "MY-ID" is not an environment variable name`},
		{"digit first", `{"url":"http://127.0.0.1:3131/mcp","tokenEnv":"1TOKEN"}`, `connections.g.tokenEnv: "1TOKEN" is not an environment variable name`},
		{"userinfo", `{"url":"http://me:pw@127.0.0.1:3131/mcp","clientIdEnv":"ID","clientSecretEnv":"S"}`, `connections.g.url: must not carry credentials`},
		{"no host", `{"url":"http://"}`, `connections.g.url: "http://" is not an absolute URL`},
		{"typo", `{"url":"http://127.0.0.1:3131/mcp","clientIDEnv":"ID"}`, `connections.g.clientIDEnv: unknown field (did you mean "clientIdEnv"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(conn(tc.body)), "c.json")
			if err == nil {
				t.Fatalf("accepted %s", tc.body)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error\n  got  %q\n  want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "0123456789abcdef") && !strings.Contains(tc.want, "0123") {
				t.Errorf("the error repeats the credential: %q", err)
			}
		})
	}

	cfg, err := Parse([]byte(conn(`{"url":"http://127.0.0.1:3131/mcp","clientIdEnv":"CGCAT_GBRAIN_CLIENT_ID","clientSecretEnv":"CGCAT_GBRAIN_CLIENT_SECRET"}`)), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Connections["g"]; c.ClientIDEnv != "CGCAT_GBRAIN_CLIENT_ID" || c.ClientSecretEnv != "CGCAT_GBRAIN_CLIENT_SECRET" || c.TokenEnv != "" {
		t.Errorf("connection %+v", c)
	}
	if _, err := Parse([]byte(conn(`{"url":"https://brain.example.com/mcp","tokenEnv":"GBRAIN_TOKEN"}`)), "c.json"); err != nil {
		t.Errorf("a static token stays supported: %v", err)
	}
}
