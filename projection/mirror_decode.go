package projection

import (
	"slices"
	"strings"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
)

// localCard is the mirror's copy of a card: never its path.
func localCard(slug string, c gbrain.Card) *local.Card {
	c = gbrain.Normalize(c)
	return &local.Card{
		Slug:           slug,
		ProjectID:      c.ProjectID,
		MachineID:      c.MachineID,
		Name:           c.Name,
		Description:    c.Description,
		Tags:           c.Tags,
		Packages:       c.Packages,
		Keywords:       c.Keywords,
		RecordRevision: c.RecordRevision,
		RootKey:        c.RootKey,
		Availability:   mirrorAvailability(c.Availability),
		MovedTo:        c.MovedTo,
	}
}

// mirrorAvailability keeps a card's availability in the mirror ("" for
// present: most cards).
func mirrorAvailability(a string) string {
	if a == string(local.Present) {
		return ""
	}
	return a
}

// judge decodes a page under our prefix for the mirror, and says whether a
// person changed it: a card of this machine is unedited when its content
// hash is the one recorded after cgcat's last write; any other card (another
// machine's, or this machine's from a lost catalog) when it is exactly what
// cgcat writes for the card it decodes to. A page that is not a well-formed
// card is decoded as far as it can be (title, the frontmatter fields cgcat
// uses, bounded) and marked edited; one that names no project and machine
// is refused (ok false).
func (p *Projector) judge(slug string, page *gbrain.Page, st *State) (*local.Card, bool) {
	return judgeCard(p.set, slug, page, st)
}

func judgeCard(set Settings, slug string, page *gbrain.Page, st *State) (*local.Card, bool) {
	id := strings.TrimPrefix(slug, set.SlugPrefix+"/")
	c, err := gbrain.Decode(page.Content)
	if err == nil {
		if c.ProjectID != id {
			return nil, false // a card claiming another page's project
		}
		lc := localCard(slug, c)
		lc.UpdatedAt = string(page.UpdatedAt)
		if c.MachineID == set.MachineID && st != nil && st.PageHash != 0 && st.Slug == slug {
			lc.Edited = !st.ours(gbrain.ContentHash(page.Content)) // an earlier write of ours landing late is no edit
		} else {
			lc.Edited = !canonical(page, c)
		}
		return lc, true
	}
	lc := lenientCard(slug, id, page)
	if lc == nil {
		return nil, false
	}
	lc.Edited = true
	return lc, true
}

// canonical reports whether the page is exactly what cgcat writes for the
// card c (fields and body; GBrain's re-serialisation aside).
func canonical(page *gbrain.Page, c gbrain.Card) bool {
	proj := gbrain.ProjectionReferenceOnly
	if c.Path != "" {
		proj = gbrain.ProjectionLocalPaths
	}
	content, err := gbrain.Encode(c, gbrain.EncodeOptions{Projection: proj})
	if err != nil {
		return false
	}
	return holds(page, c, content)
}

// lenientCard takes what it can from a page that is not a well-formed card:
// GBrain's title and tags, and the frontmatter fields cgcat writes when they
// have the right type. It needs a project id (the slug's) and a machine id
// (machine_id, or the locator) to name anything; never a path.
func lenientCard(slug, id string, page *gbrain.Page) *local.Card {
	if !ids.ValidProjectID(id) && !gbrain.ValidCardID(id) {
		return nil
	}
	fm := page.Frontmatter
	s := func(k string) string {
		v, _ := fm[k].(string)
		return v
	}
	list := func(k string) []string {
		xs, _ := fm[k].([]any)
		var out []string
		for _, x := range xs {
			if v, ok := x.(string); ok {
				out = append(out, v)
			}
			if len(out) == gbrain.MaxItems {
				break
			}
		}
		return out
	}
	if pid := s("project_id"); pid != "" && pid != id {
		return nil
	}
	machine := s("machine_id")
	if machine == "" {
		if loc, ok := strings.CutPrefix(s("locator"), gbrain.LocatorScheme); ok {
			if m, pid, ok := strings.Cut(loc, "/"); ok && pid == id {
				machine = m
			}
		}
	}
	if !gbrain.ValidCardID(machine) {
		return nil
	}
	c := gbrain.Card{
		ProjectID:   id,
		MachineID:   machine,
		Name:        page.Title,
		Description: s("description"),
		Packages:    list("packages"),
		Keywords:    list("keywords"),
	}
	if c.Description == "" {
		c.Description = firstParagraph(page.CompiledTruth)
	}
	for _, t := range page.Tags {
		if !gbrain.OwnTag(t) {
			c.Tags = append(c.Tags, t)
		}
	}
	if rk := s("root_key"); gbrain.ValidRootKey(rk) {
		c.RootKey = rk
	}
	if a := s("availability"); slices.Contains(gbrain.Availabilities, a) {
		c.Availability = a
	}
	if to := s("moved_to"); ids.ValidProjectID(to) && to != id {
		c.MovedTo = to
	}
	if f, ok := fm["record_revision"].(float64); ok && f >= 0 && f == float64(uint64(f)) {
		c.RecordRevision = uint64(f)
	}
	c = gbrain.Normalize(c)
	if c.Name == "" {
		c.Name = id
	}
	lc := localCard(slug, c)
	lc.UpdatedAt = string(page.UpdatedAt)
	return lc
}

// firstParagraph is the first paragraph of a markdown body that is not a
// heading (bounded by Normalize afterwards).
func firstParagraph(body string) string {
	if len(body) > gbrain.MaxCardBytes {
		body = body[:gbrain.MaxCardBytes]
	}
	for _, para := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n\n") {
		para = strings.TrimSpace(para)
		if para != "" && !strings.HasPrefix(para, "#") {
			return para
		}
	}
	return ""
}
