package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/internal/scriptedmodel"
)

func TestScratchExplore(t *testing.T) {
	host := os.Getenv("X_HOST")
	p := e2eFixture(t)
	e := newTestEnv(t)
	e.cfgPath = e2eConfig(t, p)
	model := scriptedmodel.Start()
	defer model.Close()
	model.DumpDir = "/tmp/dump/" + host
	os.MkdirAll(model.DumpDir, 0o755)
	bin := e2eTool(t, os.Getenv("X_BIN"))
	r := &agentRun{e: e, model: model, workspace: filepath.Join(e.base, "ws"), npmBin: filepath.Dir(bin)}
	os.MkdirAll(r.workspace, 0o755)
	vars := map[string]string{"URL": model.URL, "CGCAT": cgcatBin(t), "CFG": e.cfgPath, "HOME": e.home}
	for _, f := range []string{"X_FILE1", "X_FILE2"} {
		spec := os.Getenv(f)
		if spec == "" {
			continue
		}
		path, body, _ := cut(spec)
		writeTestFile(t, os.Expand(path, func(k string) string { return vars[k] }), os.Expand(body, func(k string) string { return vars[k] }))
	}
	prompt := scriptedmodel.Prompt("@fruit/banana-sdk", "BananaOrdersClient createBananaOrder")
	args := []string{}
	for _, a := range splitArgs(os.Getenv("X_ARGS")) {
		if a == "PROMPT" {
			a = prompt
		}
		args = append(args, a)
	}
	var extra []string
	for _, kv := range splitArgs(os.Getenv("X_ENV")) {
		extra = append(extra, os.Expand(kv, func(k string) string { return vars[k] }))
	}
	env := r.baseEnv(extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, r.workspace
	out, err := cmd.CombinedOutput()
	fmt.Printf("elapsed %s err %v\n%s\n", time.Since(start), err, out)
	fmt.Println(describeTurns(model.Turns()))
	fmt.Println("unhandled", model.Unhandled())
}

func cut(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '|' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func splitArgs(s string) []string {
	var out []string
	for _, a := range filepath.SplitList(s) {
		if a != "" {
			out = append(out, a)
		}
	}
	return out
}
