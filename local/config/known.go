package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// schema is the set of known keys, derived from Config's json tags so the
// two can never disagree.
type schema struct {
	fields map[string]*schema // object with known keys
	anyKey *schema            // map: every key allowed, values of this shape
	elem   *schema            // list elements
}

var reflectSchema = schemaOf(reflect.TypeOf(Config{}))

func schemaOf(t reflect.Type) *schema {
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem())
	case reflect.Struct:
		s := &schema{fields: map[string]*schema{}}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			s.fields[name] = schemaOf(f.Type)
		}
		return s
	case reflect.Map:
		return &schema{anyKey: schemaOf(t.Elem())}
	case reflect.Slice:
		return &schema{elem: schemaOf(t.Elem())}
	}
	return nil
}

type keyError struct{ field, problem string }

// checkKnown walks the decoded JSON and reports the first unknown key, in a
// stable order, with a suggestion when a known key is close (typos).
func checkKnown(v any, s *schema, path string) *keyError {
	if s == nil {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			var sub *schema
			switch {
			case s.anyKey != nil:
				sub = s.anyKey
			case s.fields != nil:
				var ok bool
				if sub, ok = s.fields[k]; !ok {
					return &keyError{p, "unknown field" + suggest(k, s.fields)}
				}
			default:
				continue // type errors are reported by the decoder
			}
			if err := checkKnown(x[k], sub, p); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := checkKnown(e, s.elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func suggest(k string, fields map[string]*schema) string {
	best, bestD := "", 3
	for f := range fields {
		if d := distance(strings.ToLower(k), strings.ToLower(f)); d < bestD || d == bestD && f < best {
			best, bestD = f, d
		}
	}
	if best == "" {
		known := make([]string, 0, len(fields))
		for f := range fields {
			known = append(known, f)
		}
		sort.Strings(known)
		return " (known: " + strings.Join(known, ", ") + ")"
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// distance is the Levenshtein distance, enough to catch typos.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
