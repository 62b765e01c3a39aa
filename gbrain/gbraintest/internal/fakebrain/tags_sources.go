package fakebrain

import "slices"

// Tags.
func (b *Brain) AddTag(st *State, args map[string]any, add bool) (any, error) {
	slug, _, te := str(args, "slug")
	if te != nil {
		return nil, te
	}
	tag, _, te := str(args, "tag")
	if te != nil {
		return nil, te
	}
	if slug == "" || tag == "" {
		return nil, invalid("slug and tag are required")
	}
	p := st.Find(b.Source, slug)
	if p == nil || p.DeletedAt != "" {
		return nil, notFound(slug)
	}
	st.touch()
	if add {
		p.Tags = mergeTags(p.Tags, []string{tag})
	} else {
		var keep []string
		for _, t := range p.Tags {
			if t != tag {
				keep = append(keep, t)
			}
		}
		p.Tags = keep
	}
	return map[string]any{"slug": slug, "tags": p.Tags}, nil
}

func (b *Brain) GetTags(st *State, args map[string]any) (any, error) {
	slug, _, te := str(args, "slug")
	if te != nil {
		return nil, te
	}
	p := st.Find(b.Source, slug)
	if p == nil || p.DeletedAt != "" {
		return nil, notFound(slug)
	}
	return p.Tags, nil
}

// SourcesList lists registered sources with page counts.
func (b *Brain) SourcesList(st *State) any {
	var rows []map[string]any
	for _, s := range b.registered(st) {
		n := 0
		for _, p := range st.Pages {
			if p.Source == s && p.DeletedAt == "" {
				n++
			}
		}
		rows = append(rows, map[string]any{"id": s, "name": s, "local_path": nil, "remote_url": nil, "page_count": n})
	}
	return map[string]any{"sources": rows}
}

func (b *Brain) SourcesAdd(st *State, args map[string]any) (any, error) {
	id, _, te := str(args, "id")
	if te != nil {
		return nil, te
	}
	if !ValidSource(id) {
		return nil, invalid("Source id must match [a-z0-9-]{1,32}")
	}
	if slices.Contains(b.registered(st), id) {
		return nil, &ToolError{Code: "invalid_params", Message: "Source " + id + " already exists"}
	}
	st.Sources = append(st.Sources, id)
	return map[string]any{"id": id, "name": id}, nil
}
