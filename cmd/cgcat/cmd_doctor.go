package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/store"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"
	"github.com/tailscale/hujson"
)

type doctorOptions struct {
	name    string
	project string
	// versionTimeout bounds `codex --version` / `opencode --version`.
	versionTimeout time.Duration
}

func newDoctorCommand(g *globalOptions) *cobra.Command {
	o := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the config, roots, data dir, catalog store, leases and the installed host entries",
		Long: `Check everything cgcat needs, one line per check (✓ fine, ✗ broken, ! worth a look, · for
information), with the fix under every problem:

  config      the config file is valid (and its warnings)
  roots       every root exists and is readable
  data dir    the catalog directory is writable
  store       the catalog opens; format, records by availability, last scan pass, coverage gaps
  leases      who holds scan.lease (and projector.lease)
  gbrain      the configured connection, when gbrain.enabled
  codex       the [mcp_servers.NAME] entry in $CODEX_HOME/config.toml is started exactly as
  opencode    Codex/OpenCode would start it, with a real MCP handshake and tools/list

The exit status is 1 when something is broken.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.name, "name", hostconfig.DefaultName, "server name of cgcat's entry in the host configs")
	cmd.Flags().StringVar(&o.project, "project", "", "also check DIR/opencode.json(c), an OpenCode project config")
	return cmd
}

// checkStatus orders from fine to broken.
type checkStatus int

const (
	checkInfo checkStatus = iota
	checkOK
	checkWarn
	checkFail
)

func (s checkStatus) mark() string {
	switch s {
	case checkOK:
		return "✓"
	case checkWarn:
		return "!"
	case checkFail:
		return "✗"
	}
	return "·"
}

// check is one line of doctor's report, with an optional fix and notes.
type check struct {
	status checkStatus
	what   string
	fix    string
	notes  []string
}

func okf(format string, a ...any) check {
	return check{status: checkOK, what: fmt.Sprintf(format, a...)}
}
func infof(format string, a ...any) check {
	return check{status: checkInfo, what: fmt.Sprintf(format, a...)}
}
func failf(fix, format string, a ...any) check {
	return check{status: checkFail, what: fmt.Sprintf(format, a...), fix: fix}
}
func warnf(fix, format string, a ...any) check {
	return check{status: checkWarn, what: fmt.Sprintf(format, a...), fix: fix}
}

type doctorReport struct {
	out          io.Writer
	fails, warns int
}

func (r *doctorReport) section(title string, checks []check) {
	fmt.Fprintln(r.out, title)
	for _, c := range checks {
		fmt.Fprintf(r.out, "  %s %s\n", c.status.mark(), c.what)
		for _, n := range c.notes {
			fmt.Fprintf(r.out, "      %s\n", n)
		}
		if c.fix != "" {
			fmt.Fprintf(r.out, "      fix: %s\n", c.fix)
		}
		switch c.status {
		case checkFail:
			r.fails++
		case checkWarn:
			r.warns++
		}
	}
}

func runDoctor(ctx context.Context, g *globalOptions, o *doctorOptions, out, _ io.Writer) error {
	if o.name == "" {
		o.name = hostconfig.DefaultName
	}
	if o.versionTimeout == 0 {
		o.versionTimeout = 30 * time.Second
	}
	r := &doctorReport{out: out}
	fmt.Fprintf(out, "cgcat doctor (cgcat %s)\n", version)

	// Host CLI versions are slow to read (OpenCode starts a whole runtime):
	// ask, in the background, for the hosts that have a config file.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	versions := startHostVersions(ctx, o.versionTimeout, hostsWithConfig())

	cfg, cfgChecks := doctorConfig(g)
	r.section("config", cfgChecks)
	if cfg != nil {
		r.section("roots", doctorRoots(cfg))
		ddChecks, ddUsable := doctorDataDir(cfg.DataDir)
		r.section("data dir", ddChecks)
		if ddUsable {
			r.section("store", doctorStore(ctx, cfg))
			r.section("leases", doctorLeases(cfg.DataDir))
		} else {
			r.section("store", []check{infof("not checked (no usable data dir)")})
		}
		r.section("gbrain", doctorGBrainSection(ctx, cfg))
	}
	var cfgPath string
	if cfg != nil {
		cfgPath = cfg.Path
	}
	r.section("codex", doctorCodex(ctx, o, cfgPath, versions))
	r.section("opencode", doctorOpenCode(ctx, o, "", cfgPath, versions))
	if o.project != "" {
		r.section("opencode project "+o.project, doctorOpenCode(ctx, o, o.project, cfgPath, nil))
	}

	switch {
	case r.fails > 0:
		fmt.Fprintf(out, "summary: %d problem(s) (✗) and %d warning(s) (!); fix the ✗ lines above\n", r.fails, r.warns)
		return &exitError{code: 1}
	case r.warns > 0:
		fmt.Fprintf(out, "summary: nothing broken; %d warning(s) (!)\n", r.warns)
	default:
		fmt.Fprintln(out, "summary: all checks passed")
	}
	return nil
}

// ---- config, roots, data dir ------------------------------------------------

func doctorConfig(g *globalOptions) (*config.Config, []check) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, []check{failf("fix the field named above (`cgcat config check` shows the result); every host entry that uses this config fails to start until then", "config is not valid: %v", err)}
	}
	var cs []check
	switch {
	case len(g.roots) > 0:
		cs = append(cs, infof("ad-hoc config from --root (hosts need a config file: cgcat config init --root DIR)"))
	case cfg.Path == "":
		p := g.configPath
		if p == "" {
			p = config.DefaultPath()
		}
		cs = append(cs, failf("cgcat config init --root DIR (the folders that hold your code)", "no config file at %s: without one every tool answers setup_required", p))
	default:
		cs = append(cs, okf("config %s is valid", cfg.Path))
	}
	for _, w := range cfg.Warnings {
		if cfg.Path == "" && strings.HasPrefix(w, "no config file at") {
			continue // reported above
		}
		if strings.Contains(w, "roots[") && strings.Contains(w, "not reachable right now") {
			continue // the roots section reports it as a problem
		}
		cs = append(cs, warnf("", "warning: %s", w))
	}
	if cfg.Path != "" && !cfg.HasRoots() {
		cs = append(cs, failf(fmt.Sprintf("add the folders that hold your code to discovery.roots in %s", cfg.Path), "no discovery roots: every tool answers setup_required and nothing is scanned"))
	}
	if !cfg.Sharing.ExposeAbsolutePaths {
		cs = append(cs, warnf("set sharing.exposeAbsolutePaths to true if agents should query the projects", "sharing.exposeAbsolutePaths is false: browse-only, agents get no projectPath to pass to codegraph_explore"))
	}
	return cfg, cs
}

func doctorRoots(cfg *config.Config) []check {
	var cs []check
	where := "the config"
	if cfg.Path != "" {
		where = cfg.Path
	}
	checkDir := func(kind, field, dir string) {
		fi, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			cs = append(cs, failf(fmt.Sprintf("create it or mount its volume, or remove it from %s in %s", field, where), "%s %s does not exist", kind, dir))
			return
		case err != nil:
			cs = append(cs, failf(fmt.Sprintf("make it reachable by this user, or remove it from %s in %s", field, where), "%s %s cannot be checked: %v", kind, dir, errors.Unwrap(err)))
			return
		case !fi.IsDir():
			cs = append(cs, failf(fmt.Sprintf("name a directory in %s in %s", field, where), "%s %s is not a directory", kind, dir))
			return
		}
		f, err := os.Open(dir)
		if err == nil {
			_, err = f.Readdirnames(1)
			f.Close()
			if errors.Is(err, io.EOF) {
				err = nil
			}
		}
		if err != nil {
			cs = append(cs, failf(fmt.Sprintf("give this user read and search permission (chmod u+rx %s)", dir), "%s %s is not readable: %v", kind, dir, err))
			return
		}
		cs = append(cs, okf("%s %s is a readable directory", kind, dir))
	}
	for _, r := range cfg.Discovery.Roots {
		checkDir("discovery root", "discovery.roots", r)
		shared := slices.ContainsFunc(cfg.Sharing.Roots, func(s string) bool { return pathid.Within(s, r) || pathid.Within(r, s) })
		if !shared {
			cs = append(cs, warnf(fmt.Sprintf("add it (or a parent) to sharing.roots in %s, or remove it from discovery.roots", where), "discovery root %s is under no sharing root: its projects are found but never shown", r))
		}
	}
	for _, s := range cfg.Sharing.Roots {
		if slices.ContainsFunc(cfg.Discovery.Roots, func(d string) bool { return pathid.Same(d, s) }) {
			continue
		}
		checkDir("sharing root", "sharing.roots", s)
	}
	return cs
}

// doctorDataDir checks that the data dir is (or can be made) a writable
// directory, without creating it. usable says whether the store can be
// looked at.
func doctorDataDir(dd string) (cs []check, usable bool) {
	fi, err := os.Stat(dd)
	switch {
	case err == nil && !fi.IsDir():
		return []check{failf("point dataDir at a directory", "data dir %s is not a directory", dd)}, false
	case err == nil:
		if err := probeWritable(dd); err != nil {
			return []check{failf(fmt.Sprintf("make it writable by this user (chmod u+w %s) or point dataDir elsewhere", dd), "data dir %s is not writable: %v", dd, err)}, false
		}
		return []check{okf("data dir %s is writable", dd)}, true
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return []check{failf("make it reachable by this user or point dataDir elsewhere", "data dir %s cannot be checked: %v", dd, err)}, false
	}
	// Missing: find the nearest existing ancestor; cgcat creates the rest.
	parent := filepath.Dir(dd)
	for {
		pfi, err := os.Stat(parent)
		if err == nil {
			if !pfi.IsDir() {
				return []check{failf("point dataDir at a place where a directory can be created", "data dir %s cannot be created: %s is not a directory", dd, parent)}, false
			}
			if err := probeWritable(parent); err != nil {
				return []check{failf(fmt.Sprintf("create %s yourself with write permission for this user, or point dataDir elsewhere", dd), "data dir %s does not exist and cannot be created: %s is not writable (%v)", dd, parent, err)}, false
			}
			return []check{okf("data dir %s does not exist yet; cgcat creates it on first use (%s is writable)", dd, parent)}, true
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return []check{failf("make it reachable by this user or point dataDir elsewhere", "data dir %s cannot be checked: %v", dd, err)}, false
		}
		next := filepath.Dir(parent)
		if next == parent {
			return []check{failf("point dataDir at an existing volume", "data dir %s cannot be created: no part of it exists", dd)}, false
		}
		parent = next
	}
}

func probeWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".cgcat-doctor-*")
	if err != nil {
		return errors.Unwrap(err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// ---- store and leases -------------------------------------------------------

func doctorStore(ctx context.Context, cfg *config.Config) []check {
	dbDir := filepath.Join(cfg.DataDir, "catalog.db")
	if _, err := os.Stat(dbDir); errors.Is(err, fs.ErrNotExist) {
		return []check{warnf("cgcat scan (or start a host: its cgcat serve scans in the background)", "no catalog yet in %s", cfg.DataDir)}
	}
	st, err := store.Open(ctx, cfg.DataDir)
	if err != nil {
		fix := "see the message; `cgcat store recover` rebuilds a damaged store"
		var ce *store.CorruptError
		switch {
		case errors.As(err, &ce):
			fix = "cgcat store recover"
		case errors.Is(err, store.ErrNewerFormat):
			fix = "upgrade this cgcat, or point dataDir elsewhere"
		case errors.Is(err, store.ErrBusy):
			fix = "another cgcat process kept the store locked; try again (the leases below say who scans)"
		}
		return []check{failf(fix, "catalog store %s does not open: %v", dbDir, err)}
	}
	var (
		format   string
		revision uint64
		counts   = map[local.Availability]int{}
		total    int
		state    scan.State
		stateErr error
	)
	err = st.View(ctx, func(rd *store.Reader) error {
		if v, ok, err := rd.Get("meta/format"); err == nil && ok {
			format = string(v)
		}
		revision = rd.Revision()
		if err := rd.Projects(func(p *local.Project) error {
			counts[p.Availability]++
			total++
			return nil
		}); err != nil {
			return err
		}
		state, stateErr = scan.ReadState(rd)
		return nil
	})
	if err != nil {
		return []check{failf("cgcat store recover", "catalog store %s opens but cannot be read: %v", dbDir, err)}
	}
	var cs []check
	cs = append(cs, okf("catalog store %s opens (format %s, machine %s, catalog revision %d)", dbDir, format, st.MachineID(), revision))
	var parts []string
	for _, a := range []local.Availability{local.Present, local.Missing, local.Inaccessible, local.Unknown} {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[a], a))
		}
	}
	if total == 0 {
		cs = append(cs, infof("0 projects in the catalog (a project is a directory whose own .codegraph/ holds codegraph.db)"))
	} else {
		c := okf("%d project(s) in the catalog: %s", total, strings.Join(parts, ", "))
		if counts[local.Missing]+counts[local.Inaccessible] > 0 {
			c.notes = append(c.notes, "missing and inaccessible records are kept (never deleted automatically); they get no projectPath")
		}
		cs = append(cs, c)
	}
	if stateErr != nil {
		return append(cs, failf("cgcat scan (it rebuilds the scan state)", "scan state is unreadable: %v", stateErr))
	}
	if state.PassRunning {
		cs = append(cs, infof("scan pass %d running: %d directories read, %d projects seen, %d directories queued", state.Pass, state.PassDirs, state.PassProjects, state.Queued))
	}
	if state.LastCompleted.IsZero() {
		cs = append(cs, warnf("cgcat scan", "no scan pass has finished yet"))
		return cs
	}
	ago := time.Since(state.LastCompleted).Round(time.Second)
	when := state.LastCompleted.Local().Format(time.RFC3339)
	cov, gaps := catalog.Coverage(state, cfg, catalog.PolicyFrom(cfg))
	if cov == local.CoverageComplete {
		cs = append(cs, okf("last scan pass finished %s (%s ago), coverage complete", when, ago))
	} else {
		c := warnf("places that could not be read stay gaps until fixed (permissions, offline volumes); a depth limit names discovery.maxDepth; roots added since the last pass are covered by the next one",
			"last scan pass finished %s (%s ago), coverage %s: %d place(s) not covered", when, ago, cov, len(gaps))
		for i, gp := range gaps {
			if i == 5 {
				c.notes = append(c.notes, fmt.Sprintf("… and %d more", len(gaps)-5))
				break
			}
			c.notes = append(c.notes, fmt.Sprintf("not covered: %s (%s)", local.Printable(gp.Path), gp.Why))
		}
		cs = append(cs, c)
	}
	return cs
}

func doctorLeases(dd string) []check {
	var cs []check
	for _, name := range []string{"scan.lease", "projector.lease"} {
		p := filepath.Join(dd, name)
		if _, err := os.Stat(p); err != nil {
			if name == "scan.lease" {
				cs = append(cs, infof("%s: never taken yet", name))
			}
			continue
		}
		held, pid := lease.Holder(p)
		switch {
		case held && pid > 0:
			cs = append(cs, infof("%s: held by pid %d (that process is the single writer; it passes to another process when it exits)", name, pid))
		case held:
			cs = append(cs, infof("%s: held by another process", name))
		default:
			cs = append(cs, okf("%s: free (the next cgcat serve or scan takes it)", name))
		}
	}
	return cs
}

// ---- GBrain -----------------------------------------------------------------

func doctorGBrainSection(ctx context.Context, cfg *config.Config) []check {
	g := cfg.GBrain
	if !g.Enabled {
		return []check{infof("GBrain is off (optional; everything works without it)")}
	}
	conn := cfg.Connections[g.ConnectionRef]
	how := conn.URL
	if conn.Command != "" {
		how = strings.Join(append([]string{conn.Command}, conn.Args...), " ")
	}
	cs := []check{infof("GBrain is on: connection %q (%s), brain %q, source %q, slug prefix %q, projection %s",
		g.ConnectionRef, how, g.ExpectedBrain, g.ExpectedSource, g.SlugPrefix, g.Projection)}
	return append(cs, doctorGBrain(ctx, cfg)...)
}

// doctorGBrain checks the GBrain connection itself (whoami, brain/source,
// outbox depth, conflicts). It is the hook for the GBrain client in
// package gbrain; until that is wired it only says so.
func doctorGBrain(ctx context.Context, cfg *config.Config) []check {
	return gbrainDoctorChecks(ctx, cfg)
}

// ---- hosts ------------------------------------------------------------------

// hostVersions reads `codex --version` and `opencode --version` in the
// background when they are on PATH.
type hostVersions struct {
	mu   sync.Mutex
	done map[string]chan struct{}
	text map[string]string
}

// hostsWithConfig lists the hosts whose user config file exists.
func hostsWithConfig() []string {
	var hosts []string
	if p, err := codexConfigFile(); err == nil {
		if _, err := os.Stat(p); err == nil {
			hosts = append(hosts, hostCodex)
		}
	}
	if dir, err := opencodeConfigDir(""); err == nil {
		if p, _ := hostconfig.FindOpenCode(dir); p != "" {
			hosts = append(hosts, hostOpenCode)
		}
	}
	return hosts
}

func startHostVersions(ctx context.Context, timeout time.Duration, hosts []string) *hostVersions {
	hv := &hostVersions{done: map[string]chan struct{}{}, text: map[string]string{}}
	for _, host := range hosts {
		ch := make(chan struct{})
		hv.done[host] = ch
		go func() {
			defer close(ch)
			v := readHostVersion(ctx, host, timeout)
			hv.mu.Lock()
			hv.text[host] = v
			hv.mu.Unlock()
		}()
	}
	return hv
}

func (hv *hostVersions) get(host string) string {
	if hv == nil || hv.done[host] == nil {
		return ""
	}
	<-hv.done[host]
	hv.mu.Lock()
	defer hv.mu.Unlock()
	return hv.text[host]
}

func readHostVersion(ctx context.Context, host string, timeout time.Duration) string {
	bin, err := exec.LookPath(host)
	if err != nil {
		return fmt.Sprintf("%s CLI is not on PATH (version not checked)", host)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Stdin = nil
	b, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Sprintf("%s CLI at %s: no version within %s", host, bin, timeout)
		}
		return fmt.Sprintf("%s CLI at %s: --version failed: %v", host, bin, err)
	}
	v := strings.TrimSpace(string(b))
	if i := strings.IndexByte(v, '\n'); i >= 0 {
		v = v[:i]
	}
	return fmt.Sprintf("%s CLI: %s (%s)", host, v, bin)
}

// launch is how a host starts an MCP stdio server.
type launch struct {
	command string
	args    []string
	env     []string // the whole environment of the child
	dir     string
	timeout time.Duration // initialize + tools/list
}

// codexEnvAllowlist is what Codex passes from its own environment to an MCP
// server (measured with codex-cli 0.171.0: everything else is dropped,
// notably XDG_* and CGCAT_CONFIG, which is why the entry names --config).
var codexEnvAllowlist = []string{
	"HOME", "LOGNAME", "PATH", "SHELL", "USER", "__CF_USER_TEXT_ENCODING", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO", "PIP_CERT",
}

func doctorCodex(ctx context.Context, o *doctorOptions, cfgPath string, versions *hostVersions) []check {
	path, err := codexConfigFile()
	if err != nil {
		return []check{infof("Codex config not checked: %v", err)}
	}
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []check{infof("no Codex config at %s (to use cgcat from Codex: cgcat install codex)", path)}
	}
	if err != nil {
		return []check{failf("make it readable by this user", "cannot read %s: %v", path, err)}
	}
	var cs []check
	if v := versions.get(hostCodex); v != "" {
		cs = append(cs, infof("%s", v))
	}
	doc := map[string]any{}
	if err := toml.Unmarshal(src, &doc); err != nil {
		return append(cs, failf("fix the TOML syntax (Codex cannot read the file either)", "%s does not parse: %v", path, err))
	}
	servers, _ := doc["mcp_servers"].(map[string]any)
	raw, ok := servers[o.name]
	if !ok {
		return append(cs, infof("no MCP server named %q in %s (to add it: cgcat install codex)", o.name, path))
	}
	entry, ok := raw.(map[string]any)
	if !ok {
		return append(cs, failf("cgcat install codex --force", "mcp_servers.%s in %s is not a table", o.name, path))
	}
	where := fmt.Sprintf("mcp_servers.%s in %s", o.name, path)
	reinstall := "cgcat install codex --force (from the cgcat binary you want Codex to run)"
	if u, ok := entry["url"].(string); ok && u != "" {
		return append(cs, failf(reinstall, "%s is an HTTP server (%s), not cgcat's stdio server", where, u))
	}
	if en, ok := entry["enabled"].(bool); ok && !en {
		cs = append(cs, failf("set enabled = true, or: "+reinstall, "%s is disabled (enabled = false)", where))
	}
	for _, t := range []string{hostconfig.ToolProjects, hostconfig.ToolResolve} {
		if list, ok := entry["enabled_tools"].([]any); ok && !slices.Contains(list, any(t)) {
			cs = append(cs, failf("add it to enabled_tools, or: "+reinstall, "%s does not enable %s (enabled_tools)", where, t))
		}
		if list, ok := entry["disabled_tools"].([]any); ok && slices.Contains(list, any(t)) {
			cs = append(cs, failf("remove it from disabled_tools", "%s disables %s (disabled_tools)", where, t))
		}
	}
	command, _ := entry["command"].(string)
	args, argsOK := stringList(entry["args"])
	if _, present := entry["args"]; present && !argsOK {
		return append(cs, failf(reinstall, "%s: args is not a list of strings", where))
	}
	env := map[string]string{}
	for _, k := range codexEnvAllowlist {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	if names, ok := stringList(entry["env_vars"]); ok {
		for _, k := range names {
			if v, ok := os.LookupEnv(k); ok {
				env[k] = v
			}
		}
	}
	if m, ok := entry["env"].(map[string]any); ok {
		for k, v := range m {
			if s, ok := v.(string); ok {
				env[k] = s
			}
		}
	}
	dir, _ := entry["cwd"].(string)
	timeout := 10 * time.Second
	if n, ok := tomlNumber(entry["startup_timeout_sec"]); ok && n > 0 {
		timeout = time.Duration(n * float64(time.Second))
	} else if n, ok := tomlNumber(entry["startup_timeout_ms"]); ok && n > 0 {
		timeout = time.Duration(n * float64(time.Millisecond))
	}
	l := launch{command: command, args: args, env: envList(env), dir: dir, timeout: timeout}
	return append(cs, checkEntryLaunch(ctx, "Codex", where, reinstall, cfgPath, l)...)
}

func doctorOpenCode(ctx context.Context, o *doctorOptions, project, cfgPath string, versions *hostVersions) []check {
	dir, err := opencodeConfigDir(project)
	if err != nil {
		if project != "" {
			return []check{failf("name an existing project directory", "%v", err)}
		}
		return []check{infof("OpenCode config not checked: %v", err)}
	}
	path, err := hostconfig.FindOpenCode(dir)
	if err != nil {
		return []check{failf("merge the two files into one (OpenCode reads both)", "%v", err)}
	}
	if path == "" {
		install := "cgcat install opencode"
		if project != "" {
			install += " --project " + project
		}
		return []check{infof("no opencode.json or opencode.jsonc in %s (to use cgcat from OpenCode: %s)", dir, install)}
	}
	var cs []check
	if v := versions.get(hostOpenCode); v != "" {
		cs = append(cs, infof("%s", v))
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return append(cs, failf("make it readable by this user", "cannot read %s: %v", path, err))
	}
	doc := map[string]any{}
	std, err := hujson.Standardize(src)
	if err == nil {
		err = json.Unmarshal(std, &doc)
	}
	if err != nil {
		return append(cs, failf("fix the JSON syntax (OpenCode cannot read the file either)", "%s does not parse: %v", path, err))
	}
	mcpObj, _ := doc["mcp"].(map[string]any)
	raw, ok := mcpObj[o.name]
	if !ok {
		install := "cgcat install opencode"
		if project != "" {
			install += " --project " + project
		}
		return append(cs, infof("no MCP server named %q in %s (to add it: %s)", o.name, path, install))
	}
	where := fmt.Sprintf("mcp.%s in %s", o.name, path)
	reinstall := "cgcat install opencode --force (from the cgcat binary you want OpenCode to run)"
	entry, ok := raw.(map[string]any)
	if !ok {
		return append(cs, failf(reinstall, "%s is not an object", where))
	}
	if t, _ := entry["type"].(string); t != "local" {
		return append(cs, failf(reinstall, "%s has type %q; cgcat is a \"local\" (stdio) server", where, t))
	}
	if en, ok := entry["enabled"].(bool); ok && !en {
		cs = append(cs, failf("set \"enabled\": true, or: "+reinstall, "%s is disabled", where))
	}
	if _, has := entry["args"]; has {
		cs = append(cs, failf("put the arguments into \"command\" (one list), or: "+reinstall, "%s has an \"args\" key, which OpenCode 1.x ignores", where))
	}
	cmdline, ok := stringList(entry["command"])
	if !ok || len(cmdline) == 0 {
		return append(cs, failf(reinstall, "%s: \"command\" must be a non-empty list of strings", where))
	}
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	if m, ok := entry["environment"].(map[string]any); ok {
		for k, v := range m {
			if s, ok := v.(string); ok {
				env[k] = s
			}
		}
	}
	timeout := 5 * time.Second // OpenCode's default for listing a server's tools
	if n, ok := entry["timeout"].(float64); ok && n > 0 {
		timeout = time.Duration(n * float64(time.Millisecond))
	}
	l := launch{command: cmdline[0], args: cmdline[1:], env: envList(env), dir: project, timeout: timeout}
	return append(cs, checkEntryLaunch(ctx, "OpenCode", where, reinstall, cfgPath, l)...)
}

// checkEntryLaunch checks an entry's command and config, then starts it as
// the host would and speaks MCP to it.
func checkEntryLaunch(ctx context.Context, host, where, reinstall, cfgPath string, l launch) []check {
	var cs []check
	switch {
	case l.command == "":
		return append(cs, failf(reinstall, "%s has no command", where))
	case !filepath.IsAbs(l.command):
		cs = append(cs, warnf(reinstall, "%s starts %q by PATH lookup; hosts started from a GUI or another shell may not find it", where, l.command))
	}
	cmdPath := l.command
	if !filepath.IsAbs(cmdPath) {
		if p, err := exec.LookPath(cmdPath); err == nil {
			cmdPath = p
		}
	}
	fi, err := os.Stat(cmdPath)
	switch {
	case err != nil:
		return append(cs, failf(reinstall, "%s runs %s, which does not exist (%v)", where, l.command, errors.Unwrap(err)))
	case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		return append(cs, failf(reinstall, "%s runs %s, which is not an executable file", where, l.command))
	}
	shown := quoteArgs(append([]string{l.command}, l.args...))
	cs = append(cs, okf("%s: %s", where, shown))
	entryCfg := flagValue(l.args, "--config")
	switch {
	case entryCfg == "":
		cs = append(cs, warnf(reinstall, "%s starts cgcat without --config: it depends on the host's environment to find the config (Codex passes no XDG_* or CGCAT_CONFIG)", where))
	case !filepath.IsAbs(entryCfg):
		cs = append(cs, failf(reinstall, "%s names a relative config path %q; the host's working directory decides what it means", where, entryCfg))
	default:
		if _, err := config.Load(entryCfg); err != nil {
			cs = append(cs, failf("fix that config file (cgcat config check --config "+entryCfg+")", "%s uses config %s, which is not valid: %v", where, entryCfg, err))
		} else if cfgPath != "" && !pathid.Same(entryCfg, cfgPath) {
			cs = append(cs, warnf("if that is not intended: "+reinstall, "%s uses config %s, not %s (checked above)", where, entryCfg, cfgPath))
		}
	}
	hs, err := mcpHandshake(ctx, l)
	if err != nil {
		c := failf(reinstall+"; or run the command above yourself to see its error", "started as %s starts it: %v", host, err)
		if hs != nil && hs.stderr != "" {
			for _, line := range lastLines(hs.stderr, 5) {
				c.notes = append(c.notes, "stderr: "+line)
			}
		}
		return append(cs, c)
	}
	started := okf("started as %s starts it: %s %s answered initialize (protocol %s) and tools/list in %s", host, hs.serverName, hs.serverVersion, hs.protocol, hs.elapsed.Round(time.Millisecond))
	if hs.serverName != "cgcat" {
		started = warnf(reinstall, "started as %s starts it, but it answered as %q %s, not cgcat", host, hs.serverName, hs.serverVersion)
	}
	cs = append(cs, started)
	var missing, notRO []string
	for _, t := range []string{hostconfig.ToolProjects, hostconfig.ToolResolve} {
		tool, ok := hs.tools[t]
		switch {
		case !ok:
			missing = append(missing, t)
		case tool.Annotations.ReadOnlyHint == nil || !*tool.Annotations.ReadOnlyHint:
			notRO = append(notRO, t)
		}
	}
	switch {
	case len(missing) > 0:
		cs = append(cs, failf(reinstall, "tools/list lacks %s", strings.Join(missing, ", ")))
	case len(notRO) > 0:
		cs = append(cs, warnf("upgrade cgcat; hosts may ask for approval on every call", "tools: %s, %s; not annotated readOnlyHint: %s", hostconfig.ToolProjects, hostconfig.ToolResolve, strings.Join(notRO, ", ")))
	default:
		cs = append(cs, okf("tools: %s, %s (both readOnlyHint)", hostconfig.ToolProjects, hostconfig.ToolResolve))
	}
	return cs
}

type handshake struct {
	serverName, serverVersion, protocol string
	tools                               map[string]mcp.Tool
	elapsed                             time.Duration
	stderr                              string
}

// mcpHandshake starts l as an MCP stdio server (stdin and stdout are pipes,
// as a host makes them), runs initialize and tools/list within l.timeout,
// and closes it (stdin first, then a signal).
func mcpHandshake(ctx context.Context, l launch) (*handshake, error) {
	tail := &tailBuffer{max: 8 << 10}
	hs := &handshake{}
	start := time.Now()
	procCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	tr := transport.NewStdioWithOptions(l.command, nil, l.args,
		transport.WithCommandFunc(func(ctx context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = l.env
			cmd.Dir = l.dir
			if cmd.Dir == "" {
				cmd.Dir = os.TempDir()
			}
			cmd.Stderr = tail
			return cmd, nil
		}))
	c := client.NewClient(tr)
	if err := c.Start(procCtx); err != nil {
		return hs, fmt.Errorf("cannot start it: %w", err)
	}
	defer func() {
		_ = c.Close()
		hs.stderr = tail.String()
	}()
	callCtx, callCancel := context.WithTimeout(ctx, l.timeout)
	defer callCancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "cgcat-doctor", Version: version}
	res, err := c.Initialize(callCtx, init)
	if err != nil {
		hs.stderr = tail.String()
		return hs, handshakeError("initialize", err, l.timeout, callCtx)
	}
	hs.serverName, hs.serverVersion, hs.protocol = res.ServerInfo.Name, res.ServerInfo.Version, res.ProtocolVersion
	list, err := c.ListTools(callCtx, mcp.ListToolsRequest{})
	if err != nil {
		hs.stderr = tail.String()
		return hs, handshakeError("tools/list", err, l.timeout, callCtx)
	}
	hs.tools = map[string]mcp.Tool{}
	for _, t := range list.Tools {
		hs.tools[t.Name] = t
	}
	hs.elapsed = time.Since(start)
	return hs, nil
}

func handshakeError(step string, err error, timeout time.Duration, ctx context.Context) error {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer to %s within %s (the host gives up after that too)", step, timeout)
	}
	if errors.Is(err, transport.ErrTransportClosed) || errors.Is(err, io.EOF) {
		return fmt.Errorf("the process ended before answering %s", step)
	}
	return fmt.Errorf("%s failed: %v", step, err)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

func stringList(v any) ([]string, bool) {
	if v == nil {
		return nil, true
	}
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func tomlNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// flagValue returns the value of --name in args ("--name V" or "--name=V").
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}
