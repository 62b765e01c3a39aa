// Command fakegbrain is a stand-in for `gbrain serve` (GBrain 0.46.28.0)
// for cgcat's tests: MCP over stdio (mcp-go's server), the tools cgcat uses,
// and the behaviour measured on that release — slugs lowercased on
// write only, re-serialised content that is a fixed point, add-only tags,
// frontmatter-id de-duplication, offset paging capped at 100, soft delete,
// JSON text results and isError JSON errors, source resolution from
// GBRAIN_SOURCE.
//
// `fakegbrain serve --http [--port N] [--bind ADDR] [--token-ttl S]
// [--public-url URL]` is `gbrain serve --http`: POST /mcp, stateless,
// answers framed as server-sent events, OAuth 2.1 bearer tokens (see
// http.go).
//
// Environment:
//
//	GBRAIN_FAKE_STATE    state file (required); shared by processes, survives restarts
//	GBRAIN_FAKE_READY    (--http) file the fake writes its base URL to once it listens
//	GBRAIN_FAKE_CONTROL  fault switches (see fakebrain.Control), re-read at every call
//	GBRAIN_FAKE_SOURCES  comma-separated registered sources besides "default"
//	GBRAIN_SOURCE        the source to write to, as in GBrain
//	GBRAIN_BRAIN_ID      the brain: "host" (or unset) is this state; any other
//	                     id is an unknown mount, and the fake exits at start as
//	                     GBrain does ("Unknown brain")
//	GBRAIN_FAKE_MEMORY   1: load the state once and keep it in memory (benchmarks;
//	                     see fakebrain.MemoryMode)
//	GBRAIN_FAKE_FORCE_SOURCE  fault: serve this source whatever GBRAIN_SOURCE says
//	                     (a server pinned to another source, as over HTTP)
//
// Calls are counted per tool in the state file.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/cgcat/cgcat/gbrain/gbraintest/internal/fakebrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest/internal/fakeserver"
)

func main() {
	statePath := os.Getenv("GBRAIN_FAKE_STATE")
	controls := fakebrain.ControlFile(os.Getenv("GBRAIN_FAKE_CONTROL"))
	if statePath == "" {
		fmt.Fprintln(os.Stderr, "fake gbrain: GBRAIN_FAKE_STATE is not set")
		os.Exit(2)
	}
	ctl, err := controls.Read()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake gbrain:", err)
		os.Exit(2)
	}
	switch ctl.ExitAtStart {
	case "pglite":
		fmt.Fprintf(os.Stderr, "[gbrain] Error: GBrain's local database is already open through `gbrain serve` (pid %d). "+
			"PGLite cannot open it at the same time. Stop the other process, or use a Postgres-backed brain.\n", os.Getppid())
		os.Exit(1)
	case "crash":
		fmt.Fprintln(os.Stderr, "[gbrain] fatal: simulated crash at start-up")
		os.Exit(3)
	}
	if b := os.Getenv("GBRAIN_BRAIN_ID"); b != "" && b != "host" {
		fmt.Fprintf(os.Stderr, "[gbrain] Error: Unknown brain: %q. No enabled mount with id %q found. Available brain ids: (none registered)\n", b, b)
		os.Exit(1)
	}
	if ctl.StartDelayMs > 0 {
		time.Sleep(time.Duration(ctl.StartDelayMs) * time.Millisecond)
	}

	var registered []string
	for _, s := range strings.Split(os.Getenv("GBRAIN_FAKE_SOURCES"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			registered = append(registered, s)
		}
	}
	httpMode := len(os.Args) > 2 && os.Args[1] == "serve" && slices.Contains(os.Args[2:], "--http")
	store := fakebrain.FileStore(statePath)
	if fakebrain.MemoryMode() {
		if store, err = fakebrain.LoadMemoryStore(statePath); err != nil {
			fmt.Fprintln(os.Stderr, "fake gbrain:", err)
			os.Exit(2)
		}
	}
	srv := &fakeserver.Server{Store: store, Controls: controls, Registered: registered,
		Brain: &fakebrain.Brain{Source: resolveSource(), Registered: registered},
		Drop: func(tool, when string) {
			fmt.Fprintf(os.Stderr, "[gbrain] fake fault: connection dropped %s applying %s\n", when, tool)
			os.Exit(2)
		}}
	if httpMode {
		// Over HTTP the token decides the source; GBRAIN_SOURCE means
		// nothing.
		srv.Brain.Source = "default"
	}
	cwd, _ := os.Getwd()
	if err := store.Update(func(st *fakebrain.State) error {
		st.Starts = append(st.Starts, fakebrain.Start{
			PID: os.Getpid(), Source: srv.Brain.Source, EnvSource: os.Getenv("GBRAIN_SOURCE"), EnvBrain: os.Getenv("GBRAIN_BRAIN_ID"),
			SkipHooks: os.Getenv("GBRAIN_SKIP_STARTUP_HOOKS"), Cwd: cwd, Args: os.Args[1:],
		})
		return nil
	}); err != nil {
		fmt.Fprintln(os.Stderr, "fake gbrain:", err)
		os.Exit(2)
	}
	if httpMode {
		if err := serveHTTP(srv, os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "[gbrain] serve --http:", err)
			os.Exit(1)
		}
		return
	}
	fmt.Fprintf(os.Stderr, "[gbrain] %s serving MCP over stdio, source %s\n", fakeserver.ServerVersion, srv.Brain.Source)
	if err := server.ServeStdio(srv.MCP()); err != nil {
		fmt.Fprintln(os.Stderr, "[gbrain] stdio:", err)
		os.Exit(1)
	}
}

// resolveSource follows GBrain: GBRAIN_SOURCE when well-formed (a malformed
// one is silently ignored), then a .gbrain-source file in the working
// directory or a parent, then "default".
func resolveSource() string {
	if s := os.Getenv("GBRAIN_FAKE_FORCE_SOURCE"); s != "" {
		return s
	}
	if s := os.Getenv("GBRAIN_SOURCE"); fakebrain.ValidSource(s) {
		return s
	}
	dir, err := os.Getwd()
	for err == nil {
		if b, rerr := os.ReadFile(filepath.Join(dir, ".gbrain-source")); rerr == nil {
			if s := strings.TrimSpace(string(b)); fakebrain.ValidSource(s) {
				return s
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "default"
}
