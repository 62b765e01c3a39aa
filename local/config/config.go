// Package config loads and validates cgcat's one JSON configuration file
// (R1–R7): where to look for projects, what may be shown to agents, how much
// metadata to read, and the optional GBrain connection.
//
// A config is either fully valid or refused with an error that names the
// field; a half-valid config never reaches a server.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/cgcat/cgcat/local/pathid"
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
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Problem: fmt.Sprintf("cannot read the config file: %v", errors.Unwrap(err))}
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

func (c *Config) validate() error {
	fail := func(field, format string, a ...any) error {
		return &Error{Field: field, Problem: fmt.Sprintf(format, a...)}
	}
	if c.Version != 1 {
		return fail("version", "must be 1 (this cgcat understands config version 1), got %d", c.Version)
	}
	if c.DataDir == "" {
		return fail("dataDir", "is required: an absolute directory where cgcat keeps its catalog (e.g. %s)", DefaultDataDir())
	}
	dd, err := checkPath("dataDir", c.DataDir)
	if err != nil {
		return err
	}
	c.DataDir = dd
	d := &c.Discovery
	for _, n := range []struct {
		field    string
		v        int
		min, max int
	}{
		{"discovery.refreshIntervalSeconds", d.RefreshIntervalSeconds, 5, 7 * 24 * 3600},
		{"discovery.maxDepth", d.MaxDepth, 0, 64},
		{"discovery.maxDirectoriesPerSlice", d.MaxDirectoriesPerSlice, 1, 1_000_000},
		{"discovery.maxSliceMs", d.MaxSliceMs, 1, 600_000},
		{"discovery.maxDirectoriesPerRound", d.MaxDirectoriesPerRound, 1, 100_000_000},
		{"discovery.maxRoundMs", d.MaxRoundMs, 1, 24 * 3600 * 1000},
		{"discovery.retainMissingDays", d.RetainMissingDays, 0, 36500},
		{"gbrain.recallBudgetMs", c.GBrain.RecallBudgetMs, 1, 60_000},
		{"gbrain.keepAliveSeconds", c.GBrain.KeepAliveSeconds, 0, 3600},
		{"gbrain.checkSeconds", c.GBrain.CheckSeconds, 2, 3600},
	} {
		if n.v < n.min || n.v > n.max {
			return fail(n.field, "must be between %d and %d, got %d", n.min, n.max, n.v)
		}
	}
	if d.MaxDirectoriesPerRound < d.MaxDirectoriesPerSlice {
		return fail("discovery.maxDirectoriesPerRound", "must be at least discovery.maxDirectoriesPerSlice (%d), got %d", d.MaxDirectoriesPerSlice, d.MaxDirectoriesPerRound)
	}
	for i, n := range d.ExcludeNames {
		if n == "" || strings.ContainsAny(n, `/\`) || n == "." || n == ".." {
			return fail(fmt.Sprintf("discovery.excludeNames[%d]", i), "must be a plain directory name (no separators), got %q", n)
		}
	}
	c.Written = WrittenRoots{Discovery: cleaned(d.Roots), Share: cleaned(c.Sharing.Roots), Deny: cleaned(c.Sharing.DenyRoots)}
	if d.Roots, err = checkPaths("discovery.roots", d.Roots, c); err != nil {
		return err
	}
	s := &c.Sharing
	if s.Roots, err = checkPaths("sharing.roots", s.Roots, c); err != nil {
		return err
	}
	if len(s.Roots) == 0 {
		s.Roots = slices.Clone(d.Roots)
		c.Written.Share = slices.Clone(c.Written.Discovery)
	}
	if s.DenyRoots, err = checkPaths("sharing.denyRoots", s.DenyRoots, c); err != nil {
		return err
	}
	for i, deny := range s.DenyRoots {
		inside := false
		for _, r := range s.Roots {
			if pathid.Within(r, deny) || pathid.Within(deny, r) {
				inside = true
			}
		}
		if !inside && len(s.Roots) > 0 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("sharing.denyRoots[%d]: %s is outside every sharing root, so it hides nothing", i, deny))
		}
	}
	m := c.Metadata
	if m.Mode != ModeManifestsAndReadme {
		return fail("metadata.mode", "must be %q, got %q", ModeManifestsAndReadme, m.Mode)
	}
	if m.MaxBytesPerFile < 256 || m.MaxBytesPerFile > 16<<20 {
		return fail("metadata.maxBytesPerFile", "must be between 256 and %d, got %d", 16<<20, m.MaxBytesPerFile)
	}
	if m.MaxBytesPerProject < m.MaxBytesPerFile || m.MaxBytesPerProject > 64<<20 {
		return fail("metadata.maxBytesPerProject", "must be between metadata.maxBytesPerFile (%d) and %d, got %d", m.MaxBytesPerFile, 64<<20, m.MaxBytesPerProject)
	}
	return c.validateGBrain()
}

func (c *Config) validateGBrain() error {
	fail := func(field, format string, a ...any) error {
		return &Error{Field: field, Problem: fmt.Sprintf(format, a...)}
	}
	g := c.GBrain
	if g.Projection != ProjectionReference && g.Projection != ProjectionLocalPaths {
		return fail("gbrain.projection", "must be %q or %q, got %q", ProjectionReference, ProjectionLocalPaths, g.Projection)
	}
	if !validSlugPrefix(g.SlugPrefix) {
		return fail("gbrain.slugPrefix", "must be lowercase segments of a-z, 0-9, '-' or '_' separated by '/', got %q", g.SlugPrefix)
	}
	if !validSourceID(g.ExpectedSource) {
		return fail("gbrain.expectedSource", "must match [a-z0-9-]{1,32} (GBrain silently ignores other source ids and writes to \"default\"), got %q", g.ExpectedSource)
	}
	names := make([]string, 0, len(c.Connections))
	for n := range c.Connections {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		conn := c.Connections[n]
		field := "connections." + n
		switch {
		case conn.Command != "" && conn.URL != "":
			return fail(field, "has both command and url; a connection is either a stdio command or an HTTP url")
		case conn.Command == "" && conn.URL == "":
			return fail(field, "needs command (a stdio MCP server) or url (an HTTP MCP endpoint)")
		case conn.Command != "":
			p, err := checkPath(field+".command", conn.Command)
			if err != nil {
				return err
			}
			conn.Command = p
			if conn.Cwd != "" {
				if conn.Cwd, err = checkPath(field+".cwd", conn.Cwd); err != nil {
					return err
				}
			}
		default:
			if !strings.HasPrefix(conn.URL, "http://") && !strings.HasPrefix(conn.URL, "https://") {
				return fail(field+".url", "must start with http:// or https://, got %q", conn.URL)
			}
		}
		if err := checkConnectionAuth(field, conn); err != nil {
			return err
		}
		c.Connections[n] = conn
	}
	if g.Enabled {
		if g.ConnectionRef == "" {
			return fail("gbrain.connectionRef", "is required when gbrain.enabled is true: name an entry of the top-level \"connections\" map")
		}
		if _, ok := c.Connections[g.ConnectionRef]; !ok {
			return fail("gbrain.connectionRef", "names %q, which is not in the top-level \"connections\" map (have: %s)", g.ConnectionRef, strings.Join(names, ", "))
		}
	}
	return nil
}

func validSourceID(s string) bool {
	if len(s) < 1 || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

func validSlugPrefix(s string) bool {
	if s == "" {
		return false
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
		for _, r := range seg {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// checkPath enforces R1's path rules and returns the canonical form when the
// path exists (its cleaned form otherwise).
func checkPath(field, p string) (string, error) {
	bad := func(problem string) error {
		return &Error{Field: field, Problem: fmt.Sprintf("%q %s", p, problem)}
	}
	switch {
	case p == "":
		return "", bad("is empty; write an absolute path")
	case strings.HasPrefix(p, "~"):
		return "", bad("starts with ~; write the absolute path (cgcat does not expand ~)")
	case strings.Contains(p, "$") || strings.Contains(p, "%"):
		return "", bad("contains a variable; write the absolute path (cgcat does not expand $VARS or %VARS%)")
	case strings.Contains(strings.ToLower(p), "://"):
		return "", bad("is a URI; write a plain absolute path, not file://")
	case strings.ContainsRune(p, 0) || strings.ContainsAny(p, "\r\n"):
		return "", bad("contains control characters")
	case !filepath.IsAbs(p):
		return "", bad("is relative; write an absolute path")
	}
	if c, err := pathid.Canonical(p); err == nil {
		return c, nil
	}
	return filepath.Clean(p), nil
}

func cleaned(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

func checkPaths(field string, ps []string, c *Config) ([]string, error) {
	out := make([]string, 0, len(ps))
	for i, p := range ps {
		f := fmt.Sprintf("%s[%d]", field, i)
		cp, err := checkPath(f, p)
		if err != nil {
			return nil, err
		}
		if field != "sharing.denyRoots" {
			if pathid.IsFSRoot(cp) {
				return nil, &Error{Field: f, Problem: fmt.Sprintf("%q is the file-system root; name the directories that hold your code", p)}
			}
			if pathid.IsHome(cp) {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s: %s is your whole home directory; scanning it is slow — consider naming the folders that hold code", f, cp))
			}
			if st, err := os.Stat(cp); err != nil {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s: %s is not reachable right now (%v); it is skipped until it is", f, cp, errors.Unwrap(err)))
			} else if !st.IsDir() {
				return nil, &Error{Field: f, Problem: fmt.Sprintf("%q is not a directory", p)}
			}
		}
		if !slices.ContainsFunc(out, func(o string) bool { return pathid.Same(o, cp) }) {
			out = append(out, cp)
		}
	}
	return out, nil
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
