package hostconfig

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

func TestInstructions(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		s, err := Instructions(lang)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{ToolProjects, ToolResolve, "codegraph_explore", "projectPath", "projectId"} {
			if !strings.Contains(s, w) {
				t.Errorf("%s text does not mention %s", lang, w)
			}
		}
		if len(s) > 1200 {
			t.Errorf("%s text is not short: %d bytes", lang, len(s))
		}
	}
	zh, _ := Instructions("zh")
	if !strings.Contains(zh, "不要自动创建或同步索引") {
		t.Error("zh text lost the seed's wording")
	}
	if _, err := Instructions("fr"); err == nil {
		t.Error("unknown language accepted")
	}
}

func TestSnippets(t *testing.T) {
	codex, opencode := Snippets(testEntry)
	checkGolden(t, "snippet.codex.toml", []byte(codex))
	checkGolden(t, "snippet.opencode.json", []byte(opencode))
	var m map[string]any
	if err := toml.Unmarshal([]byte(codex), &m); err != nil {
		t.Fatal(err)
	}
	got := m["mcp_servers"].(map[string]any)[testEntry.Name]
	if !equalValue(got, codexValue(testEntry)) {
		t.Errorf("codex snippet = %v", got)
	}
	oc := decodeOpenCode(t, []byte(opencode))
	if got := oc["mcp"].(map[string]any)[testEntry.Name]; !equalValue(got, roundTrip(opencodeValue(testEntry))) {
		t.Errorf("opencode snippet = %v", got)
	}
}
