package meta

import (
	"bytes"
	"encoding/json"
	"errors"
)

// hintPath is the optional hint file a person may put in a project (R6).
const hintPath = "codegraph/project.json"

// hintFile is everything we take from the hint file. Other keys (commands,
// URLs, sharing settings, ...) are not decoded at all, so nothing can act on
// them.
type hintFile struct {
	Name        string   `json:"name"`
	Aliases     []string `json:"aliases"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Related     []string `json:"related"`
}

// readHint reads the hint file. A file that does not parse is reported in
// Problems and otherwise ignored.
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
