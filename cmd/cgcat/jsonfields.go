package main

import (
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/server"
	"github.com/spf13/pflag"
)

// jsonFlag is --json as gh has it: alone, the whole envelope the tool
// returns; with a list of fields (--json name,projectPath), one JSON array
// of the projects with only those fields. "true" and "false" are still
// read as the boolean --json was.
type jsonFlag struct {
	on     bool
	fields []string // nil: the whole envelope
}

// jsonWhole is the value --json has when given no fields.
const jsonWhole = "true"

func (j *jsonFlag) String() string {
	if len(j.fields) > 0 {
		return strings.Join(j.fields, ",")
	}
	if j.on {
		return jsonWhole
	}
	return "false"
}

func (j *jsonFlag) Type() string { return "fields" }

func (j *jsonFlag) Set(s string) error {
	switch s {
	case "true", "":
		j.on, j.fields = true, nil
		return nil
	case "false":
		j.on, j.fields = false, nil
		return nil
	}
	fields := strings.Split(s, ",")
	for _, f := range fields {
		if !slices.Contains(projectFields, f) {
			return usagef("--json %q: %q is not a field; the fields are %s (or --json alone for the whole answer)",
				local.Printable(s), local.Printable(f), strings.Join(projectFields, ","))
		}
	}
	j.on, j.fields = true, fields
	return nil
}

// addJSONFlag adds --json to a command that prints projects.
func addJSONFlag(fs *pflag.FlagSet, j *jsonFlag, whole string) {
	fs.Var(j, "json", whole+"; --json FIELD,... prints only those fields of each project, as one JSON array ("+strings.Join(projectFields, ",")+")")
	fs.Lookup("json").NoOptDefVal = jsonWhole
}

// projectFields are the JSON fields of a project, as the tools name them.
var projectFields = func() []string {
	var out []string
	t := reflect.TypeFor[server.Project]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}()

// writeFields prints the chosen fields of each project as one JSON array
// (an empty one when none matched). A field a project does not have (no
// path: projectPath) is null, so every object has every field asked for.
func writeFields(out io.Writer, ps []server.Project, fields []string) error {
	rows := make([]map[string]any, 0, len(ps))
	for _, p := range ps {
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		var all map[string]any
		if err := json.Unmarshal(b, &all); err != nil {
			return err
		}
		row := make(map[string]any, len(fields))
		for _, f := range fields {
			row[f] = all[f]
		}
		rows = append(rows, row)
	}
	return writeJSON(out, rows)
}

// writeJSON prints v indented, without HTML escaping (paths keep their &).
func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// joinJSONFields lets `--json name,projectPath` take its fields after a
// space, as gh does: a --json followed by a word made only of field names
// becomes --json=WORD. Any other word after --json stays what it was (a
// query word), and nothing after "--" is looked at. A query that is
// exactly a field name ("name") goes before --json, or after "--".
func joinJSONFields(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if a == "--json" && i+1 < len(args) && isFieldList(args[i+1]) {
			out = append(out, "--json="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

func isFieldList(s string) bool {
	if s == "" {
		return false
	}
	for _, f := range strings.Split(s, ",") {
		if !slices.Contains(projectFields, f) {
			return false
		}
	}
	return true
}
