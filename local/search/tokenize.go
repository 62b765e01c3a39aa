package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxTermLen bounds one term in bytes. Longer words (hashes, minified
// blobs) are cut; documents and queries are cut the same way, so they still
// meet.
const maxTermLen = 64

// maxFieldBytes bounds how much of one field value is tokenised. Metadata is
// already length-bounded upstream; this only keeps a bad caller from making
// the index arbitrarily large.
const maxFieldBytes = 16 << 10

type tokKind uint8

const (
	kindPart   tokKind = iota // one word: a camelCase/kebab/snake piece or a whole word
	kindJoined                // the pieces of a compound run together: order-sdk → ordersdk
	kindCJK                   // a CJK bigram, or a lone CJK character
)

type runeClass uint8

const (
	clStrong runeClass = iota // ends a compound: spaces, '/', '@', ':' and other punctuation
	clWeak                    // joins pieces of a compound: '-', '_', '.'
	clAlnum                   // letters (non-CJK), digits, combining marks
	clCJK                     // Han, Hiragana, Katakana, Hangul
)

// foldWidth maps fullwidth ASCII (ＡＢＣ１２３, common in CJK text) to ASCII
// so that it tokenises like the ASCII a user would type.
func foldWidth(r rune) rune {
	if r >= 0xFF01 && r <= 0xFF5E {
		return r - 0xFEE0
	}
	return r
}

func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	// U+30FC (prolonged sound mark) has script Common but lives inside
	// Katakana words.
	return r == 0x30FC || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

func classify(r rune) runeClass {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
			return clAlnum
		case r == '-' || r == '_' || r == '.':
			return clWeak
		}
		return clStrong
	}
	if isCJK(r) {
		return clCJK
	}
	if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
		return clAlnum
	}
	return clStrong
}

// emitFunc receives one term (only valid during the call), its kind, the
// group it belongs to (one compound segment or one CJK run; numbered from 0
// in order) and its byte span in the input.
type emitFunc func(kind tokKind, term []byte, group, start, end int)

// tokenizer turns text into search terms. It is not safe for concurrent use;
// its buffers are reused between calls.
//
// A segment is a maximal run of letters/digits joined only by weak
// separators ('-', '_', '.'). Each segment is split into parts at weak
// separators, camelCase/PascalCase humps and letter↔digit changes; every part
// is a term, and when there are several parts their concatenation is a term
// too, so "orderSdk", "order_sdk" and "order-sdk" all share "ordersdk". CJK
// runs become overlapping bigrams (a lone character stays a unigram). Terms
// are lowercased and lightly stemmed (see stem).
type tokenizer struct {
	emit      emitFunc
	s         string
	term      []byte
	joined    []byte
	runJoined []byte
	group     int

	segStart, segEnd int // byte span of the current segment; segStart < 0: none
	nparts, nruns    int
	joinedOver       bool // the joined form grew past maxTermLen

	runStart int   // start of the current alnum run; < 0: none
	cuts     []int // part boundaries within the run

	cjkStart, cjkPrev, cjkEnd, cjkN int
}

func (t *tokenizer) tokenize(s string, emit emitFunc) {
	if len(s) > maxFieldBytes {
		s = cutUTF8(s, maxFieldBytes)
	}
	t.s, t.emit = s, emit
	t.segStart, t.runStart, t.cjkN = -1, -1, 0
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		r = foldWidth(r)
		switch classify(r) {
		case clAlnum:
			t.flushCJK()
			if t.segStart < 0 {
				t.segStart = i
				t.nparts, t.nruns, t.joinedOver = 0, 0, false
				t.joined = t.joined[:0]
			}
			if t.runStart < 0 {
				t.runStart = i
			}
		case clWeak:
			t.flushRun(i)
			t.flushCJK()
		case clCJK:
			t.flushRun(i)
			t.flushSegment()
			if t.cjkN == 0 {
				t.cjkStart = i
			} else {
				t.emitTerm(kindCJK, s[t.cjkPrev:i+size], t.group, t.cjkPrev, i+size)
			}
			t.cjkPrev, t.cjkEnd = i, i+size
			t.cjkN++
		default:
			t.flushRun(i)
			t.flushSegment()
			t.flushCJK()
		}
		i += size
	}
	t.flushRun(len(s))
	t.flushSegment()
	t.flushCJK()
	t.s, t.emit = "", nil
}

func (t *tokenizer) emitTerm(kind tokKind, text string, group, start, end int) {
	t.term = append(t.term[:0], text...)
	t.emit(kind, t.term, group, start, end)
}

func (t *tokenizer) flushCJK() {
	if t.cjkN == 0 {
		return
	}
	if t.cjkN == 1 {
		t.emitTerm(kindCJK, t.s[t.cjkStart:t.cjkEnd], t.group, t.cjkStart, t.cjkEnd)
	}
	t.cjkN = 0
	t.group++
}

func (t *tokenizer) flushSegment() {
	if t.segStart < 0 {
		return
	}
	if t.nruns > 1 && t.nparts > 1 && !t.joinedOver { // one run: flushRun emitted it
		t.joined = stem(t.joined)
		t.emit(kindJoined, t.joined, t.group, t.segStart, t.segEnd)
	}
	t.segStart = -1
	t.group++
}

type caseClass uint8

const (
	ccOther caseClass = iota // letters without case, marks
	ccLower
	ccUpper
	ccDigit
)

func caseOf(r rune) caseClass {
	switch {
	case 'a' <= r && r <= 'z':
		return ccLower
	case 'A' <= r && r <= 'Z':
		return ccUpper
	case '0' <= r && r <= '9':
		return ccDigit
	case r < utf8.RuneSelf:
		return ccOther
	case unicode.IsLower(r):
		return ccLower
	case unicode.IsUpper(r), unicode.IsTitle(r):
		return ccUpper
	case unicode.IsDigit(r):
		return ccDigit
	}
	return ccOther
}

// flushRun splits the alnum run ending at end into parts and emits them.
func (t *tokenizer) flushRun(end int) {
	if t.runStart < 0 {
		return
	}
	s := t.s
	t.cuts = append(t.cuts[:0], t.runStart)
	prev := ccOther
	digits, letters := false, false
	for i := t.runStart; i < end; {
		r, size := utf8.DecodeRuneInString(s[i:])
		cur := caseOf(foldWidth(r))
		if i > t.cuts[len(t.cuts)-1] && cur != ccOther && prev != ccOther {
			boundary := false
			switch {
			case (prev == ccDigit) != (cur == ccDigit): // base64 → base|64
				boundary = true
			case prev == ccLower && cur == ccUpper: // orderSdk → order|Sdk
				boundary = true
			case prev == ccUpper && cur == ccUpper: // XMLParser → XML|Parser
				if j := i + size; j < end {
					nr, _ := utf8.DecodeRuneInString(s[j:])
					boundary = caseOf(foldWidth(nr)) == ccLower
				}
			}
			if boundary {
				t.cuts = append(t.cuts, i)
			}
		}
		if cur == ccDigit {
			digits = true
		} else {
			letters = true
		}
		if cur != ccOther {
			prev = cur
		}
		i += size
	}
	t.cuts = append(t.cuts, end)
	t.nruns++
	for k := 1; k < len(t.cuts); k++ {
		a, b := t.cuts[k-1], t.cuts[k]
		// In a word that mixes letters and digits (oauth2, k8s, v2, x86),
		// the number and single letters are no terms of their own — "2"
		// would match every version string — but they stay in the
		// joined form.
		silent := digits && letters && (isDigitRun(s[a:b]) || utf8.RuneCountInString(s[a:b]) == 1)
		t.part(a, b, silent)
	}
	if len(t.cuts) > 2 {
		// A run of several parts (reactRouter in reactRouter-dom, x86 in
		// x86_64) is also a compound of its own.
		t.runJoined = appendLower(t.runJoined[:0], s[t.runStart:end])
		if len(t.runJoined) <= maxTermLen {
			t.runJoined = stem(t.runJoined)
			t.emit(kindJoined, t.runJoined, t.group, t.runStart, end)
		}
	}
	t.runStart = -1
	t.segEnd = end
}

func isDigitRun(s string) bool {
	for _, r := range s {
		if caseOf(foldWidth(r)) != ccDigit {
			return false
		}
	}
	return true
}

// part emits one word s[a:b] (unless silent) and adds it to the segment's
// joined form.
func (t *tokenizer) part(a, b int, silent bool) {
	t.term = appendLower(t.term[:0], t.s[a:b])
	if n := len(t.term); n > maxTermLen {
		n = maxTermLen
		for n > 0 && !utf8.RuneStart(t.term[n]) {
			n--
		}
		t.term = t.term[:n]
	}
	t.nparts++
	if !t.joinedOver {
		if len(t.joined)+len(t.term) > maxTermLen {
			t.joinedOver = true
		} else {
			t.joined = append(t.joined, t.term...)
		}
	}
	if silent {
		return
	}
	t.term = stem(t.term)
	t.emit(kindPart, t.term, t.group, a, b)
}

// appendLower appends s lowercased, with fullwidth ASCII folded.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		dst = utf8.AppendRune(dst, unicode.ToLower(foldWidth(r)))
		i += size
	}
	return dst
}

// cutUTF8 returns at most n bytes of s, not splitting a rune.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// stem folds English plurals and a final silent 'e' so that singular and
// plural meet: services/service → servic, libraries/library → library,
// classes/class → class, caches/cache → cach, boxes/box → box. It only
// touches ASCII words of four letters or more and never -ing/-ed (string,
// embed, need would be mangled). A stem may be no word at all (status →
// statu, response → respon): both sides of a match go through the same function, so only
// merges matter, and stems are internal — reasons show the user's words.
func stem(b []byte) []byte {
	n := len(b)
	if n < 4 {
		return b
	}
	for _, c := range b {
		if c < 'a' || c > 'z' {
			return b
		}
	}
	switch {
	case n >= 5 && b[n-3] == 'i' && b[n-2] == 'e' && b[n-1] == 's': // libraries
		b[n-3] = 'y'
		b = b[:n-2]
	case b[n-3] == 'x' && b[n-2] == 'e' && b[n-1] == 's': // boxes, fixes
		b = b[:n-2]
	case b[n-1] == 's' && b[n-2] != 's': // not class, access
		b = b[:n-1]
	}
	// A silent 'e' goes, and with it an 's' it uncovers, so a singular
	// ending in s meets its -es plural: statuses → status → statu, like
	// status → statu; aliases → alia, like alias.
	if n = len(b); n >= 5 && b[n-1] == 'e' {
		b = b[:n-1]
		if n--; b[n-1] == 's' && b[n-2] != 's' {
			b = b[:n-1]
		}
	}
	return b
}

// normalize is the form exact matches compare: lowercase, fullwidth folded,
// every separator removed. "React Router DOM", "react_router_dom",
// "reactRouterDom" and "react-router-dom" all become "reactrouterdom".
func normalize(s string) string {
	var buf [128]byte // most names fit; the result is copied at its exact size
	b := buf[:0]
	for _, r := range s {
		r = foldWidth(r)
		if c := classify(r); c == clAlnum || c == clCJK {
			b = utf8.AppendRune(b, unicode.ToLower(r))
		}
	}
	return string(b)
}

// lowerFold is the case-insensitive literal form: trimmed, lowercase,
// fullwidth folded, separators kept.
func lowerFold(s string) string {
	return string(appendLower(nil, strings.TrimSpace(s)))
}
