package scriptedmodel

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// ---- OpenAI Responses (Codex) ------------------------------------------

func (s *Server) responses(w http.ResponseWriter, body []byte) {
	var req struct {
		Instructions string           `json:"instructions"`
		Input        []map[string]any `json:"input"`
		Tools        []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	t := Turn{Wire: "responses", Path: "/responses", System: req.Instructions, ToolBytes: toolListBytes(body)}
	var addTool func(ns string, m map[string]any)
	addTool = func(ns string, m map[string]any) {
		switch str(m, "type") {
		case "function":
			t.Tools = append(t.Tools, Tool{Namespace: ns, Name: str(m, "name"), Description: str(m, "description"), Parameters: raw(m["parameters"]), Bytes: size(m)})
		case "namespace":
			// Codex puts an MCP server's instructions here.
			if d := str(m, "description"); d != "" {
				t.System += "\n" + d
			}
			for _, x := range toMaps(m["tools"]) {
				addTool(str(m, "name"), x)
			}
		}
	}
	for _, m := range req.Tools {
		addTool("", m)
	}
	calls := map[string]string{}
	var prompts, system []string
	for _, it := range req.Input {
		switch str(it, "type") {
		case "message", "":
			switch str(it, "role") {
			case "user":
				prompts = append(prompts, text(it["content"]))
			case "developer", "system":
				system = append(system, text(it["content"]))
			}
		case "function_call":
			name := str(it, "name")
			if ns := str(it, "namespace"); ns != "" {
				name = ns + "." + name
			}
			calls[str(it, "call_id")] = name
		case "function_call_output":
			out := it["output"]
			if s, ok := out.(string); ok {
				t.Results = append(t.Results, Result{Tool: calls[str(it, "call_id")], Text: s})
			} else {
				t.Results = append(t.Results, Result{Tool: calls[str(it, "call_id")], Text: string(raw(out))})
			}
		}
	}
	t.Prompt = strings.Join(prompts, "\n")
	if len(system) > 0 {
		t.System = strings.TrimSpace(t.System + "\n" + strings.Join(system, "\n"))
	}
	t.Reply = decide(&t)
	s.record(t)

	id := s.nextID("resp")
	var item map[string]any
	if c := t.Reply.Call; c != nil {
		item = map[string]any{"type": "function_call", "id": s.nextID("fc"), "call_id": s.nextID("call"),
			"name": c.Tool.Name, "arguments": argsJSON(c.Args), "status": "completed"}
		if c.Tool.Namespace != "" {
			item["namespace"] = c.Tool.Namespace
		}
	} else {
		item = map[string]any{"type": "message", "id": s.nextID("msg"), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": t.Reply.Text, "annotations": []any{}}}}
	}
	e := newSSE(w)
	e.send("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	e.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	e.send("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": id, "usage": map[string]any{"input_tokens": 100, "input_tokens_details": nil, "output_tokens": 10, "output_tokens_details": nil, "total_tokens": 110}}})
}

// toolListBytes is the size of a request's "tools" member as sent.
func toolListBytes(body []byte) int {
	var v struct {
		Tools json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal(body, &v)
	return len(v.Tools)
}

// size is the size of v as compact JSON (what a host sends for one tool's
// definition, to within number spelling).
func size(v any) int {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return b.Len() - 1
}

func toMaps(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// ---- OpenAI Chat Completions (OpenCode) -------------------------------

func (s *Server) chat(w http.ResponseWriter, body []byte) {
	var req struct {
		Messages []map[string]any `json:"messages"`
		Tools    []map[string]any `json:"tools"`
		Stream   bool             `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	t := Turn{Wire: "chat", Path: "/chat/completions", ToolBytes: toolListBytes(body)}
	for _, m := range req.Tools {
		if f, ok := m["function"].(map[string]any); ok {
			t.Tools = append(t.Tools, Tool{Name: str(f, "name"), Description: str(f, "description"), Parameters: raw(f["parameters"]), Bytes: size(m)})
		}
	}
	calls := map[string]string{}
	var prompts, system []string
	for _, m := range req.Messages {
		switch str(m, "role") {
		case "user":
			prompts = append(prompts, text(m["content"]))
		case "system", "developer":
			system = append(system, text(m["content"]))
		case "assistant":
			for _, c := range toMaps(m["tool_calls"]) {
				if f, ok := c["function"].(map[string]any); ok {
					calls[str(c, "id")] = str(f, "name")
				}
			}
		case "tool":
			t.Results = append(t.Results, Result{Tool: calls[str(m, "tool_call_id")], Text: text(m["content"])})
		}
	}
	t.Prompt, t.System = strings.Join(prompts, "\n"), strings.Join(system, "\n")
	t.Reply = decide(&t)
	s.record(t)

	id := s.nextID("chatcmpl")
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": "scripted",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	usage := map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
	var delta map[string]any
	finish := "stop"
	if c := t.Reply.Call; c != nil {
		finish = "tool_calls"
		delta = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": s.nextID("call"), "type": "function",
			"function": map[string]any{"name": c.Tool.Name, "arguments": argsJSON(c.Args)}}}}
	} else {
		delta = map[string]any{"role": "assistant", "content": t.Reply.Text}
	}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": delta["content"]}
		if tc, ok := delta["tool_calls"]; ok {
			msg["tool_calls"] = tc
		}
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": 1700000000, "model": "scripted",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	e := newSSE(w)
	e.send("", chunk(delta, nil))
	last := chunk(map[string]any{}, finish)
	last["usage"] = usage
	e.send("", last)
	e.send("", "[DONE]")
}

// ---- Anthropic Messages (Claude Code) ---------------------------------

func (s *Server) messages(w http.ResponseWriter, body []byte) {
	var req struct {
		Model    string           `json:"model"`
		System   any              `json:"system"`
		Messages []map[string]any `json:"messages"`
		Tools    []map[string]any `json:"tools"`
		Stream   bool             `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	t := Turn{Wire: "messages", Path: "/messages", System: text(req.System), ToolBytes: toolListBytes(body)}
	for _, m := range req.Tools {
		t.Tools = append(t.Tools, Tool{Name: str(m, "name"), Description: str(m, "description"), Parameters: raw(m["input_schema"]), Bytes: size(m)})
	}
	calls := map[string]string{}
	var prompts []string
	for _, m := range req.Messages {
		if str(m, "role") == "system" {
			// Claude Code 2.1.332 sends context (MCP server instructions
			// among it) as system messages too.
			t.System += "\n" + text(m["content"])
			continue
		}
		content, isText := m["content"].(string)
		if isText {
			if str(m, "role") == "user" {
				prompts = append(prompts, content)
			}
			continue
		}
		for _, b := range toMaps(m["content"]) {
			switch str(b, "type") {
			case "text":
				if str(m, "role") == "user" {
					prompts = append(prompts, str(b, "text"))
				}
			case "tool_use":
				calls[str(b, "id")] = str(b, "name")
			case "tool_result":
				isErr, _ := b["is_error"].(bool)
				t.Results = append(t.Results, Result{Tool: calls[str(b, "tool_use_id")], Text: text(b["content"]), IsError: isErr})
			}
		}
	}
	t.Prompt = strings.Join(prompts, "\n")
	t.Reply = decide(&t)
	s.record(t)

	id := s.nextID("msg")
	model := req.Model
	var block map[string]any
	var delta map[string]any
	stop := "end_turn"
	if c := t.Reply.Call; c != nil {
		stop = "tool_use"
		block = map[string]any{"type": "tool_use", "id": s.nextID("toolu"), "name": c.Tool.Name, "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": argsJSON(c.Args)}
	} else {
		block = map[string]any{"type": "text", "text": ""}
		delta = map[string]any{"type": "text_delta", "text": t.Reply.Text}
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		full := map[string]any{}
		for k, v := range block {
			full[k] = v
		}
		if c := t.Reply.Call; c != nil {
			full["input"] = c.Args
		} else {
			full["text"] = t.Reply.Text
		}
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
			"content": []any{full}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	e := newSSE(w)
	e.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	e.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	e.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}})
	e.send("message_stop", map[string]any{"type": "message_stop"})
}

// ---- Gemini generateContent (Gemini CLI) --------------------------------

func (s *Server) gemini(w http.ResponseWriter, body []byte, path string, stream bool) {
	var req struct {
		Contents          []map[string]any `json:"contents"`
		Tools             []map[string]any `json:"tools"`
		SystemInstruction any              `json:"systemInstruction"`
		GenerationConfig  map[string]any   `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	t := Turn{Wire: "gemini", Path: path, System: text(req.SystemInstruction), ToolBytes: toolListBytes(body)}
	for _, tl := range req.Tools {
		for _, f := range toMaps(tl["functionDeclarations"]) {
			params := f["parametersJsonSchema"]
			if params == nil {
				params = f["parameters"]
			}
			t.Tools = append(t.Tools, Tool{Name: str(f, "name"), Description: str(f, "description"), Parameters: raw(params), Bytes: size(f)})
		}
	}
	var prompts []string
	for _, c := range req.Contents {
		for _, p := range toMaps(c["parts"]) {
			switch {
			case p["functionResponse"] != nil:
				fr, _ := p["functionResponse"].(map[string]any)
				t.Results = append(t.Results, Result{Tool: str(fr, "name"), Text: string(raw(fr["response"]))})
			case str(c, "role") == "user" && str(p, "text") != "":
				prompts = append(prompts, str(p, "text"))
			}
		}
	}
	t.Prompt = strings.Join(prompts, "\n")
	var part map[string]any
	if mime := str(req.GenerationConfig, "responseMimeType"); mime == "application/json" {
		// A structured side request (next speaker, routing, loop check): the
		// user speaks next, and nothing loops.
		t.Reply = Reply{Text: `{"reasoning": "the answer is complete", "next_speaker": "user"}`}
		part = map[string]any{"text": t.Reply.Text}
	} else {
		t.Reply = decide(&t)
		if c := t.Reply.Call; c != nil {
			part = map[string]any{"functionCall": map[string]any{"name": c.Tool.Name, "args": c.Args}}
		} else {
			part = map[string]any{"text": t.Reply.Text}
		}
	}
	s.record(t)
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  "gemini-2.5-flash",
	}
	if !stream {
		writeJSON(w, resp)
		return
	}
	newSSE(w).send("", resp)
}
