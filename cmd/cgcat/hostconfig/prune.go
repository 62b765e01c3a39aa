package hostconfig

import (
	"bytes"
	"fmt"

	"github.com/tailscale/hujson"
)

// What install adds around cgcat's entry (the servers object, an allow
// list and the objects that hold it) is taken away again by uninstall when
// install created it and nothing else is in it: a user's file gets back
// its own bytes.

// MissingPath returns the shortest prefix of path that the JSON/JSONC
// document src lacks (nil when src has the whole path or does not
// parse): what an edit that creates path adds.
func MissingPath(src []byte, path []string) []string {
	if len(bytes.TrimSpace(src)) == 0 {
		return nil // a new file: the file itself is recorded
	}
	d, err := parseJSONDoc(src)
	if err != nil {
		return nil
	}
	var v any = d.before
	for i, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if v, ok = m[k]; !ok {
			return path[:i+1]
		}
	}
	return nil
}

// PruneEmpty takes away what an edit created at path when it holds
// nothing any more: the member at path when its value is an empty object
// or array, then each member above it that is left empty, up to
// path[:created] (the topmost member the edit created; created >= 1).
// Every other byte stays. changed is false when nothing was empty.
func PruneEmpty(src []byte, path []string, created int) (out []byte, changed bool, err error) {
	if created < 1 || created > len(path) {
		return src, false, nil
	}
	d, err := parseJSONDoc(src)
	if err != nil {
		return nil, false, err
	}
	// The objects along the path and the member index in each.
	objs := []*hujson.Object{d.obj}
	idx := make([]int, len(path))
	for depth, key := range path {
		i, count := findMember(objs[depth], key)
		if i < 0 || count != 1 {
			return src, false, nil
		}
		idx[depth] = i
		if depth < len(path)-1 {
			next, ok := objs[depth].Members[i].Value.Value.(*hujson.Object)
			if !ok {
				return src, false, nil
			}
			objs = append(objs, next)
		}
	}
	removed := 0
	for depth := len(path) - 1; depth >= created-1; depth-- {
		v := objs[depth].Members[idx[depth]].Value.Value
		empty := false
		switch x := v.(type) {
		case *hujson.Object:
			empty = len(x.Members) == 0
		case *hujson.Array:
			empty = len(x.Elements) == 0
		}
		if !empty {
			break
		}
		removeMember(objs[depth], idx[depth], d.nl)
		removed++
	}
	if removed == 0 {
		return src, false, nil
	}
	top := path[:len(path)-removed+1]
	out = d.root.Pack()
	after, err := parseJSONDoc(out)
	if err != nil {
		return nil, false, fmt.Errorf("%w: the edited file does not parse (%v); nothing was written", ErrVerify, err)
	}
	if !equalValue(without(d.before, top), after.before) {
		return nil, false, fmt.Errorf("%w: removing the empty %s would change more; nothing was written", ErrVerify, dotted(top))
	}
	return out, true, nil
}

// without returns a copy of doc without the member at path.
func without(doc map[string]any, path []string) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	if len(path) == 1 {
		delete(out, path[0])
		return out
	}
	if sub, ok := out[path[0]].(map[string]any); ok {
		out[path[0]] = without(sub, path[1:])
	}
	return out
}
