package scriptedmodel

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Candidate is one project of a catalog answer, as a model reads it.
type Candidate struct {
	ID, Name, Path, Version, Why string
	SameCommitAs                 []string
}

// Candidates reads the projects of a catalog or resolve result as a host
// rendered it: the structured envelope (JSON, possibly wrapped in the
// host's own JSON or after its preamble) or the text content.
func Candidates(result string) []Candidate {
	var v any
	if json.Unmarshal([]byte(result), &v) == nil {
		if cs, ok := candidatesIn(v); ok {
			return cs
		}
	} else if i := strings.IndexByte(result, '{'); i >= 0 {
		// JSON after the host's own preamble (Codex: "Wall time: …\nOutput:\n{…}").
		if json.NewDecoder(strings.NewReader(result[i:])).Decode(&v) == nil {
			if cs, ok := candidatesIn(v); ok {
				return cs
			}
		}
	}
	return textCandidates(result)
}

// ProjectPath reads the first project's projectPath from a catalog result.
func ProjectPath(result string) string {
	for _, c := range Candidates(result) {
		return c.Path
	}
	return ""
}

// candidatesIn walks a decoded JSON value for an envelope's projects;
// strings are tried as JSON and as text in turn.
func candidatesIn(v any) ([]Candidate, bool) {
	switch x := v.(type) {
	case map[string]any:
		if ps, ok := x["projects"].([]any); ok {
			var out []Candidate
			for _, p := range ps {
				m, _ := p.(map[string]any)
				c := Candidate{ID: str(m, "projectId"), Name: str(m, "name"), Path: str(m, "projectPath"), Version: str(m, "version"), Why: str(m, "why")}
				if l, ok := m["lookalike"].(map[string]any); ok {
					for _, id := range toAny(l["sameCommitAs"]) {
						if s, ok := id.(string); ok {
							c.SameCommitAs = append(c.SameCommitAs, s)
						}
					}
				}
				out = append(out, c)
			}
			return out, true
		}
		for _, k := range sortedKeys(x) {
			if cs, ok := candidatesIn(x[k]); ok {
				return cs, true
			}
		}
	case []any:
		for _, e := range x {
			if cs, ok := candidatesIn(e); ok {
				return cs, true
			}
		}
	case string:
		if cs := Candidates(x); len(cs) > 0 {
			return cs, true
		}
	}
	return nil, false
}

func toAny(v any) []any {
	l, _ := v.([]any)
	return l
}

var (
	blockRE    = regexp.MustCompile(`(?m)^(\d+)\. ("(?:[^"\\]|\\.)*")\s+projectId=(\S+)`)
	textPath   = regexp.MustCompile(`(?m)^\s*projectPath: (/.*?)\s*$`)
	textNone   = regexp.MustCompile(`(?m)^\s*projectPath: none — (.*?)\s*$`)
	textVer    = regexp.MustCompile(`(?m)^\s*version: ("(?:[^"\\]|\\.)*")\s*$`)
	textSameAs = regexp.MustCompile(`same commit as ([#\d, ]+) \(equivalent code\)`)
)

// textCandidates reads the text rendering: one block per project, "N.
// "name"  projectId=…" and its indented lines.
func textCandidates(text string) []Candidate {
	locs := blockRE.FindAllStringSubmatchIndex(text, -1)
	if locs == nil {
		// A host that shows only part of the text: a bare projectPath line.
		if m := textPath.FindStringSubmatch(text); m != nil {
			return []Candidate{{Path: m[1]}}
		}
		return nil
	}
	var out []Candidate
	num := map[string]string{} // "#N" -> id
	for i, l := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		block := text[l[0]:end]
		c := Candidate{ID: text[l[6]:l[7]], Name: unquote(text[l[4]:l[5]])}
		num["#"+text[l[2]:l[3]]] = c.ID
		if m := textPath.FindStringSubmatch(block); m != nil {
			c.Path = m[1]
		} else if m := textNone.FindStringSubmatch(block); m != nil {
			c.Why = m[1]
		}
		if m := textVer.FindStringSubmatch(block); m != nil {
			c.Version = unquote(m[1])
		}
		if m := textSameAs.FindStringSubmatch(block); m != nil {
			for _, ref := range strings.Split(m[1], ",") {
				c.SameCommitAs = append(c.SameCommitAs, strings.TrimSpace(ref))
			}
		}
		out = append(out, c)
	}
	for i := range out {
		for j, ref := range out[i].SameCommitAs {
			out[i].SameCommitAs[j] = num[ref]
		}
	}
	return out
}

func unquote(s string) string {
	var u string
	if json.Unmarshal([]byte(s), &u) == nil {
		return u
	}
	return strings.Trim(s, `"`)
}
