package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// hintPath is the optional hint file a person may put in a project (R6).
const hintPath = "codegraph/project.json"

// hintFile is everything we take from the hint file. Other keys (commands,
// URLs, sharing settings, ...) are not decoded at all, so nothing can act on
// them; they are reported as unknown keys (a typo such as "alias" for
// "aliases" would otherwise be lost silently), by name only.
type hintFile struct {
	Name        string   `json:"name"`
	Aliases     []string `json:"aliases"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Related     []string `json:"related"`
}

// hintKeys are the keys of hintFile, from its json tags.
var hintKeys = func() []string {
	t := reflect.TypeFor[hintFile]()
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return keys
}()

// maxUnknownKeys bounds the unknown keys reported one by one; the rest are
// counted.
const maxUnknownKeys = 3

// readHint reads the hint file. A file that does not parse is reported in
// Problems and otherwise ignored; an unknown key is reported and ignored.
func (r *reader) readHint() {
	if !r.has("codegraph") {
		return
	}
	body, ok := r.file(hintPath, true)
	if !ok {
		return
	}
	h, err := parseHint(body)
	if err != nil {
		r.problemf("%s: %s", hintPath, short(err))
		return
	}
	unknown := unknownHintKeys(body)
	for i, k := range unknown {
		if i == maxUnknownKeys {
			r.problemf("%s: %d more unknown keys", hintPath, len(unknown)-i)
			break
		}
		k = Clean(k, 64) // a key is data from the project, like any value
		r.problemf("%s: unknown key %s%s", hintPath, strconv.Quote(k), hintSuggestion(k))
	}
	r.hint = &h
}

func parseHint(b []byte) (hintFile, error) {
	var h hintFile
	b = bytes.TrimSpace(bytes.TrimPrefix(b, []byte("\uFEFF")))
	if len(b) == 0 || b[0] != '{' {
		return h, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return hintFile{}, err
	}
	return h, nil
}

// unknownHintKeys names the top-level keys of a hint file that parseHint
// took without error which are not hint keys, sorted. A key that differs
// from a known one only in case is not unknown: encoding/json takes it.
func unknownHintKeys(b []byte) []string {
	var keys map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(bytes.TrimPrefix(b, []byte("\uFEFF"))), &keys) != nil {
		return nil
	}
	var unknown []string
	for k := range keys {
		if !slices.ContainsFunc(hintKeys, func(known string) bool { return strings.EqualFold(k, known) }) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	return unknown
}

// hintSuggestion is " (did you mean "aliases"?)" for a key close to a known
// one, else the list of known keys.
func hintSuggestion(k string) string {
	lk := strings.ToLower(k)
	best, bestD := "", 3
	for _, known := range hintKeys {
		d := editDistance(lk, known)
		if len(lk) >= 3 && (strings.HasPrefix(known, lk) || strings.HasPrefix(lk, known)) {
			d = min(d, 2) // "desc", "relatedProjects"
		}
		if d < bestD {
			best, bestD = known, d
		}
	}
	if best == "" {
		return fmt.Sprintf(" (known keys: %s)", strings.Join(hintKeys, ", "))
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance over runes (a transposition,
// "tgas" for "tags", is two edits: within the bound).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
