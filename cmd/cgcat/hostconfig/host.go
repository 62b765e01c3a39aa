package hostconfig

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
)

// Host is everything cgcat knows about one host, as one value: its names,
// where it keeps its MCP servers, how cgcat's entry is written and removed,
// the allow rule for hosts that ignore readOnlyHint, how the host starts a
// server (environment, timeout) and what doctor reads in its config. Each
// host is one file of this package that registers its Host; install,
// uninstall, doctor, `install --print` and completion iterate over All()
// and never branch on a host's name.
type Host struct {
	// Name is the host as the CLI spells it (install NAME).
	Name string
	// Title is the host's name for people ("Claude Code").
	Title string
	// order places the host in All() (the order help and doctor show).
	order int

	// ServersKey is the top-level key of the config file that holds the MCP
	// servers ("mcp_servers", "mcp", "mcpServers").
	ServersKey string
	// ConfigFile is the file holding the host's MCP servers, from the
	// environment the host would read. project is `--project DIR`; it is
	// "" unless Project is set.
	ConfigFile func(env Env, project string) (string, error)
	// FileHelp says, for --help, which file install edits and the entry.
	FileHelp string
	// Project: the host also reads a project directory's config file, and
	// install/uninstall/doctor accept --project for it.
	Project bool
	// DirMode is the mode of the host's config directory when install
	// creates it (0700 where the host keeps credentials beside it).
	DirMode fs.FileMode
	// Upsert and Remove edit cgcat's entry (see UpsertCodex).
	Upsert func(src []byte, e Entry, force bool) ([]byte, bool, error)
	Remove func(src []byte, name string) ([]byte, bool, error)
	// Leftover reports whether a file cgcat created holds, after its entry
	// was removed, only what install put around it (so uninstall may
	// delete the file).
	Leftover func(src []byte) bool
	// Snippet is the fragment `install --print` shows; SnippetWhere says
	// where it goes (a format with the file's path).
	Snippet      func(e Entry) string
	SnippetWhere string
	// SnippetTOML: the snippet is TOML (comments start with #), not JSON.
	SnippetTOML bool
	// ConfigNote, when set, says what else the host reads beside the file
	// cgcat edits ("" when nothing).
	ConfigNote func(env Env, project string) string

	// shape says how the host's server entries read.
	shape serverShape
	// Allow, when set, is the narrow allow rule --allow-tools writes: the
	// host ignores readOnlyHint and asks before every call without it.
	Allow *AllowRule
	// PromptPolicy says, for a person, whether the host asks before running
	// cgcat's tools when no rule says otherwise.
	PromptPolicy string
	// Launch is how the host starts a stdio server.
	Launch LaunchPolicy
	// CodeGraphAdd is how a person registers CodeGraph's own MCP server in
	// this host under the conventional name.
	CodeGraphAdd string
	// EntryChecks reads what the host does with cgcat's entry before doctor
	// starts it (a server type cgcat is not, tool filters in the entry);
	// ok is false when it cannot be started at all.
	EntryChecks func(s Server, at EntryAt) (fs []Finding, ok bool)
	// Approval says whether calls of cgcat's tools (and CodeGraph's
	// explore) will ask, from the rules the host really applies, or that
	// it could not tell.
	Approval func(in ApprovalInput) []Finding
}

// LaunchPolicy is how a host starts an MCP stdio server.
type LaunchPolicy struct {
	// EnvAllowlist names the variables the host passes from its own
	// environment (plus an entry's env_vars); nil passes all of them.
	EnvAllowlist []string
	// Timeout is the host's own limit for initialize and tools/list when an
	// entry sets none.
	Timeout time.Duration
	// TimeoutSource says where that figure comes from.
	TimeoutSource string
}

// AllowRule is the narrowest rule that lets a host run exactly cgcat's two
// tools without asking.
type AllowRule struct {
	// File is where the rule lives, for the entry called name.
	File func(env Env, name string) (string, error)
	// Describe says what the rule is, for people.
	Describe func(name string) string
	// Edit returns the file's content with the rule added (or removed);
	// nil when the file goes away (a file that is cgcat's as a whole).
	Edit func(before []byte, name string, add bool) (after []byte, err error)
	// Path is where the rule lives in a JSON file (nil when the file is
	// cgcat's as a whole).
	Path []string
	// Leftover reports whether a rule file cgcat created holds nothing else
	// once the rule is removed (so uninstall may delete it); nil when Edit
	// removes the file itself.
	Leftover func(src []byte) bool
}

// EntryAt names cgcat's entry in a check: where it is and the command that
// rewrites it.
type EntryAt struct{ Where, Reinstall string }

// ApprovalInput is what a host's Approval reads.
type ApprovalInput struct {
	Env Env
	// File is the host's config file and Src its content; Servers its
	// entries, Ours cgcat's.
	File    string
	Src     []byte
	Servers []Server
	Ours    Server
	// Name is cgcat's entry name; CodeGraph the name of CodeGraph's entry
	// (DefaultCodeGraphServer when there is none).
	Name, CodeGraph string
	// AllowFile is where the host's allow rule lives ("" for none).
	AllowFile string
	// ReadOnly: the started server listed both tools with readOnlyHint.
	ReadOnly bool
}

// Level orders a finding from fine to broken (doctor's statuses).
type Level int

const (
	Info Level = iota
	OK
	Warn
	Fail
)

// Finding is one thing a host's config says, as a doctor line: what was
// found, the fix, and a code programs may test for.
type Finding struct {
	Level           Level
	What, Fix, Code string
}

func found(l Level, fix, code, format string, a ...any) Finding {
	return Finding{Level: l, What: fmt.Sprintf(format, a...), Fix: fix, Code: code}
}

// WillPrompt is the code of a finding that says calls will ask.
const WillPrompt = "will_prompt"

// Env is the environment hosts read their locations from.
type Env struct {
	// Home is the home directory ("" when unknown).
	Home string
	// Getenv reads a variable ("" when unset); nil reads none.
	Getenv func(string) string
}

func (e Env) get(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// dir returns the directory named by variable k when it is set and
// absolute, else home joined with rel.
func (e Env) dir(k string, rel ...string) (string, error) {
	if v := e.get(k); v != "" && filepath.IsAbs(v) {
		return v, nil
	}
	if e.Home == "" {
		return "", fmt.Errorf("no $%s and no home directory", k)
	}
	return filepath.Join(append([]string{e.Home}, rel...)...), nil
}

var registry []*Host

// register adds a host; each host's file calls it from init.
func register(h *Host) *Host {
	registry = append(registry, h)
	sort.SliceStable(registry, func(i, j int) bool { return registry[i].order < registry[j].order })
	Hosts = Hosts[:0]
	for _, r := range registry {
		Hosts = append(Hosts, r.Name)
	}
	return h
}

// Hosts lists the names of every host cgcat installs into, in the order it
// shows them.
var Hosts []string

// All returns every host, in the order cgcat shows them.
func All() []*Host { return slices.Clone(registry) }

// ByName returns the host the CLI calls name.
func ByName(name string) (*Host, bool) {
	for _, h := range registry {
		if h.Name == name {
			return h, true
		}
	}
	return nil, false
}

// NameList is the host names for a message: "codex, opencode or claude".
func NameList() string {
	n := len(Hosts)
	if n < 2 {
		return strings.Join(Hosts, "")
	}
	return strings.Join(Hosts[:n-1], ", ") + " or " + Hosts[n-1]
}

// serverShape is how one host's server entries read.
type serverShape struct {
	toml bool // TOML (Codex), else JSON/JSONC
	// commandList: "command" is the whole command line (OpenCode).
	commandList bool
	envKey      string // default "env"
	// skip names a member of the servers object that is not a server.
	skip string
	// timeout reads the entry's own start-up timeout.
	timeout func(m map[string]any) time.Duration
}

// decode parses a host file into a map.
func (sh serverShape) decode(src []byte) (map[string]any, error) {
	doc := map[string]any{}
	if sh.toml {
		if err := toml.Unmarshal(src, &doc); err != nil {
			return nil, fmt.Errorf("%w as TOML: %v", ErrUnparsable, describeTOMLError(src, err))
		}
		return doc, nil
	}
	std, err := hujson.Standardize(slices.Clone(src)) // it works in place
	if err == nil {
		err = json.Unmarshal(std, &doc)
	}
	if err != nil {
		return nil, fmt.Errorf("%w as JSON/JSONC: %v", ErrUnparsable, err)
	}
	return doc, nil
}

// Decode parses the host's config file into a map (for checks).
func (h *Host) Decode(src []byte) (map[string]any, error) { return h.shape.decode(src) }

// ReadServers returns the MCP servers the host's config file declares,
// sorted by name. src is the file's content.
func (h *Host) ReadServers(src []byte) ([]Server, error) {
	doc, err := h.shape.decode(src)
	if err != nil {
		return nil, err
	}
	raw, _ := doc[h.ServersKey].(map[string]any)
	var out []Server
	for name, v := range raw {
		if name == h.shape.skip && h.shape.skip != "" {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			out = append(out, Server{Name: name, Problem: fmt.Sprintf("%s.%s is not an object/table", h.ServersKey, name)})
			continue
		}
		out = append(out, h.shape.read(name, m))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// timeoutKey reads a timeout in unit from key.
func timeoutKey(key string, unit time.Duration) func(map[string]any) time.Duration {
	return func(m map[string]any) time.Duration {
		if n, ok := number(m[key]); ok && n > 0 {
			return time.Duration(n * float64(unit))
		}
		return 0
	}
}

// jsonLeftover reports whether a JSON file holds only an empty servers
// object (and the keys in also, which a new file of cgcat's carries).
func jsonLeftover(key string, also ...string) func([]byte) bool {
	return func(src []byte) bool {
		doc, err := serverShape{}.decode(src)
		if err != nil {
			return false
		}
		for k, v := range doc {
			switch {
			case k == key:
				if m, ok := v.(map[string]any); !ok || len(m) > 0 {
					return false
				}
			case !slices.Contains(also, k):
				return false
			}
		}
		return true
	}
}

// jsonSnippet renders a fragment "{"key": {"name": {...}}}".
func jsonSnippet(key string, fields func(Entry) []field) func(Entry) string {
	return func(e Entry) string {
		return "{\n  " + jsonString(key) + ": {\n    " + jsonString(e.Name) + ": " +
			renderObject(fields(e), "    ", "  ", "\n", true) + "\n  }\n}\n"
	}
}
