package projection

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
)

// Settings are the projection's fixed parameters for one data dir and config.
type Settings struct {
	SlugPrefix     string // gbrain.slugPrefix
	Projection     string // gbrain.ProjectionReferenceOnly or ProjectionLocalPaths
	MachineID      string // the store's machine id
	SemanticSearch bool   // recall with query instead of search
	// Identity keys the cards' root_key (store.Identity.RootKey); without a
	// secret cards carry none.
	Identity store.Identity
	// StaleMachineDays: cards of a machine silent longer are marked stale
	// (gbrain.staleMachineDays; 0 never).
	StaleMachineDays int
}

// SettingsFrom takes the settings from a config and a store.
func SettingsFrom(cfg *config.Config, st *store.Store) Settings {
	proj := gbrain.ProjectionReferenceOnly
	if cfg.GBrain.Projection == config.ProjectionLocalPaths {
		proj = gbrain.ProjectionLocalPaths
	}
	return Settings{
		SlugPrefix:       cfg.GBrain.SlugPrefix,
		Projection:       proj,
		MachineID:        st.MachineID(),
		SemanticSearch:   cfg.GBrain.SemanticSearch,
		Identity:         st.Identity(),
		StaleMachineDays: cfg.GBrain.StaleMachineDays,
	}
}

// CardOf builds the card of a record: its stable metadata, machine id and
// record revision, and its root only with the local-paths projection.
func CardOf(rec *local.Project, set Settings) gbrain.Card {
	m := rec.Meta
	name := m.Name
	if strings.TrimSpace(name) == "" {
		name = filepath.Base(rec.Root)
	}
	if strings.TrimSpace(name) == "" || name == "/" || name == "." {
		name = rec.ID
	}
	desc := m.Description
	if strings.TrimSpace(desc) == "" {
		desc = m.Readme
	}
	c := gbrain.Card{
		ProjectID:      rec.ID,
		MachineID:      set.MachineID,
		Name:           name,
		Description:    desc,
		Tags:           slices.Clone(m.Tags),
		Packages:       slices.Clone(m.Packages),
		Keywords:       append(slices.Clone(m.Keywords), m.Aliases...),
		RecordRevision: rec.RecordRevision,
		Availability:   cardAvailability(rec.Availability),
		MovedTo:        rec.MovedTo,
	}
	if c.MovedTo == rec.ID || !gbrain.ValidCardID(c.MovedTo) {
		c.MovedTo = ""
	}
	if set.Projection == gbrain.ProjectionLocalPaths {
		c.Path = rec.Root
	}
	if len(set.Identity.Secret) > 0 {
		c.RootKey = set.Identity.RootKey(pathid.Key(rec.Root))
	}
	return c
}

// cardAvailability is the catalog's availability as a card says it.
func cardAvailability(a local.Availability) string {
	if slices.Contains(gbrain.Availabilities, string(a)) {
		return string(a)
	}
	return string(local.Unknown)
}

// encode returns the card's slug, content and its hash.
func encode(rec *local.Project, set Settings) (card gbrain.Card, slug, content string, err error) {
	card = CardOf(rec, set)
	slug, err = gbrain.CardSlug(set.SlugPrefix, rec.ID)
	if err != nil {
		return card, "", "", err
	}
	content, err = gbrain.Encode(card, gbrain.EncodeOptions{Projection: set.Projection})
	return gbrain.Normalize(card), slug, content, err
}

// bodyOf is the markdown after the frontmatter.
func bodyOf(content string) string {
	content = strings.ReplaceAll(content, "\r\n", "\n")
	if !strings.HasPrefix(content, "---\n") {
		return content
	}
	rest := content[4:]
	if i := strings.Index(rest, "\n---\n"); i >= 0 {
		return rest[i+5:]
	}
	return ""
}

// sameText compares two texts up to whitespace (GBrain trims bodies).
func sameText(a, b string) bool {
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}

// isOurs reports whether a page read from GBrain is a well-formed card of
// projectID on this machine (ownership marker, locator, no forbidden path).
func isOurs(content, projectID, machineID string) (gbrain.Card, bool) {
	c, err := gbrain.Decode(content)
	if err != nil || c.ProjectID != projectID || c.MachineID != machineID {
		return c, false
	}
	return c, true
}

// holds reports whether the page is exactly the card we meant to write:
// every field equal (GBrain's tags only grow, so ours must be a subset) and
// the same body. This is how a write whose answer was lost — or whose hash
// we could not record before a crash — is recognised as landed.
func holds(p *gbrain.Page, want gbrain.Card, wantContent string) bool {
	got, ok := isOurs(p.Content, want.ProjectID, want.MachineID)
	if !ok {
		return false
	}
	if got.Name != want.Name || got.Description != want.Description || got.RecordRevision != want.RecordRevision ||
		got.Path != want.Path || got.RootKey != want.RootKey || got.Availability != want.Availability || got.MovedTo != want.MovedTo ||
		!slices.Equal(got.Packages, want.Packages) || !slices.Equal(got.Keywords, want.Keywords) {
		return false
	}
	for _, t := range want.Tags {
		if !slices.Contains(got.Tags, t) {
			return false
		}
	}
	return sameText(bodyOf(p.Content), bodyOf(wantContent))
}
