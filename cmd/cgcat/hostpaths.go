package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
)

// Where each host keeps its user configuration, from this process's
// environment (the same variables the hosts read).

// promptPolicy says, for a person, whether host asks before running our
// tools without a rule (measured with the versions the tests pin).
func promptPolicy(host string) string {
	switch host {
	case hostCodex:
		return "Codex runs tools annotated readOnlyHint (both of cgcat's) without asking"
	case hostOpenCode:
		return "OpenCode runs MCP tools without asking unless its permission settings say otherwise"
	case hostClaude:
		return "Claude Code ignores readOnlyHint: without an allow rule it asks before every call, and `claude -p` refuses the call"
	}
	return "Gemini CLI ignores readOnlyHint: without an allow rule it asks before every call, and `gemini -p` does not offer the tools at all"
}

func userHome() (string, error) {
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the home directory: %v", err)
	}
	return h, nil
}

// claudeFiles are Claude Code's user MCP file and settings file.
func claudeFiles() (mcpFile, settings string, err error) {
	home, err := userHome()
	dir := os.Getenv("CLAUDE_CONFIG_DIR")
	if err != nil && dir == "" {
		return "", "", err
	}
	mcpFile, settings = hostconfig.ClaudePaths(dir, home)
	return mcpFile, settings, nil
}

// geminiFiles are Gemini CLI's settings file and the policy file cgcat
// owns for the entry called name.
func geminiFiles(name string) (settings, policy string, err error) {
	home, err := userHome()
	dir := os.Getenv("GEMINI_CLI_HOME")
	if err != nil && dir == "" {
		return "", "", err
	}
	settings, policy = hostconfig.GeminiPaths(dir, home, name)
	return settings, policy, nil
}

// codexConfigFile is $CODEX_HOME/config.toml, else ~/.codex/config.toml.
func codexConfigFile() (string, error) {
	home := os.Getenv("CODEX_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot find the Codex config: no $CODEX_HOME and no home directory (%v)", err)
		}
		home = filepath.Join(h, ".codex")
	}
	home, err := filepath.Abs(home)
	if err != nil {
		return "", err
	}
	return hostconfig.CodexPath(home), nil
}

// opencodeConfigDir is the directory whose opencode.json(c) we edit: the
// project directory when given, else $XDG_CONFIG_HOME/opencode, else
// ~/.config/opencode.
func opencodeConfigDir(project string) (string, error) {
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
		return abs, nil
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "opencode"), nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the OpenCode config: no $XDG_CONFIG_HOME and no home directory (%v)", err)
	}
	return filepath.Join(h, ".config", "opencode"), nil
}

// hostFile returns the file to edit for host and whether it exists. For
// OpenCode a missing file means opencode.json in the config directory.
func hostFile(host, project string) (path string, exists bool, err error) {
	switch host {
	case hostCodex:
		path, err = codexConfigFile()
	case hostClaude:
		path, _, err = claudeFiles()
	case hostGemini:
		path, _, err = geminiFiles(hostconfig.DefaultName)
	default:
		var dir string
		dir, err = opencodeConfigDir(project)
		if err != nil {
			return "", false, err
		}
		path, err = hostconfig.FindOpenCode(dir)
		if err != nil {
			return "", false, err
		}
		if path == "" {
			path = filepath.Join(dir, hostconfig.OpenCodeJSON)
		}
	}
	if err != nil {
		return "", false, err
	}
	_, serr := os.Stat(path)
	switch {
	case serr == nil:
		return path, true, nil
	case errors.Is(serr, fs.ErrNotExist):
		return path, false, nil
	}
	return "", false, serr
}
