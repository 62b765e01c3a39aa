// Package config loads and validates cgcat's one JSON configuration file
// (R1–R7): where to look for projects (discovery), what may be shown to
// agents (sharing), how much metadata to read, and the optional GBrain
// connection. It owns the file's shape and defaults ([Default]), the rules a
// value must meet (validate.go: absolute paths, no ~ or $VARS, known keys
// only, with "did you mean" for a typo), where the file and the data dir are
// by default, and [Live], which follows an edited file in a running server.
//
// A config is either fully valid or refused with an error that names the
// field; a half-valid config never reaches a server, and a running server
// keeps its last valid config when an edit does not validate.
//
// It only reads: it never creates the data dir or any other directory,
// never writes the config file (the CLI writes what [Marshal] renders), and
// never reads a secret: a GBrain connection names the environment variables
// that hold credentials, and package gbrain reads them when it dials.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Config is the file's shape, field names and defaults as R1 specifies.
type Config struct {
	Version     int                   `json:"version"`
	DataDir     string                `json:"dataDir"`
	Discovery   Discovery             `json:"discovery"`
	Sharing     Sharing               `json:"sharing"`
	Metadata    Metadata              `json:"metadata"`
	GBrain      GBrain                `json:"gbrain"`
	Connections map[string]Connection `json:"connections,omitempty"`

	// Path is the file this config was read from ("" for an ad-hoc config).
	Path string `json:"-"`
	// Warnings are problems that do not stop the program (a deny root outside
	// every sharing root, a root that does not exist right now).
	Warnings []string `json:"-"`
	// Written holds the roots as the file spells them (cleaned). The
	// validated fields hold their canonical form as of loading; a deny root
	// that did not exist yet, or that lies behind a symlink that changes
	// later, is resolved again from this spelling.
	Written WrittenRoots `json:"-"`
}

// WrittenRoots are the configured roots as written.
type WrittenRoots struct {
	Discovery, Share, Deny []string
}

type Discovery struct {
	Roots                  []string `json:"roots"`
	RefreshIntervalSeconds int      `json:"refreshIntervalSeconds"`
	MaxDepth               int      `json:"maxDepth"`
	MaxDirectoriesPerSlice int      `json:"maxDirectoriesPerSlice"`
	MaxSliceMs             int      `json:"maxSliceMs"`
	MaxDirectoriesPerRound int      `json:"maxDirectoriesPerRound"`
	MaxRoundMs             int      `json:"maxRoundMs"`
	ExcludeNames           []string `json:"excludeNames"`
	// FollowSymlinks lets the walk enter directory symlinks (off by default, R9).
	FollowSymlinks bool `json:"followSymlinks"`
	// RetainMissingDays is how long a record confirmed missing stays in
	// listings without a query; it always stays resolvable until forgotten.
	RetainMissingDays int `json:"retainMissingDays"`
}

type Sharing struct {
	// Roots bound what may be shown; empty means "the discovery roots".
	Roots               []string `json:"roots"`
	DenyRoots           []string `json:"denyRoots"`
	ExposeAbsolutePaths bool     `json:"exposeAbsolutePaths"`
}

type Metadata struct {
	Mode               string `json:"mode"`
	MaxBytesPerFile    int64  `json:"maxBytesPerFile"`
	MaxBytesPerProject int64  `json:"maxBytesPerProject"`
}

type GBrain struct {
	Enabled        bool   `json:"enabled"`
	ConnectionRef  string `json:"connectionRef"`
	ExpectedBrain  string `json:"expectedBrain"`
	ExpectedSource string `json:"expectedSource"`
	SlugPrefix     string `json:"slugPrefix"`
	Projection     string `json:"projection"`
	SemanticSearch bool   `json:"semanticSearch"`
	// RecallBudgetMs bounds how long a search waits for GBrain recall.
	RecallBudgetMs int `json:"recallBudgetMs"`
	// KeepAliveSeconds is how long a stdio GBrain connection stays open
	// after a sync round or mirror refresh before it is closed, so that a
	// PGLite brain (one process at a time) is free between rounds. 0 closes
	// it right after each round. An HTTP connection stays open.
	KeepAliveSeconds int `json:"keepAliveSeconds"`
	// CheckSeconds is how often the process holding the projector lease
	// runs a round (sweep, drain, mirror refresh) and so checks that GBrain
	// answers: gbrainState is the outcome of the last such check, on every
	// host and CLI twin. A shorter interval notices a GBrain that went down
	// sooner; each round of a stdio GBrain starts its process.
	CheckSeconds int `json:"checkSeconds"`
}

// Connection is a GBrain MCP endpoint (R7): a stdio child or an HTTP URL.
type Connection struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	// TokenEnv names the environment variable holding a bearer token; the
	// token itself never lives in the file.
	TokenEnv string `json:"tokenEnv,omitempty"`
	// ClientIDEnv and ClientSecretEnv name the environment variables
	// holding OAuth client credentials (`gbrain auth register-client …
	// --source SOURCE`) for a url connection; see connection.go.
	ClientIDEnv     string `json:"clientIdEnv,omitempty"`
	ClientSecretEnv string `json:"clientSecretEnv,omitempty"`
}

const (
	ModeManifestsAndReadme = "package-manifests-and-bounded-readme"
	ProjectionReference    = "reference-only"
	ProjectionLocalPaths   = "local-paths"
)

// Default returns a config with every default R1 specifies and no
// roots: such a config answers setup_required and scans nothing (R3).
func Default() Config {
	return Config{
		Version: 1,
		Discovery: Discovery{
			RefreshIntervalSeconds: 600,
			MaxDepth:               6,
			MaxDirectoriesPerSlice: 2000,
			MaxSliceMs:             1000,
			MaxDirectoriesPerRound: 100000,
			MaxRoundMs:             60000,
			ExcludeNames:           []string{".git", "node_modules", "dist", "build", ".cache"},
			RetainMissingDays:      30,
		},
		Sharing: Sharing{ExposeAbsolutePaths: true},
		Metadata: Metadata{
			Mode:               ModeManifestsAndReadme,
			MaxBytesPerFile:    16384,
			MaxBytesPerProject: 65536,
		},
		GBrain: GBrain{
			ConnectionRef:    "local-gbrain-catalog",
			ExpectedBrain:    "host",
			ExpectedSource:   "codegraph-catalog",
			SlugPrefix:       "catalog/codegraph",
			Projection:       ProjectionReference,
			RecallBudgetMs:   300,
			KeepAliveSeconds: 5,
			CheckSeconds:     60,
		},
	}
}

// Error is a config problem tied to one field.
type Error struct {
	File    string // config file, "" for flags
	Field   string // e.g. "discovery.roots[1]"
	Problem string // what is wrong and what to do
}

func (e *Error) Error() string {
	where := "config"
	if e.File != "" {
		where = e.File
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", where, e.Problem)
	}
	return fmt.Sprintf("%s: %s: %s", where, e.Field, e.Problem)
}

// HasRoots reports whether discovery has anything to scan. Without roots
// every tool answers setup_required (R3).
func (c *Config) HasRoots() bool { return len(c.Discovery.Roots) > 0 }

// Parse decodes and validates a config file's bytes. file is used in errors.
func Parse(data []byte, file string) (*Config, error) {
	fail := func(field, format string, a ...any) error {
		return &Error{File: file, Field: field, Problem: fmt.Sprintf(format, a...)}
	}
	var raw any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fail("", "not valid JSON: %v", jsonPos(data, err))
	}
	if dec.More() {
		return nil, fail("", "not valid JSON: extra data after the top-level object")
	}
	if _, ok := raw.(map[string]any); !ok {
		return nil, fail("", "the file must hold one JSON object")
	}
	if err := checkKnown(raw, reflectSchema, ""); err != nil {
		return nil, fail(err.field, "%s", err.problem)
	}
	cfg := Default()
	if err := json.Unmarshal(data, &cfg); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fail(te.Field, "must be %s, not %s", kindName(te.Type.Kind().String()), te.Value)
		}
		return nil, fail("", "%v", err)
	}
	cfg.Path = file
	if err := cfg.validate(); err != nil {
		if ce, ok := err.(*Error); ok {
			ce.File = file
		}
		return nil, err
	}
	return &cfg, nil
}

// Load reads and validates the config file at path.
func Load(path string) (*Config, error) {
	data, _, err := readFile(path) // never waits on a FIFO, bounded
	if err != nil {
		return nil, readError(path, err)
	}
	abs, _ := filepath.Abs(path)
	return Parse(data, abs)
}

// AdHoc builds a config for `--root DIR` use: the given roots are both
// discovery and sharing roots; everything else is default.
func AdHoc(roots []string, dataDir string) (*Config, error) {
	cfg := Default()
	cfg.DataDir = dataDir
	for _, r := range roots {
		a, err := filepath.Abs(r)
		if err != nil {
			return nil, &Error{Field: "--root", Problem: err.Error()}
		}
		cfg.Discovery.Roots = append(cfg.Discovery.Roots, a)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// DefaultDataDir is $XDG_DATA_HOME/cgcat, else ~/.local/share/cgcat.
func DefaultDataDir() string {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "cgcat")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "cgcat")
	}
	return filepath.Join(home, ".local", "share", "cgcat")
}

// DefaultPath is where the config is looked for without --config:
// $CGCAT_CONFIG, else $XDG_CONFIG_HOME/cgcat/config.json, else
// ~/.config/cgcat/config.json.
func DefaultPath() string {
	if p := os.Getenv("CGCAT_CONFIG"); p != "" {
		return p
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "cgcat", "config.json")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "cgcat", "config.json")
}

// Marshal renders cfg as the indented JSON file cgcat writes.
func Marshal(cfg *Config) ([]byte, error) {
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func jsonPos(data []byte, err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "the file ends early (an unclosed { or [ ?)"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Sprintf("line %d: %v", line, se)
	}
	return err.Error()
}

func kindName(k string) string {
	switch k {
	case "int", "int64", "uint64":
		return "a whole number"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "slice":
		return "a list"
	case "map", "struct":
		return "an object"
	}
	return k
}
