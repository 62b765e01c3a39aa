package gbrain

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Decode reads a card from page content: what Encode wrote, or GBrain's
// re-serialised form of it (keys reordered, tags as a block list, quoting
// changed, body trimmed). It is strict and bounded: at most MaxCardBytes,
// the YAML subset described in frontmatter.go, field bounds as Normalize's.
// The body is not read.
//
// Errors: ErrNotOurCard (no "generator: cgcat" marker, not a project card,
// a key named "id"); ErrCardTampered (the locator does not match project_id
// and machine_id); ErrPathForbidden (a path without the local-paths
// projection); ErrCardTooNew; ErrCardInvalid for anything else malformed.
// A returned card is normalised (see Normalize).
func Decode(content string) (Card, error) {
	fm, err := readCardFrontmatter(content)
	if err != nil {
		return Card{}, err
	}
	if err := checkOurCard(fm); err != nil {
		return Card{}, err
	}
	c, raw, err := readCardFields(fm)
	if err != nil {
		return Card{}, cardInvalid(err)
	}
	if err := checkDecodedIDs(c); err != nil {
		return Card{}, err
	}
	if raw.locator != Locator(c.MachineID, c.ProjectID) {
		return Card{}, fmt.Errorf("%w: locator %q does not match machine_id %q and project_id %q",
			ErrCardTampered, raw.locator, c.MachineID, c.ProjectID)
	}
	if c.Path, err = decodedPath(fm, raw); err != nil {
		return Card{}, err
	}
	n := Normalize(c)
	if n.Name == "" {
		return Card{}, cardInvalid(errors.New("title is empty once cleaned"))
	}
	return n, nil
}

// cardInvalid marks a malformed card, keeping the reason.
func cardInvalid(err error) error { return fmt.Errorf("%w: %w", ErrCardInvalid, err) }

// readCardFrontmatter bounds the content and parses its frontmatter block.
func readCardFrontmatter(content string) (*frontmatter, error) {
	if len(content) > MaxCardBytes {
		return nil, cardInvalid(fmt.Errorf("larger than %d bytes", MaxCardBytes))
	}
	if !utf8.ValidString(content) {
		return nil, cardInvalid(errors.New("not UTF-8"))
	}
	content = strings.ReplaceAll(content, "\r\n", "\n")
	lines, _, err := splitFrontmatter(content)
	if err != nil {
		return nil, cardInvalid(err)
	}
	fm, err := parseFrontmatter(lines)
	if err != nil {
		return nil, cardInvalid(err)
	}
	return fm, nil
}

// checkOurCard tells a cgcat project card of a format this codec reads from
// any other page: the generator marker, no id key, the project type, and a
// card_version no newer than CardVersion.
func checkOurCard(fm *frontmatter) error {
	if gen, _, err := fm.str("generator"); err != nil || gen != Generator {
		return fmt.Errorf("%w: no generator: %s marker", ErrNotOurCard, Generator)
	}
	if fm.has("id") {
		return fmt.Errorf("%w: has an id key (cgcat never writes one)", ErrNotOurCard)
	}
	if typ, _, err := fm.str("type"); err != nil || typ != CardType {
		return fmt.Errorf("%w: type is not %s", ErrNotOurCard, CardType)
	}
	ver, ok, err := fm.uint("card_version")
	switch {
	case err != nil || !ok:
		return cardInvalid(errors.New("card_version missing or not a number"))
	case ver > CardVersion:
		return fmt.Errorf("%w: card_version %d", ErrCardTooNew, ver)
	case ver < 1:
		return cardInvalid(fmt.Errorf("card_version %d", ver))
	}
	return nil
}

// rawCardFields are the keys Decode checks before they become card fields.
type rawCardFields struct {
	locator, projection, path string
}

// fieldReader reads bounded frontmatter fields and gathers every problem,
// so a bad card is reported whole rather than one field at a time.
type fieldReader struct {
	fm   *frontmatter
	errs []error
}

func (r *fieldReader) str(key string, max int, required bool) string {
	s, ok, err := r.fm.str(key)
	if err != nil {
		r.errs = append(r.errs, err)
	} else if required && (!ok || s == "") {
		r.errs = append(r.errs, fmt.Errorf("%s missing", key))
	} else if utf8.RuneCountInString(s) > max {
		r.errs = append(r.errs, fmt.Errorf("%s longer than %d", key, max))
	}
	return s
}

func (r *fieldReader) list(key string, maxItems int) []string {
	l, err := r.fm.list(key, maxItems)
	if err != nil {
		r.errs = append(r.errs, err)
	}
	for _, s := range l {
		if utf8.RuneCountInString(s) > MaxItemLen {
			r.errs = append(r.errs, fmt.Errorf("%s item longer than %d", key, MaxItemLen))
			break
		}
	}
	return l
}

// readCardFields reads every card field within its bounds; the error joins
// all the problems found.
func readCardFields(fm *frontmatter) (Card, rawCardFields, error) {
	r := fieldReader{fm: fm}
	var c Card
	var raw rawCardFields
	c.ProjectID = r.str("project_id", 64, true)
	c.MachineID = r.str("machine_id", 64, true)
	c.Name = r.str("title", MaxNameLen, true)
	c.Description = r.str("description", MaxDescriptionLen, false)
	raw.locator = r.str("locator", 200, true)
	raw.projection = r.str("projection", 32, true)
	raw.path = r.str("path", MaxPathLen, false)
	c.RootKey = r.str("root_key", 64, false)
	c.Availability = r.str("availability", 32, false)
	c.MovedTo = r.str("moved_to", 64, false)
	c.Packages = r.list("packages", MaxItems)
	c.Keywords = r.list("keywords", MaxItems)
	c.Tags = r.list("tags", MaxItems+1)
	rev, ok, err := fm.uint("record_revision")
	if err != nil || !ok {
		r.errs = append(r.errs, errors.New("record_revision missing or not an unsigned integer"))
	}
	c.RecordRevision = rev
	return c, raw, errors.Join(r.errs...)
}

// checkDecodedIDs checks the identifiers and enumerations a card read back
// must hold.
func checkDecodedIDs(c Card) error {
	if !ValidCardID(c.ProjectID) || !ValidCardID(c.MachineID) {
		return cardInvalid(fmt.Errorf("bad project_id %q or machine_id %q", c.ProjectID, c.MachineID))
	}
	if c.RootKey != "" && !ValidRootKey(c.RootKey) {
		return cardInvalid(fmt.Errorf("bad root_key %q", c.RootKey))
	}
	if c.Availability != "" && !slices.Contains(Availabilities, c.Availability) {
		return cardInvalid(fmt.Errorf("bad availability %q", c.Availability))
	}
	if c.MovedTo != "" && (!ValidCardID(c.MovedTo) || c.MovedTo == c.ProjectID) {
		return cardInvalid(fmt.Errorf("bad moved_to %q", c.MovedTo))
	}
	return nil
}

// decodedPath is the card's path as its projection allows: none for
// reference-only (a path key there is refused), a checked one for local-paths.
func decodedPath(fm *frontmatter, raw rawCardFields) (string, error) {
	switch raw.projection {
	case ProjectionReferenceOnly:
		if fm.has("path") {
			return "", fmt.Errorf("%w: %q", ErrPathForbidden, raw.path)
		}
		return "", nil
	case ProjectionLocalPaths:
		if err := checkPath(raw.path); err != nil {
			return "", cardInvalid(err)
		}
		return raw.path, nil
	default:
		return "", cardInvalid(fmt.Errorf("unknown projection %q", raw.projection))
	}
}
