package gbrain

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxSlugLen bounds a slug we send.
const MaxSlugLen = 200

var (
	sourceIDRE = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)
	segmentRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)
	cardIDRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	rootKeyRE  = regexp.MustCompile(`^[0-9a-f]{16,64}$`)
	brainIDRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
)

// ValidBrainID reports whether id can name a GBrain brain: "host" or a
// kebab-case mount id.
func ValidBrainID(id string) bool { return brainIDRE.MatchString(id) }

// ValidRootKey reports whether k can be a card's root key: 16 to 64
// lowercase hex digits.
func ValidRootKey(k string) bool { return rootKeyRE.MatchString(k) }

// ValidSourceID reports whether id is a well-formed GBrain source id
// ([a-z0-9-]{1,32}). GBrain silently ignores a malformed GBRAIN_SOURCE and
// writes to "default", so a malformed id must never reach it.
func ValidSourceID(id string) bool { return sourceIDRE.MatchString(id) }

// ValidateSlug accepts only the slugs cgcat writes: lowercase segments of
// [a-z0-9_.-] that start with a letter or digit, joined by "/". GBrain
// lowercases slugs on write but not on read, so an uppercase slug would write
// one page and read another; anything GBrain itself rejects (empty, leading
// "/", "..", control characters, backslash, bidi overrides, percent escapes)
// falls outside this set too.
func ValidateSlug(slug string) error {
	if slug == "" {
		return fmt.Errorf("%w: empty", ErrInvalidSlug)
	}
	if len(slug) > MaxSlugLen {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidSlug, MaxSlugLen)
	}
	for _, seg := range strings.Split(slug, "/") {
		if !segmentRE.MatchString(seg) {
			return fmt.Errorf("%w: %q (want lowercase segments of [a-z0-9_.-] joined by /)", ErrInvalidSlug, slug)
		}
	}
	return nil
}

// ValidCardID reports whether id can be a project or machine id in a card
// and its slug: [a-z0-9][a-z0-9_-]{0,63}, lowercase only.
func ValidCardID(id string) bool { return cardIDRE.MatchString(id) }

// CardSlug is the slug of a project's card: <slugPrefix>/<projectID>. Both
// parts must be lowercase (see [ValidateSlug], [ValidCardID]); anything else
// is refused rather than folded, so two ids can never share a page.
func CardSlug(slugPrefix, projectID string) (string, error) {
	if err := ValidateSlug(slugPrefix); err != nil {
		return "", fmt.Errorf("slug prefix: %w", err)
	}
	if !ValidCardID(projectID) {
		return "", fmt.Errorf("%w: project id %q (want [a-z0-9][a-z0-9_-]{0,63})", ErrInvalidSlug, projectID)
	}
	slug := slugPrefix + "/" + projectID
	if err := ValidateSlug(slug); err != nil {
		return "", err
	}
	return slug, nil
}
