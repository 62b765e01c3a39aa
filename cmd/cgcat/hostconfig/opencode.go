package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/tailscale/hujson"
)

// OpenCode is OpenCode 1.x.
const OpenCode = "opencode"

var _ = register(&Host{
	Name: OpenCode, Title: "OpenCode", order: 20,
	ServersKey:   "mcp",
	FileHelp:     "the existing opencode.json or opencode.jsonc in $XDG_CONFIG_HOME/opencode\n(default ~/.config/opencode), or in --project DIR: mcp.NAME",
	ConfigFile:   opencodeFile,
	Project:      true,
	DirMode:      0o755,
	Upsert:       UpsertOpenCode,
	Remove:       RemoveOpenCode,
	Leftover:     jsonLeftover("mcp", "$schema"),
	Snippet:      jsonSnippet("mcp", opencodeFields),
	SnippetWhere: "merge into the \"mcp\" object of %s",
	ConfigNote: func(env Env, project string) string {
		if oc := env.get("OPENCODE_CONFIG"); oc != "" && project == "" {
			return "$OPENCODE_CONFIG is set (" + oc + "); OpenCode merges that file too"
		}
		return ""
	},
	shape: serverShape{commandList: true, envKey: "environment", skip: "servers", // "servers": the OpenCode 2 shape
		timeout: timeoutKey("timeout", time.Millisecond)},
	PromptPolicy: "OpenCode runs MCP tools without asking unless its permission settings say otherwise",
	Launch:       LaunchPolicy{Timeout: 5 * time.Second, TimeoutSource: "OpenCode's default for listing a server's tools"},
	// CodeGraph 1.6.1's own installer writes OpenCode 2's "mcp.servers".
	CodeGraphAdd: `add "codegraph": {"type": "local", "command": ["codegraph", "serve", "--mcp"], "enabled": true} to the "mcp" object by hand`,
	EntryChecks: func(s Server, at EntryAt) (fs []Finding, ok bool) {
		if t, _ := s.Raw["type"].(string); t != "local" {
			return []Finding{found(Fail, at.Reinstall, "", "%s has type %q; cgcat is a \"local\" (stdio) server", at.Where, t)}, false
		}
		if _, has := s.Raw["args"]; has {
			fs = append(fs, found(Fail, "put the arguments into \"command\" (one list), or: "+at.Reinstall, "", "%s has an \"args\" key, which OpenCode 1.x ignores", at.Where))
		}
		return fs, true
	},
	Approval: opencodeApproval,
})

// opencodeFile is the opencode.json(c) to edit: in the project directory
// when given, else in $XDG_CONFIG_HOME/opencode (~/.config/opencode). A
// missing file means opencode.json there.
func opencodeFile(env Env, project string) (string, error) {
	var dir string
	if project != "" {
		abs, err := filepath.Abs(project)
		if err != nil {
			return "", err
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return "", fmt.Errorf("--project %s: %w", abs, errors.Unwrap(err))
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("--project %s is not a directory", abs)
		}
		dir = abs
	} else {
		cfg, err := env.dir("XDG_CONFIG_HOME", ".config")
		if err != nil {
			return "", fmt.Errorf("cannot find the OpenCode config: %v", err)
		}
		dir = filepath.Join(cfg, "opencode")
	}
	path, err := FindOpenCode(dir)
	if err != nil || path != "" {
		return path, err
	}
	return filepath.Join(dir, OpenCodeJSON), nil
}

// OpenCode 1.x config file names, in a global ($XDG_CONFIG_HOME/opencode)
// or project directory.
const (
	OpenCodeJSON  = "opencode.json"
	OpenCodeJSONC = "opencode.jsonc"
)

const opencodeSchema = "https://opencode.ai/config.json"

// FindOpenCode returns the existing OpenCode config file in dir:
// opencode.json or opencode.jsonc. It returns "" when neither exists (the
// caller then creates opencode.json), and an error when both exist: writing
// to one would leave the other shadowing or shadowed, so the user has to
// merge them first.
func FindOpenCode(dir string) (string, error) {
	var found []string
	for _, name := range []string{OpenCodeJSON, OpenCodeJSONC} {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		switch {
		case err == nil:
			if fi.IsDir() {
				return "", fmt.Errorf("%s is a directory, not an OpenCode config file", p)
			}
			found = append(found, p)
		case errors.Is(err, fs.ErrNotExist):
		default:
			return "", err
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%w: both %s and %s exist in %s; OpenCode reads both, so cgcat will not pick one: merge them into one file, then run again",
		ErrUnsafe, OpenCodeJSON, OpenCodeJSONC, dir)
}

// opencodeFields is our mcp.<name> object. Everything goes in "command":
// OpenCode 1.x ignores "args".
func opencodeFields(e Entry) []field {
	return []field{{"type", "local"}, {"command", append([]string{e.Command}, e.args()...)}, {"enabled", true}}
}

func opencodeValue(e Entry) map[string]any { return plain(opencodeFields(e)) }

func jsonString(s string) string { return string(hujson.String(s)) }

var opencodeHost = &jsonHost{
	host:   "opencode",
	key:    "mcp",
	fields: opencodeFields,
	newFile: func(_ Entry, entry string) string {
		return "{\n  \"$schema\": " + jsonString(opencodeSchema) + ",\n  \"mcp\": {\n    " + entry + "\n  }\n}\n"
	},
	refuse: func(servers *hujson.Object) error {
		if _, c := findMember(servers, "servers"); c > 0 {
			return unsafef(`the file uses "mcp.servers", the OpenCode 2 configuration shape; cgcat writes only the OpenCode 1.x shape (mcp.<name>) and will not mix generations: add the entry by hand (see cgcat install --print) or keep the config on one generation`)
		}
		return nil
	},
	validName: func(name string) error {
		if name == "servers" {
			return fmt.Errorf(`%w: server name "servers" would read as the OpenCode 2 "mcp.servers" shape; choose another name`, ErrInvalidEntry)
		}
		return nil
	},
}

// UpsertOpenCode adds or replaces our mcp.<name> entry in an OpenCode 1.x
// opencode.json / opencode.jsonc, keeping comments, trailing commas, layout
// and every other member. Empty input (only whitespace) gives a new minimal
// file. An existing entry equal to ours gives changed=false; a different one
// a *ConflictError unless force, which replaces its value in place.
//
// It never writes the OpenCode 2 shape and refuses files that already have
// "mcp.servers" (another config generation).
func UpsertOpenCode(src []byte, e Entry, force bool) (out []byte, changed bool, err error) {
	return opencodeHost.upsert(src, e, force)
}

// RemoveOpenCode removes our mcp.<name> entry. The "mcp" object itself
// stays (possibly empty). It returns src unchanged (changed=false) when
// there is no such entry.
func RemoveOpenCode(src []byte, name string) (out []byte, changed bool, err error) {
	return opencodeHost.remove(src, name)
}

// parseOpenCode is kept for the tests: the parsed document of an OpenCode file.
func parseOpenCode(src []byte) (*jsonDoc, error) { return parseJSONDoc(src) }

func roundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return v
	}
	return out
}
