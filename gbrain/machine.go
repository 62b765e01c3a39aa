package gbrain

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Machine pages: every machine keeps one page about itself next to its
// cards, at <slugPrefix>/machines/<machineID>, tagged MachinePageTag (never
// CardTag: an older cgcat listing cards never meets it). Its heartbeat is
// the day the machine last ran a GBrain round: another machine calls a
// machine silent when that day (or its newest card) is older than its
// gbrain.staleMachineDays, and marks its cards stale. A machine that is
// retired (`cgcat gbrain retire`, run on any machine) carries retired_by:
// every machine then leaves its cards out of every search.
const (
	MachinePageTag     = "cgcat-machine"
	MachinePageVersion = 1
	machinePagesDir    = "machines"
)

// MachinePage is one machine's page. Dates are YYYY-MM-DD (UTC).
type MachinePage struct {
	MachineID string
	Heartbeat string
	// RetiredBy is the machine that retired this one ("" while it is not
	// retired), on RetiredAt.
	RetiredBy string
	RetiredAt string
	// Retracted are the cards this machine took back lately (a project
	// forgotten or hidden there), newest last, at most MaxTombstones: a
	// soft delete does not move updated_at, so other machines learn of it
	// from this page, at once, instead of at their next full listing.
	Retracted []Tombstone
}

// Tombstone is one card a machine took back, and when.
type Tombstone struct {
	ProjectID string
	At        string // RFC 3339 (UTC)
}

// MaxTombstones bounds MachinePage.Retracted.
const MaxTombstones = 500

// Retired reports whether the machine was retired.
func (m MachinePage) Retired() bool { return m.RetiredBy != "" }

var dayRE = regexp.MustCompile(`^\d{4}-\d\d-\d\d$`)

// MachineSlug is the slug of a machine's page.
func MachineSlug(slugPrefix, machineID string) (string, error) {
	if !ValidCardID(machineID) {
		return "", fmt.Errorf("%w: machine id %q", ErrInvalidSlug, machineID)
	}
	slug := slugPrefix + "/" + machinePagesDir + "/" + machineID
	if err := ValidateSlug(slug); err != nil {
		return "", err
	}
	return slug, nil
}

// MachineOfSlug returns the machine a machine page's slug names.
func MachineOfSlug(slugPrefix, slug string) (string, bool) {
	id, ok := strings.CutPrefix(slug, slugPrefix+"/"+machinePagesDir+"/")
	return id, ok && ValidCardID(id)
}

// EncodeMachine renders a machine page.
func EncodeMachine(m MachinePage) (string, error) {
	if !ValidCardID(m.MachineID) {
		return "", fmt.Errorf("%w: machine id %q", ErrCardInvalid, m.MachineID)
	}
	for _, d := range []string{m.Heartbeat, m.RetiredAt} {
		if d != "" && !dayRE.MatchString(d) {
			return "", fmt.Errorf("%w: date %q (want YYYY-MM-DD)", ErrCardInvalid, d)
		}
	}
	if m.RetiredBy != "" && !ValidCardID(m.RetiredBy) {
		return "", fmt.Errorf("%w: retired_by %q", ErrCardInvalid, m.RetiredBy)
	}
	var b strings.Builder
	w := func(k, v string) { b.WriteString(k + ": " + v + "\n") }
	b.WriteString("---\n")
	w("type", "note")
	w("title", yamlQuote("cgcat machine "+m.MachineID))
	w("generator", Generator)
	w("machine_page", strconv.Itoa(MachinePageVersion))
	w("machine_id", m.MachineID)
	if m.Heartbeat != "" {
		w("heartbeat", yamlQuote(m.Heartbeat))
	}
	if m.RetiredBy != "" {
		w("retired_by", m.RetiredBy)
		w("retired_at", yamlQuote(m.RetiredAt))
	}
	if n := len(m.Retracted); n > 0 {
		b.WriteString("retracted:\n")
		for _, tb := range m.Retracted[max(0, n-MaxTombstones):] {
			if !ValidCardID(tb.ProjectID) || !validTime(tb.At) {
				return "", fmt.Errorf("%w: tombstone %+v", ErrCardInvalid, tb)
			}
			b.WriteString("  - " + yamlQuote(tb.ProjectID+"@"+tb.At) + "\n")
		}
	}
	b.WriteString("tags:\n  - " + yamlQuote(MachinePageTag) + "\n")
	b.WriteString("---\n\n")
	fmt.Fprintf(&b, "cgcat machine %s: its cgcat last reached GBrain on %s.\n", m.MachineID, m.Heartbeat)
	if m.RetiredBy != "" {
		fmt.Fprintf(&b, "\nRetired by machine %s on %s: its project cards are left out of every cgcat search.\n", m.RetiredBy, m.RetiredAt)
	}
	return b.String(), nil
}

// DecodeMachine reads a machine page (cgcat's form or GBrain's
// re-serialised one). Errors: ErrNotOurCard (no marker), ErrCardTooNew,
// ErrCardInvalid.
func DecodeMachine(content string) (MachinePage, error) {
	var m MachinePage
	bad := func(err error) (MachinePage, error) { return MachinePage{}, fmt.Errorf("%w: %w", ErrCardInvalid, err) }
	if len(content) > MaxCardBytes || !utf8.ValidString(content) {
		return bad(errors.New("too large or not UTF-8"))
	}
	lines, _, err := splitFrontmatter(strings.ReplaceAll(content, "\r\n", "\n"))
	if err != nil {
		return bad(err)
	}
	fm, err := parseFrontmatter(lines)
	if err != nil {
		return bad(err)
	}
	if gen, _, _ := fm.str("generator"); gen != Generator {
		return m, fmt.Errorf("%w: no generator: %s marker", ErrNotOurCard, Generator)
	}
	ver, ok, err := fm.uint("machine_page")
	switch {
	case err != nil || !ok || ver < 1:
		return m, fmt.Errorf("%w: not a machine page", ErrNotOurCard)
	case ver > MachinePageVersion:
		return m, fmt.Errorf("%w: machine_page %d", ErrCardTooNew, ver)
	}
	get := func(k string) string {
		v, _, err := fm.str(k)
		if err != nil {
			return ""
		}
		return v
	}
	m = MachinePage{MachineID: get("machine_id"), Heartbeat: day(get("heartbeat")), RetiredBy: get("retired_by"), RetiredAt: day(get("retired_at"))}
	tombs, err := fm.list("retracted", MaxTombstones)
	if err != nil {
		return bad(err)
	}
	for _, s := range tombs {
		id, at, ok := strings.Cut(s, "@")
		if !ok || !ValidCardID(id) || !validTime(at) {
			return bad(fmt.Errorf("tombstone %q", s))
		}
		m.Retracted = append(m.Retracted, Tombstone{ProjectID: id, At: at})
	}
	if !ValidCardID(m.MachineID) || (m.RetiredBy != "" && !ValidCardID(m.RetiredBy)) {
		return bad(fmt.Errorf("machine_id %q, retired_by %q", m.MachineID, m.RetiredBy))
	}
	return m, nil
}

func validTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// day takes the date of a YYYY-MM-DD value or a timestamp GBrain widened
// it to ("" for anything else).
func day(s string) string {
	if len(s) >= 10 && dayRE.MatchString(s[:10]) {
		return s[:10]
	}
	return ""
}
