package hostconfig

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/tailscale/hujson"
)

// AddToList makes sure every item is in the string array at path (object
// keys from the top level, e.g. ClaudeAllowPath) of a JSON/JSONC file,
// appending the missing ones in order and creating the objects and the
// array when they are missing. Every other byte stays; the result is
// parsed again and compared with the input. changed is false when every
// item was already there.
func AddToList(src []byte, path []string, items []string) (out []byte, changed bool, err error) {
	return editList(src, path, items, true)
}

// RemoveFromList removes the items from the string array at path; the
// array and its objects stay. changed is false when none was there.
func RemoveFromList(src []byte, path []string, items []string) (out []byte, changed bool, err error) {
	return editList(src, path, items, false)
}

// ListHas reports which of items the string array at path holds.
func ListHas(src []byte, path []string, items []string) (has []string, err error) {
	if len(bytes.TrimSpace(src)) == 0 {
		return nil, nil
	}
	d, err := parseJSONDoc(src)
	if err != nil {
		return nil, err
	}
	cur, _ := lookup(d.before, path).([]any)
	for _, it := range items {
		if slices.Contains(cur, any(it)) {
			has = append(has, it)
		}
	}
	return has, nil
}

func lookup(v any, path []string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func editList(src []byte, path []string, items []string, add bool) ([]byte, bool, error) {
	if len(path) == 0 {
		return nil, false, fmt.Errorf("%w: empty path", ErrInvalidEntry)
	}
	if len(bytes.TrimSpace(src)) == 0 {
		if !add {
			return src, false, nil
		}
		src = []byte("{}\n")
	}
	d, err := parseJSONDoc(src)
	if err != nil {
		return nil, false, err
	}
	obj, indent := d.obj, ""
	ml := d.multiline
	where := ""
	for depth, key := range path {
		where += "." + key
		last := depth == len(path)-1
		i, count := findMember(obj, key)
		if count > 1 {
			return nil, false, unsafef("the file has %d %q keys in %s; keep one, then run again", count, key, where[1:])
		}
		memberIn := memberIndent(obj, indent, d.unit)
		if i < 0 {
			if !add {
				return src, false, nil
			}
			// Create the rest of the path in one rendered value.
			var val any = items
			for j := len(path) - 1; j > depth; j-- {
				val = []field{{path[j], val}}
			}
			v, err := parseTrimmed(renderValue(val, memberIn, d.unit, d.nl, objMultiline(obj, ml)))
			if err != nil {
				return nil, false, fmt.Errorf("%w: rendering: %v", ErrVerify, err)
			}
			insertMember(obj, key, v, memberIn, closingIndent(obj, indent), d.nl, objMultiline(obj, ml))
			break
		}
		if in, ok := lineIndent(obj.Members[i].Name.BeforeExtra); ok {
			memberIn = in
		}
		if !last {
			next, ok := obj.Members[i].Value.Value.(*hujson.Object)
			if !ok {
				return nil, false, unsafef("%s is not an object; fix it by hand, then run again", where[1:])
			}
			ml = objMultiline(next, ml)
			obj, indent = next, memberIn
			continue
		}
		arr, ok := obj.Members[i].Value.Value.(*hujson.Array)
		if !ok {
			return nil, false, unsafef("%s is not a list; fix it by hand, then run again", where[1:])
		}
		cur, err := decodeJSONC(obj.Members[i].Value)
		if err != nil {
			return nil, false, fmt.Errorf("%w: %v", ErrUnparsable, err)
		}
		have, _ := cur.([]any)
		if add {
			var missing []string
			for _, it := range items {
				if !slices.Contains(have, any(it)) {
					missing = append(missing, it)
				}
			}
			if len(missing) == 0 {
				return src, false, nil
			}
			appendElements(arr, missing, memberIn, d.unit, d.nl, ml)
		} else if !removeElements(arr, items) {
			return src, false, nil
		}
	}
	out := d.root.Pack()
	// Verify: the same document with the list edited, nothing else.
	after, err := parseJSONDoc(out)
	if err != nil {
		return nil, false, fmt.Errorf("%w: the edited file does not parse (%v); nothing was written", ErrVerify, err)
	}
	want := setList(d.before, path, items, add)
	if !equalValue(want, after.before) {
		return nil, false, fmt.Errorf("%w: the edited file would change more than the list %s; nothing was written (please report this with the file)", ErrVerify, dotted(path))
	}
	return out, true, nil
}

func dotted(path []string) string {
	var b bytes.Buffer
	for i, p := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// setList returns a copy of doc with the list at path edited as editList
// does (the expected result).
func setList(doc map[string]any, path []string, items []string, add bool) map[string]any {
	out := make(map[string]any, len(doc)+1)
	for k, v := range doc {
		out[k] = v
	}
	key := path[0]
	if len(path) > 1 {
		sub, _ := out[key].(map[string]any)
		if sub == nil {
			sub = map[string]any{}
		}
		out[key] = setList(sub, path[1:], items, add)
		return out
	}
	cur, _ := out[key].([]any)
	next := slices.Clone(cur)
	for _, it := range items {
		if add && !slices.Contains(next, any(it)) {
			next = append(next, it)
		}
		if !add {
			next = slices.DeleteFunc(next, func(v any) bool { return v == any(it) })
		}
	}
	if next == nil {
		next = []any{}
	}
	out[key] = next
	return out
}

// appendElements appends string elements with the layout of the existing
// ones (one per line when the array is laid out over lines).
func appendElements(arr *hujson.Array, items []string, memberIndent, unit, nl string, parentMultiline bool) {
	n := len(arr.Elements)
	multiline := parentMultiline && (n == 0 || hasNL(arr.AfterExtra) || hasNL(arr.Elements[0].BeforeExtra))
	elemIndent := memberIndent + unit
	if n > 0 {
		if in, ok := lineIndent(arr.Elements[n-1].BeforeExtra); ok {
			elemIndent = in
		}
	}
	trailingComma := n > 0 && arr.Elements[n-1].AfterExtra != nil
	for _, it := range items {
		v := hujson.Value{Value: hujson.String(it)}
		switch {
		case multiline:
			v.BeforeExtra = hujson.Extra(nl + elemIndent)
		case len(arr.Elements) > 0:
			v.BeforeExtra = hujson.Extra(" ")
		}
		if len(arr.Elements) > 0 && arr.Elements[len(arr.Elements)-1].AfterExtra != nil && !trailingComma {
			arr.Elements[len(arr.Elements)-1].AfterExtra = nil
		}
		arr.Elements = append(arr.Elements, v)
	}
	if trailingComma {
		arr.Elements[len(arr.Elements)-1].AfterExtra = hujson.Extra{}
	}
	if multiline && n == 0 {
		arr.AfterExtra = hujson.Extra(nl + memberIndent)
	}
}

// removeElements removes the string elements equal to items; the layout
// of the first removed one goes to the element after it.
func removeElements(arr *hujson.Array, items []string) bool {
	removed := false
	for i := 0; i < len(arr.Elements); {
		lit, ok := arr.Elements[i].Value.(hujson.Literal)
		if !ok || lit.Kind() != '"' || !slices.Contains(items, lit.String()) {
			i++
			continue
		}
		removed = true
		last := i == len(arr.Elements)-1
		trailingComma := last && arr.Elements[i].AfterExtra != nil
		if !last {
			arr.Elements[i+1].BeforeExtra = arr.Elements[i].BeforeExtra
		}
		arr.Elements = append(arr.Elements[:i], arr.Elements[i+1:]...)
		if last && i > 0 {
			prev := &arr.Elements[i-1]
			switch {
			case trailingComma && prev.AfterExtra == nil:
				prev.AfterExtra = hujson.Extra{}
			case !trailingComma && prev.AfterExtra != nil:
				arr.AfterExtra = append(append(hujson.Extra{}, prev.AfterExtra...), arr.AfterExtra...)
				prev.AfterExtra = nil
			}
		}
		if len(arr.Elements) == 0 {
			arr.AfterExtra = nil
		}
	}
	return removed
}
