package meta

import (
	"html"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// readmeNames are the README spellings looked for, lower-cased, best first.
var readmeNames = []string{"readme.md", "readme", "readme.rst", "readme.txt", "readme.markdown"}

// readReadme takes the first meaningful paragraph of the README. A README
// over the per-file bound is read in part: the paragraph is near the top.
func (r *reader) readReadme() {
	best, rank := "", len(readmeNames)
	for n := range r.entries {
		for i, want := range readmeNames {
			// Among equal ranks the byte-wise smallest wins, so README.md
			// beats readme.md and the choice is stable.
			if strings.EqualFold(n, want) && (i < rank || (i == rank && n < best)) {
				best, rank = n, i
			}
		}
	}
	if best == "" && !r.complete {
		best = "README.md" // a truncated listing may have missed it
	}
	if best == "" {
		return
	}
	if b, ok := r.file(best, false); ok {
		r.m.Readme = firstParagraph(string(b))
	}
}

var (
	reHeading  = regexp.MustCompile(`^ {0,3}#{1,6}(\s|$)`)
	reListItem = regexp.MustCompile(`^\s*([-*+]|\d{1,9}[.)])\s`)
	reLinkDef  = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*\S`)
	reHTMLLine = regexp.MustCompile(`^\s*</?[A-Za-z!?]`)
	reTableSep = regexp.MustCompile(`^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$`)
	reRSTField = regexp.MustCompile(`^:[\w-]+:`)
	reAlert    = regexp.MustCompile(`^\[![A-Za-z]+\]$`)

	reImage    = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)|!\[[^\]]*\]\[[^\]]*\]|<img\b[^>]*>`)
	reLink     = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	reRefLink  = regexp.MustCompile(`\[([^\]]*)\]\[[^\]]*\]`)
	reAutoLink = regexp.MustCompile(`<((?:https?|ftp|mailto):[^>\s]+)>`)
	reRSTLink  = regexp.MustCompile("`([^`<]+?)\\s*<[^>]*>`_{1,2}")
	reTag      = regexp.MustCompile(`</?[A-Za-z][^>]*>`)
	reCode     = regexp.MustCompile("`+([^`]*)`+")
	reStrong   = regexp.MustCompile(`\*\*([^*]+)\*\*|__([^_]+)__|~~([^~]+)~~`)
	reEmph     = regexp.MustCompile(`\*([^*\s][^*]*)\*|(^|[^\w])_([^_\s][^_]*)_([^\w]|$)`)
	reEscape   = regexp.MustCompile("\\\\([\\\\`*_{}\\[\\]()#+\\-.!|<>~])")
)

// firstParagraph returns the first paragraph of a Markdown, reStructuredText
// or plain-text README that carries prose, markup stripped, bounded to
// maxReadme runes. Headings, badges and images, HTML, link definitions,
// code, tables, lists, front matter and navigation lines are skipped.
func firstParagraph(s string) string {
	lines := strings.Split(strings.TrimPrefix(s, "\uFEFF"), "\n")
	i := skipFrontMatter(lines)
	var para []string
	flush := func() string {
		if len(para) == 0 {
			return ""
		}
		p := stripInline(prefix(joinLines(para), maxParaBytes))
		para = para[:0]
		if !strings.ContainsFunc(p, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			return ""
		}
		return Clean(p, maxReadme)
	}
	for ; i < len(lines); i++ {
		line := prefix(strings.TrimRight(lines[i], " \t\r"), maxLineBytes)
		t := strings.TrimSpace(line)
		q := strings.TrimSpace(strings.TrimLeft(t, "> ")) // inside a blockquote
		switch {
		case codeFence(t) != "":
			fence := codeFence(t)
			i = skipUntil(lines, i, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), fence) })
		case strings.HasPrefix(q, "<!--"):
			if !strings.Contains(q, "-->") {
				i = skipUntil(lines, i, func(l string) bool { return strings.Contains(l, "-->") })
			}
		case isAdornment(t):
			// An underline makes the lines above it a heading.
			para = para[:0]
		case strings.Contains(t, "|") && reTableSep.MatchString(t):
			// A table separator makes the line above it a header; the rows
			// follow.
			para = para[:0]
			for i+1 < len(lines) && strings.Contains(lines[i+1], "|") {
				i++
			}
		case reHTMLLine.MatchString(q):
			if txt := htmlText(q); txt != "" {
				para = append(para, txt)
				continue
			}
			if strings.LastIndexByte(q, '<') > strings.LastIndexByte(q, '>') {
				// A tag spread over several lines.
				i = skipUntil(lines, i, func(l string) bool { return strings.Contains(l, ">") })
			}
		case t == "" || reHeading.MatchString(line) || skipLine(line, t, q):
		case len(para) == 0 && (strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") || isNavigation(q)):
			continue // indented code, or a badge or link row before any prose
		default:
			para = append(para, q)
			continue
		}
		// The line ended any paragraph.
		if p := flush(); p != "" {
			return p
		}
	}
	return flush()
}

// htmlText returns the text of an HTML line that holds prose
// (<p align="center">A tool for X</p>), or "" for headings, images, links
// and layout.
func htmlText(q string) string {
	name := strings.ToLower(strings.TrimLeft(q, "</"))
	if i := strings.IndexFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }); i >= 0 {
		name = name[:i]
	}
	switch name {
	case "p", "div", "span", "b", "strong", "em", "i", "small", "sub", "sup":
	default:
		return ""
	}
	txt := strings.TrimSpace(reTag.ReplaceAllString(reImage.ReplaceAllString(q, ""), " "))
	if isNavigation(txt) || !strings.ContainsFunc(txt, unicode.IsLetter) {
		return ""
	}
	return txt
}

// Markup is stripped with regular expressions, linear but not cheap on
// long adversarial lines; a paragraph of maxReadme runes never needs more
// than this much source.
const (
	maxLineBytes = 2048
	maxParaBytes = 4096
)

// prefix returns at most n bytes of s, cut on a rune boundary.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// skipLine reports lines that never belong to a paragraph. t is line
// trimmed, q is t without blockquote marks.
func skipLine(line, t, q string) bool {
	switch {
	case reListItem.MatchString(line), reLinkDef.MatchString(line):
		return true
	case strings.HasPrefix(t, "|"):
		return true
	case strings.HasPrefix(t, ".. ") || t == "..", reRSTField.MatchString(t):
		return true
	case reAlert.MatchString(q), strings.EqualFold(q, "[TOC]"), q == "[[_TOC_]]":
		return true
	}
	return false
}

// isNavigation reports badge rows and link rows ("English | 简体中文",
// "[Docs](..) · [Demo](..)"): lines of images or links with next to no
// text of their own.
func isNavigation(t string) bool {
	rest := reImage.ReplaceAllString(t, "")
	rest = reLink.ReplaceAllString(rest, "")
	if len(rest) == len(t) {
		return false
	}
	letters := 0
	for _, r := range rest {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			letters++
		}
	}
	return letters < 10
}

// codeFence returns the fence that t opens (``` or ~~~, possibly longer),
// or "".
func codeFence(t string) string {
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(t, c+c+c) {
			return strings.Repeat(c, len(t)-len(strings.TrimLeft(t, c)))
		}
	}
	return ""
}

// skipUntil returns the index of the first line after i where end is true,
// or the last line.
func skipUntil(lines []string, i int, end func(string) bool) int {
	for i++; i < len(lines); i++ {
		if end(lines[i]) {
			return i
		}
	}
	return len(lines) - 1
}

// skipFrontMatter returns the index of the first line after a leading
// YAML (---) or TOML (+++) front matter block.
func skipFrontMatter(lines []string) int {
	if len(lines) == 0 {
		return 0
	}
	open := strings.TrimSpace(lines[0])
	if open != "---" && open != "+++" {
		return 0
	}
	for i := 1; i < len(lines); i++ {
		if t := strings.TrimSpace(lines[i]); t == open || (open == "---" && t == "...") {
			return i + 1
		}
	}
	return 0 // no closing line: a horizontal rule, not front matter
}

// isAdornment reports a line of one punctuation character repeated (at
// least three): a setext or reStructuredText underline, or a rule.
func isAdornment(t string) bool {
	if len(t) < 3 || !strings.ContainsRune("=-~*_^\"'`#+:.<>", rune(t[0])) {
		return false
	}
	n := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case t[0]:
			n++
		case ' ':
		default:
			return false
		}
	}
	return n >= 3
}

// joinLines joins a paragraph's lines with spaces, except between two CJK
// characters, where a line break is not a word break.
func joinLines(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			prev, _ := utf8.DecodeLastRuneInString(b.String())
			next, _ := utf8.DecodeRuneInString(l)
			if !isCJK(prev) || !isCJK(next) {
				b.WriteByte(' ')
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) ||
		(r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}

// stripInline removes Markdown and reStructuredText inline markup: images
// go, links keep their text, emphasis and code marks go, entities are
// decoded.
func stripInline(s string) string {
	// Each rule runs only where the character it needs is in s: most
	// paragraphs hold no markup, and the regular expressions were half of
	// a first pass's metadata time (5,229 READMEs).
	has := func(chars string) bool { return strings.ContainsAny(s, chars) }
	// Escaped characters are set aside as private-use runes so that no
	// rule below takes them for markup.
	if has(`\`) {
		s = reEscape.ReplaceAllStringFunc(s, func(e string) string { return string(escapeBase + rune(e[1])) })
	}
	if has("!<") {
		s = reImage.ReplaceAllString(s, "")
	}
	if has("[") {
		s = reLink.ReplaceAllString(s, "$1")
		s = reRefLink.ReplaceAllString(s, "$1")
	}
	if has("`") {
		s = reRSTLink.ReplaceAllString(s, "$1")
	}
	if has("<") {
		s = reAutoLink.ReplaceAllString(s, "$1")
		s = reTag.ReplaceAllString(s, "")
	}
	if has("`") {
		s = reCode.ReplaceAllString(s, "$1")
	}
	if has("*_~") {
		s = reStrong.ReplaceAllString(s, "$1$2$3")
	}
	if has("*_") {
		s = reEmph.ReplaceAllString(s, "$1$2$3$4")
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r > escapeBase && r < escapeBase+0x80 }) {
		s = strings.Map(func(r rune) rune {
			if r > escapeBase && r < escapeBase+0x80 {
				return r - escapeBase
			}
			return r
		}, s)
	}
	if has("&") {
		s = html.UnescapeString(s)
	}
	return s
}

// escapeBase + c stands for an escaped ASCII character c while markup is
// stripped.
const escapeBase = 0xF0000
