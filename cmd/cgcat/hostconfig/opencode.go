package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tailscale/hujson"
)

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
