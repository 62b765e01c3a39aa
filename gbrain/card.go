package gbrain

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zeebo/xxh3"
)

// Card constants. The frontmatter key "generator: cgcat" is the ownership
// marker; CardTag is our own tag (list_pages enumerates cards by it).
const (
	CardType  = "project"
	CardTag   = "cgcat-card"
	Generator = "cgcat"
	// CardVersion is the card format this codec writes (card_version) and
	// the newest it reads. Version 2 added availability, moved_to and the
	// format and machine tags; derived data made from cards (the mirror)
	// is made again when it changes.
	CardVersion = 2
	// FormatTag marks cards of format 2 and later: list_pages by it minus
	// list_pages by CardTag are the older cards, which carry no machine tag.
	FormatTag = "cgcat-card-2"
	// machineTagPrefix + machine id tags every card of that machine:
	// list_pages by MachineTag enumerates one machine's cards without
	// reading any (a lost catalog takes its ids back from them).
	machineTagPrefix = "cgcat-m-"

	LocatorScheme = "local-codegraph://"

	ProjectionReferenceOnly = "reference-only"
	ProjectionLocalPaths    = "local-paths"

	// MaxCardBytes bounds a card Decode will read.
	MaxCardBytes = 64 << 10
)

// Bounds on card fields, in runes. Normalize truncates to them; Decode
// refuses anything longer.
const (
	MaxNameLen        = 200
	MaxDescriptionLen = 1000
	MaxItemLen        = 100
	MaxItems          = 64
	MaxPathLen        = 4096
)

// Card is the reference-only description of one local project as kept in
// GBrain. It is a claim, never a binding: whoever reads one must check
// MachineID and ProjectID against the local catalog, and must never hand out
// Path (present only in the local-paths projection) as a project's root.
type Card struct {
	ProjectID      string
	MachineID      string
	Name           string
	Description    string
	Tags           []string // project tags; CardTag is added by Encode and removed by Decode
	Packages       []string
	Keywords       []string
	RecordRevision uint64
	// RootKey is the keyed hash of the project's canonical root on its
	// machine (HMAC with that machine's secret): the same root gives the
	// same key there, and nobody else can tell which root it names. It
	// lets a machine that lost its catalog take its ids back. Optional.
	RootKey string
	// Availability is the project's state on its machine: one of
	// Availabilities ("" reads as present: cards before format 2).
	Availability string
	// MovedTo is the id the project moved to on its machine (its index
	// found under a new root), when it moved.
	MovedTo string
	Path    string // only with ProjectionLocalPaths
}

// Availabilities a card may carry (the catalog's availability states).
var Availabilities = []string{"present", "missing", "inaccessible", "unknown"}

// MachineTag is the tag every card of machine id carries (format 2).
func MachineTag(machineID string) string { return machineTagPrefix + machineID }

// OwnTag reports a tag cgcat adds to every card (never a project's tag).
func OwnTag(t string) bool {
	return t == CardTag || t == FormatTag || strings.HasPrefix(t, machineTagPrefix)
}

// EncodeOptions choose the projection.
type EncodeOptions struct {
	// Projection is ProjectionReferenceOnly (also the zero value) or
	// ProjectionLocalPaths; only the latter writes Card.Path.
	Projection string
}

// Errors from Encode and Decode (match with errors.Is).
var (
	ErrCardInvalid   = errors.New("invalid card")
	ErrNotOurCard    = errors.New("not a cgcat card")
	ErrCardTampered  = errors.New("card contradicts itself")
	ErrCardTooNew    = errors.New("card written by a newer cgcat")
	ErrPathForbidden = errors.New("reference-only card carries a path")
)

// Locator is the card's internal reference to a project:
// local-codegraph://<machineID>/<projectID>. It is not a path.
func Locator(machineID, projectID string) string {
	return LocatorScheme + machineID + "/" + projectID
}

// ContentHash is the hash cgcat records for page content: xxh3 of the exact
// string (GBrain's re-serialised form as read back after our write).
func ContentHash(s string) uint64 { return xxh3.HashString(s) }

// cleanText strips control and other non-graphic characters, turns any
// whitespace run into one space, trims, and truncates to max runes.
func cleanText(s string, max int) string {
	var b strings.Builder
	n := 0
	pendingSpace := false
	for _, r := range s { // invalid UTF-8 reads as RuneError and is dropped
		if r == utf8.RuneError {
			continue
		}
		if unicode.IsSpace(r) {
			pendingSpace = n > 0
			continue
		}
		if !unicode.IsGraphic(r) {
			continue
		}
		need := 1
		if pendingSpace {
			need = 2
		}
		if n+need > max {
			break
		}
		if pendingSpace {
			b.WriteByte(' ')
			n++
			pendingSpace = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

func cleanList(in []string, lower, sorted bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		s = cleanText(s, MaxItemLen)
		if lower {
			s = strings.ToLower(s)
		}
		if s == "" || seen[s] || (lower && OwnTag(s)) {
			continue
		}
		seen[s] = true
		out = append(out, s)
		if len(out) == MaxItems {
			break
		}
	}
	if sorted {
		slices.Sort(out)
	}
	return out
}

// Normalize returns the card as Encode will write it and Decode will read
// it back: text cleaned of control characters and whitespace runs and
// truncated to the bounds; tags lowercased, de-duplicated and sorted
// (GBrain keeps tags as a set), without CardTag; packages and keywords
// de-duplicated in their order; availability "present" when empty. Ids
// and Path are left alone (Encode checks them).
func Normalize(c Card) Card {
	if c.Availability == "" {
		c.Availability = "present"
	}
	c.Name = cleanText(c.Name, MaxNameLen)
	c.Description = cleanText(c.Description, MaxDescriptionLen)
	c.Tags = cleanList(c.Tags, true, true)
	c.Packages = cleanList(c.Packages, false, false)
	c.Keywords = cleanList(c.Keywords, false, false)
	return c
}

// Encode renders a card as GBrain markdown: YAML frontmatter (type, title,
// our tag and ownership marker, ids, revision, locator, projection, packages,
// keywords, and the path only for ProjectionLocalPaths) and a body that
// repeats the searchable words, because GBrain indexes title and body but
// not tags or slugs. It never writes a key named "id" (GBrain de-duplicates
// pages across slugs by it). The card is normalised first (see Normalize).
//
// Errors (ErrCardInvalid): bad ids, an empty name, an unknown projection, a
// path with the reference-only projection, a missing or non-absolute path
// with local-paths.
func Encode(c Card, o EncodeOptions) (string, error) {
	c = Normalize(c)
	projection := o.Projection
	if projection == "" {
		projection = ProjectionReferenceOnly
	}
	if err := checkCard(c, projection); err != nil {
		return "", err
	}

	var b strings.Builder
	w := func(k, v string) { b.WriteString(k + ": " + v + "\n") }
	wl := func(k string, items []string) {
		if len(items) == 0 {
			return
		}
		b.WriteString(k + ":\n")
		for _, it := range items {
			b.WriteString("  - " + yamlQuote(it) + "\n")
		}
	}
	b.WriteString("---\n")
	w("type", CardType)
	w("title", yamlQuote(c.Name))
	w("generator", Generator)
	w("card_version", strconv.Itoa(CardVersion))
	w("project_id", c.ProjectID)
	w("machine_id", c.MachineID)
	w("record_revision", strconv.FormatUint(c.RecordRevision, 10))
	w("locator", Locator(c.MachineID, c.ProjectID))
	w("projection", projection)
	if c.RootKey != "" {
		// Quoted: a hex string can read as a number in YAML.
		w("root_key", yamlQuote(c.RootKey))
	}
	w("availability", c.Availability)
	if c.MovedTo != "" {
		w("moved_to", c.MovedTo)
	}
	if c.Description != "" {
		w("description", yamlQuote(c.Description))
	}
	wl("packages", c.Packages)
	wl("keywords", c.Keywords)
	if projection == ProjectionLocalPaths {
		w("path", yamlQuote(c.Path))
	}
	wl("tags", append([]string{CardTag, FormatTag, MachineTag(c.MachineID)}, c.Tags...))
	b.WriteString("---\n\n")

	b.WriteString("# " + c.Name + "\n\n")
	if c.Description != "" {
		b.WriteString(c.Description + "\n\n")
	}
	if len(c.Packages) > 0 {
		b.WriteString("Packages: " + strings.Join(c.Packages, ", ") + "\n\n")
	}
	if len(c.Keywords) > 0 {
		b.WriteString("Keywords: " + strings.Join(c.Keywords, ", ") + "\n\n")
	}
	if len(c.Tags) > 0 {
		b.WriteString("Tags: " + strings.Join(c.Tags, ", ") + "\n\n")
	}
	if c.MovedTo != "" {
		b.WriteString("Moved: on its machine this project is now project " + c.MovedTo + ".\n\n")
	}
	if c.Availability != "present" {
		b.WriteString("Availability on its machine: " + c.Availability + ".\n\n")
	}
	fmt.Fprintf(&b, "Local CodeGraph project card kept by cgcat: project %s on machine %s. "+
		"It is a reference, not a path: ask local_codegraph_resolve for the project's current root.\n",
		c.ProjectID, c.MachineID)
	return b.String(), nil
}

func checkCard(c Card, projection string) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrCardInvalid, fmt.Sprintf(format, a...))
	}
	if !ValidCardID(c.ProjectID) {
		return bad("project id %q (want [a-z0-9][a-z0-9_-]{0,63})", c.ProjectID)
	}
	if !ValidCardID(c.MachineID) {
		return bad("machine id %q (want [a-z0-9][a-z0-9_-]{0,63})", c.MachineID)
	}
	if c.Name == "" {
		return bad("empty name")
	}
	if c.RootKey != "" && !ValidRootKey(c.RootKey) {
		return bad("root key %q (want 16 to 64 lowercase hex digits)", c.RootKey)
	}
	if !slices.Contains(Availabilities, c.Availability) {
		return bad("availability %q (want one of %s)", c.Availability, strings.Join(Availabilities, ", "))
	}
	if c.MovedTo != "" && (!ValidCardID(c.MovedTo) || c.MovedTo == c.ProjectID) {
		return bad("moved_to %q (want another project id)", c.MovedTo)
	}
	switch projection {
	case ProjectionReferenceOnly:
		if c.Path != "" {
			return fmt.Errorf("%w: %w", ErrCardInvalid, ErrPathForbidden)
		}
	case ProjectionLocalPaths:
		if err := checkPath(c.Path); err != nil {
			return fmt.Errorf("%w: %w", ErrCardInvalid, err)
		}
	default:
		return bad("unknown projection %q", projection)
	}
	return nil
}

func checkPath(p string) error {
	switch {
	case p == "":
		return errors.New("local-paths card without a path")
	case len(p) > MaxPathLen:
		return errors.New("path too long")
	case !strings.HasPrefix(p, "/") || filepath.Clean(p) != p:
		return fmt.Errorf("path %q is not absolute and clean", p)
	case strings.ContainsFunc(p, func(r rune) bool { return !unicode.IsGraphic(r) || r == utf8.RuneError }):
		return fmt.Errorf("path %q holds control characters", p)
	}
	return nil
}

// yamlQuote double-quotes a cleaned string (no control characters remain,
// so only backslash and double quote need escaping).
func yamlQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
