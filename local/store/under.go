package store

import (
	"strings"

	"github.com/cgcat/cgcat/local/pathid"
)

// ProjectsUnder calls fn with the id of every record whose root is dir or
// lies below it, through the root index (the cost is the records there, not
// the catalog): a directory that went away names the records to re-check.
func (r *Reader) ProjectsUnder(dir string, fn func(id string) bool) error {
	return r.scan(prefixRoot+pathid.Key(dir), func(k string, v []byte) bool {
		if !pathid.Within(dir, strings.TrimPrefix(k, prefixRoot)) {
			return true // a sibling sharing the prefix ("/code/lib" and "/code/library")
		}
		return fn(string(v))
	})
}
