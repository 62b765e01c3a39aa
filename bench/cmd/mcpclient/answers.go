package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"
)

// runAnswers writes one answer of each common kind, as the server wrote
// it (one JSON-RPC line), into dir: a query at limit 1, 5, 10 and 50, a
// listing at limit 50, a resolve, and tools/list and initialize. It
// prints a table of their sizes: the whole line, the text content and
// the structured content (bench/answers.sh counts their tokens).
func runAnswers(bin, cfg, dir, query string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	s, err := startRaw(bin, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer s.stop()
	projects := func(args map[string]any) ([]byte, error) {
		return s.call("tools/call", map[string]any{"name": "local_codegraph_projects", "arguments": args})
	}
	for deadline := time.Now().Add(30 * time.Minute); ; { // the first discovery pass
		line, err := projects(map[string]any{"query": "cgcat-bench-no-such-project"})
		if err != nil {
			log.Fatal(err)
		}
		if bytes.Contains(line, []byte(`\"scanState\":\"idle\"`)) || bytes.Contains(line, []byte(`"scanState":"idle"`)) {
			break
		}
		if time.Now().After(deadline) {
			log.Fatal("discovery still running")
		}
		time.Sleep(50 * time.Millisecond)
	}
	type kind struct {
		name string
		line []byte
	}
	var kinds []kind
	for _, limit := range []int{1, 5, 10, 50} {
		line, err := projects(map[string]any{"query": query, "limit": limit})
		if err != nil {
			log.Fatal(err)
		}
		kinds = append(kinds, kind{fmt.Sprintf("query-limit-%d", limit), line})
	}
	list, err := projects(map[string]any{"limit": 50})
	if err != nil {
		log.Fatal(err)
	}
	kinds = append(kinds, kind{"listing-limit-50", list})
	var first struct {
		Result struct {
			StructuredContent struct {
				Projects []struct {
					ProjectID string `json:"projectId"`
				} `json:"projects"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(kinds[0].line, &first); err != nil || len(first.Result.StructuredContent.Projects) == 0 {
		log.Fatalf("query %q found nothing to resolve (%v)", query, err)
	}
	res, err := s.call("tools/call", map[string]any{"name": "local_codegraph_resolve", "arguments": map[string]any{"projectId": first.Result.StructuredContent.Projects[0].ProjectID}})
	if err != nil {
		log.Fatal(err)
	}
	kinds = append(kinds, kind{"resolve", res})
	tl, err := s.call("tools/list", map[string]any{})
	if err != nil {
		log.Fatal(err)
	}
	kinds = append(kinds, kind{"tools-list", tl})
	fmt.Println("| answer | line bytes | text bytes | structured bytes | projects |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, k := range kinds {
		if err := os.WriteFile(filepath.Join(dir, k.name+".json"), k.line, 0o644); err != nil {
			log.Fatal(err)
		}
		var r struct {
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				StructuredContent json.RawMessage `json:"structuredContent"`
			} `json:"result"`
		}
		_ = json.Unmarshal(k.line, &r)
		text := 0
		for _, c := range r.Result.Content {
			text += len(c.Text)
		}
		n := bytes.Count(r.Result.StructuredContent, []byte(`"projectId":`))
		fmt.Printf("| %s | %d | %d | %d | %d |\n", k.name, len(bytes.TrimSpace(k.line)), text, len(r.Result.StructuredContent), n)
	}
}
