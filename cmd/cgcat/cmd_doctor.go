package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/doctor"
	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/cgcat/cgcat/local/config"
	"github.com/spf13/cobra"
)

type doctorOptions struct {
	name    string
	project string
	json    bool
	// versionTimeout bounds `codex --version` and the like.
	versionTimeout time.Duration
}

func newDoctorCommand(g *globalOptions) *cobra.Command {
	o := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the config, roots, data dir, catalog store, leases and the host entries (cgcat's and CodeGraph's)",
		Long: `Check everything cgcat needs, one line per check (✓ fine, ✗ broken, ! worth a look, · for
information), with the fix under every problem:

  config      the config file is valid (and its warnings)
  roots       every root exists and is readable
  data dir    the catalog directory is writable
  store       the catalog opens; format, records by availability, last scan pass, coverage gaps
  leases      who holds scan.lease (and projector.lease)
  gbrain      the configured connection, when gbrain.enabled
  HOST        for each host (` + "`" + `cgcat install` + "`" + `'s hosts) that has cgcat's entry: the entry is
              started exactly as the host starts it, with a real MCP handshake and
              tools/list; the host's tool filters; CodeGraph's own entry is found and
              started (codegraph_explore must take projectPath, else backend_incompatible;
              over HTTP, whether it can see this machine's paths); and whether calls will
              ask for approval, or that doctor could not tell

--json prints the same report as one JSON object. The exit status is 1 when something
is broken.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.name, "name", hostconfig.DefaultName, "server name of cgcat's entry in the host configs")
	cmd.Flags().StringVar(&o.project, "project", "", "also check the project config in DIR of the hosts that read one (OpenCode's opencode.json(c))")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the report as JSON")
	return cmd
}

// The check type and constructors, for the checks other commands add
// (cmd_gbrain_status.go).
type check = doctor.Check

var (
	okf   = doctor.Okf
	infof = doctor.Infof
	warnf = doctor.Warnf
	failf = doctor.Failf
)

func runDoctor(ctx context.Context, g *globalOptions, o *doctorOptions, out, _ io.Writer) error {
	if o.name == "" {
		o.name = hostconfig.DefaultName
	}
	if o.versionTimeout == 0 {
		o.versionTimeout = 30 * time.Second
	}
	r := &doctor.Report{Version: version}
	// Host CLI versions are slow to read (OpenCode starts a whole runtime):
	// ask, in the background, for the hosts that have a config file.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	inputs := hostInputs(o)
	var withConfig []string
	for _, in := range inputs {
		if _, err := os.Stat(in.File); in.FileErr == nil && err == nil && in.Dir == "" {
			withConfig = append(withConfig, in.Host.Name)
		}
	}
	versions := startHostVersions(ctx, o.versionTimeout, withConfig)

	cfg, err := g.loadConfig()
	asked := g.configPath
	if asked == "" {
		asked = config.DefaultPath()
	}
	r.Add("config", doctor.Config(doctor.ConfigInput{Config: cfg, Err: err, AdHoc: len(g.roots) > 0, Asked: asked}))
	var cfgPath string
	if cfg != nil {
		cfgPath = cfg.Path
		r.Add("roots", doctor.Roots(cfg))
		ddChecks, ddUsable := doctor.DataDir(cfg.DataDir)
		r.Add("data dir", ddChecks)
		if ddUsable {
			// Before the store's check, whose opening of the store would
			// publish a damaged catalog again before it is named.
			r.Add("published catalog", doctor.Views(ctx, cfg.DataDir))
			r.Add("store", doctor.Store(ctx, cfg))
			r.Add("leases", doctor.Leases(cfg.DataDir))
		} else {
			r.Add("store", []check{infof("not checked (no usable data dir)")})
		}
		r.Add("gbrain", doctorGBrainSection(ctx, cfg))
	}
	for _, in := range inputs {
		in.CfgPath = cfgPath
		in.Version = versions.get(in.Host.Name)
		title := in.Host.Name
		if in.Dir != "" {
			title = in.Host.Name + " project " + o.project
			in.Version = ""
		}
		r.Add(title, doctor.Host(ctx, in))
	}
	if o.json {
		if err := r.WriteJSON(out); err != nil {
			return err
		}
	} else if err := r.WriteText(out); err != nil {
		return err
	}
	if r.Broken() {
		return &exitError{code: 1}
	}
	return nil
}

// hostInputs says where every host keeps its files (and the project file
// with --project, for the hosts that read one).
func hostInputs(o *doctorOptions) []doctor.HostInput {
	environ := os.Environ()
	env := hostEnv()
	var ins []doctor.HostInput
	add := func(h *hostconfig.Host, project string) {
		in := doctor.HostInput{Host: h, Env: env, Name: o.name, Environ: environ, Dir: project, CgcatVersion: version,
			Install: "cgcat install " + h.Name}
		if project != "" {
			in.Install += " --project " + project
		}
		in.File, _, in.FileErr = hostFile(h, env, project)
		if h.Allow != nil {
			in.AllowFile, _ = h.Allow.File(env, o.name)
		}
		ins = append(ins, in)
	}
	for _, h := range hostconfig.All() {
		add(h, "")
	}
	if o.project != "" {
		for _, h := range hostconfig.All() {
			if h.Project {
				add(h, o.project)
			}
		}
	}
	return ins
}

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
// outbox depth, conflicts).
func doctorGBrain(ctx context.Context, cfg *config.Config) []check {
	return gbrainDoctorChecks(ctx, cfg)
}

// hostVersions reads `<host> --version` in the background when the host's
// CLI is on PATH.
type hostVersions struct {
	mu   sync.Mutex
	done map[string]chan struct{}
	text map[string]string
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
