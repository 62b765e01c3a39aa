package hostconfig

import "fmt"

// The short agent usage text (R25), shared by every host. It is
// printed for the user to add to their own AGENTS.md or rules; this package
// never writes it anywhere.
const (
	instructionsEN = `When you need knowledge about local code outside the current repository, first use ` + ToolProjects + ` to find the relevant existing CodeGraph index, then pass the absolute projectPath it returns, unchanged, to codegraph_explore of the existing CodeGraph MCP server (do not pass a projectId, do not append .codegraph). Re-check an old projectId with ` + ToolResolve + ` first. The catalog only finds projects; code facts come from the native CodeGraph. Never create or sync indexes automatically.

Hosts prefix tool names with the server name: take the real names from your tool list.
`

	instructionsZH = `需要当前仓库之外的本机代码知识时，先用 ` + ToolProjects + ` 找到相关已有索引；将其返回的绝对 projectPath 原样传给现有 CodeGraph MCP 的 codegraph_explore（不传 projectId，不拼接 .codegraph）。历史 projectId 先用 ` + ToolResolve + ` 复验。目录工具只找项目，代码事实来自原生 CodeGraph；不要自动创建或同步索引。

宿主会给工具名加上服务名前缀：实际可调用名称以当前工具列表为准。
`
)

// Instructions returns the short agent usage text (R25) in
// "en" or "zh". It only returns text: it never writes AGENTS.md or any
// other file.
func Instructions(lang string) (string, error) {
	switch lang {
	case "", "en":
		return instructionsEN, nil
	case "zh":
		return instructionsZH, nil
	}
	return "", fmt.Errorf("unknown language %q: use en or zh", lang)
}
