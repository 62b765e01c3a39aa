package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

type versionOptions struct {
	json bool
}

func newVersionCommand() *cobra.Command {
	o := &versionOptions{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print version, commit and build date",
		Long: "Print the version, the commit and the build date. A release build (`make release`) sets them; " +
			"`go install github.com/cgcat/cgcat/cmd/cgcat@VERSION` reports that module version; a `go build` from a git " +
			"checkout takes them from Go's build information (the module's pseudo-version, else vcs.revision; vcs.time, " +
			"vcs.modified), so even a development binary says which commit it was built from. doctor and the MCP " +
			"serverInfo report the same version.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runVersion(o, currentBuild(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the build as JSON")
	return cmd
}

// build is what `cgcat version` reports.
type build struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Date     string `json:"date"`
	Modified bool   `json:"modified"` // built from a checkout with uncommitted changes
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

// The version every part of cgcat reports (`cgcat version`, --version,
// doctor, the MCP serverInfo, host launch checks) is this one string:
// resolved once, before any command runs, into the variable they all read.
func init() { version = currentBuild().Version }

// currentBuild is this binary's build.
func currentBuild() build {
	info, _ := debug.ReadBuildInfo()
	return buildOf(version, commit, date, info)
}

// buildOf takes what -ldflags set (release builds) and fills the rest from
// Go's build information: the module version (`go install …@vX` gives
// vX; a build in a git checkout gives a pseudo-version such as
// v0.0.0-20261201120000-afa4807c1d2e), else the VCS revision ("dev+" and
// its first 12 hex digits, ".dirty" with uncommitted changes).
func buildOf(ldVersion, ldCommit, ldDate string, info *debug.BuildInfo) build {
	b := build{Version: ldVersion, Commit: ldCommit, Date: ldDate, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if info == nil {
		return b
	}
	if b.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = info.Main.Version
	}
	if info.GoVersion != "" {
		b.Go = info.GoVersion
	}
	revision := ""
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
			if b.Commit == "unknown" {
				b.Commit = s.Value
			}
		case "vcs.time":
			if b.Date == "unknown" {
				b.Date = s.Value
			}
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if b.Version == "dev" && revision != "" {
		b.Version = "dev+" + revision[:min(12, len(revision))]
		if b.Modified {
			b.Version += ".dirty"
		}
	}
	return b
}

// oneLine is the build for `cgcat --version`.
func (b build) oneLine() string {
	return fmt.Sprintf("%s (commit %s, built %s)", b.Version, b.commitText(), b.Date)
}

func (b build) commitText() string {
	if b.Modified {
		return b.Commit + ", with uncommitted changes"
	}
	return b.Commit
}

func runVersion(o *versionOptions, b build, out io.Writer) error {
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(b)
	}
	_, err := fmt.Fprintf(out, "cgcat %s\ncommit %s\nbuilt %s\n%s %s/%s\n", b.Version, b.commitText(), b.Date, b.Go, b.OS, b.Arch)
	return err
}
