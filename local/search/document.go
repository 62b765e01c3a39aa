package search

import (
	"strings"

	"github.com/cgcat/cgcat/local"
)

// What becomes a search field is decided here, and only here: a record or
// a mirrored card goes one way — DocOf or CardDoc, then Index.Put — and the
// same function serves the live index of every reader, the index a base is
// written from and the one a reader builds again for a stale base. The
// file is part of Derivation: a change here rebuilds the published indexes.

// Doc is one project's searchable metadata.
type Doc struct {
	ID          string // opaque project id; empty ids are ignored
	SortKey     string // stable order for listings and ties (e.g. lowercased name + root)
	Name        string
	Aliases     []string
	Packages    []string // e.g. "@company/order-sdk", "github.com/acme/orders", "org.acme:orders-core"
	Keywords    []string
	Tags        []string
	Description string
	Readme      string
	Path        string // the root path; its segments are a low-weight field
}

// DocOf is a record's search document: what the index of a base and of
// every reader's overlay holds for it.
func DocOf(p *local.Project) Doc {
	m := p.Meta
	return Doc{
		ID:          p.ID,
		SortKey:     strings.ToLower(m.Name) + "\x00" + p.Root,
		Name:        m.Name,
		Aliases:     m.Aliases,
		Packages:    m.Packages,
		Keywords:    m.Keywords,
		Tags:        m.Tags,
		Description: m.Description,
		Readme:      m.Readme,
		Path:        tailPath(p.Root, 3),
	}
}

// CardDoc is a mirrored GBrain card's search document, keyed by its slug.
// A card names no path and carries no README or aliases.
func CardDoc(c *local.Card) Doc {
	return Doc{
		ID:          c.Slug,
		SortKey:     strings.ToLower(c.Name) + "\x00" + c.Slug,
		Name:        c.Name,
		Packages:    c.Packages,
		Keywords:    c.Keywords,
		Tags:        c.Tags,
		Description: c.Description,
	}
}

// tailPath keeps the last n segments of a root: the folders that name a
// project (".../services/payments") without the ones every project shares
// ("/home/me/code"), which would make every project match "code".
func tailPath(root string, n int) string {
	parts := strings.FieldsFunc(root, func(r rune) bool { return r == '/' || r == '\\' })
	if len(parts) > n {
		parts = parts[len(parts)-n:]
	}
	return strings.Join(parts, "/")
}
