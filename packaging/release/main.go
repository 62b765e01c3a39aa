// Command release builds cgcat's release archives (`make release`): for
// each supported platform a binary built with -trimpath and the version
// stamped in, packed with the README, the man pages and the shell
// completions (tar.gz, zip for Windows), an MCP bundle (.mcpb) for hosts
// that install from the MCP registry, SHA256SUMS over them all, and,
// generated from those archives and sums, a Homebrew formula, a Scoop
// manifest and the registry's server.json. It needs nothing but the Go
// toolchain and runs offline; nothing is published.
//
// It owns packaging only: it never changes the source tree (everything
// goes under -out) and never reaches the network.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// platforms are the release targets (GOOS/GOARCH).
var platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}

// repoURL is where release assets are downloaded from.
const repoURL = "https://github.com/cgcat/cgcat"

type options struct {
	version, commit, date string
	out                   string
}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "the version to stamp (e.g. v1.2.0; default: git describe)")
	flag.StringVar(&o.commit, "commit", "", "the commit to stamp (default: git rev-parse --short HEAD)")
	flag.StringVar(&o.date, "date", "", "the build date to stamp (default: now, UTC)")
	flag.StringVar(&o.out, "out", "dist", "where to write the release")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	o.version = orGit(o.version, "describe", "--tags", "--always", "--dirty")
	o.commit = orGit(o.commit, "rev-parse", "--short", "HEAD")
	if o.date == "" {
		o.date = time.Now().UTC().Format(time.RFC3339)
	}
	if err := os.RemoveAll(o.out); err != nil {
		return err
	}
	work := filepath.Join(o.out, ".work")
	// Man pages and completions come from a binary for this machine.
	host := filepath.Join(work, "host", "cgcat"+exe(runtime.GOOS))
	if err := build(o, runtime.GOOS, runtime.GOARCH, host); err != nil {
		return err
	}
	extras := filepath.Join(work, "extras")
	if err := writeExtras(host, extras); err != nil {
		return err
	}
	var assets []asset
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		bin := filepath.Join(work, goos+"_"+goarch, "cgcat"+exe(goos))
		if err := build(o, goos, goarch, bin); err != nil {
			return err
		}
		a, err := pack(o, goos, goarch, bin, extras)
		if err != nil {
			return err
		}
		assets = append(assets, a...)
		fmt.Printf("%s/%s: %s\n", goos, goarch, a[0].name)
	}
	if err := writeSums(o.out, assets); err != nil {
		return err
	}
	if err := writeManifests(o, assets); err != nil {
		return err
	}
	return os.RemoveAll(work)
}

// build cross-compiles cgcat for one platform (static, reproducible
// paths, the version stamped as `cgcat version` reads it).
func build(o options, goos, goarch, out string) error {
	ld := fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s -X main.date=%s", o.version, o.commit, o.date)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ld, "-o", out, "./cmd/cgcat")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s/%s: %w", goos, goarch, err)
	}
	return nil
}

// writeExtras writes the man pages and the completion scripts the
// archives carry, as the host binary makes them.
func writeExtras(host, dir string) error {
	if err := exec.Command(host, "man", filepath.Join(dir, "man")).Run(); err != nil {
		return fmt.Errorf("cgcat man: %w", err)
	}
	for shell, name := range map[string]string{"bash": "cgcat.bash", "zsh": "_cgcat", "fish": "cgcat.fish", "powershell": "cgcat.ps1"} {
		out, err := exec.Command(host, "completion", shell).Output()
		if err != nil {
			return fmt.Errorf("cgcat completion %s: %w", shell, err)
		}
		if err := writeFile(filepath.Join(dir, "completions", name), out); err != nil {
			return err
		}
	}
	return nil
}

func exe(goos string) string {
	if goos == "windows" {
		return ".exe"
	}
	return ""
}

// orGit is v, else what git says (else "dev" or "unknown").
func orGit(v string, args ...string) string {
	if v != "" {
		return v
	}
	out, err := exec.Command("git", args...).Output()
	if s := strings.TrimSpace(string(out)); err == nil && s != "" {
		return s
	}
	if args[0] == "describe" {
		return "dev"
	}
	return "unknown"
}

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
