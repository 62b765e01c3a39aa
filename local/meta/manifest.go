package meta

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// manifest is what one manifest kind declared. Strings are raw here; finish
// cleans them.
type manifest struct {
	files       []string // the files read, by name in the root
	name        string
	description string
	packages    []string
	keywords    []string
}

// parser reads one manifest body; file is its name in the root.
type parser func(file string, body []byte) (manifest, error)

// kind is one manifest kind. kinds is in name priority order: the first
// kind that declares a name gives the project its name.
type kind struct {
	file   string            // exact name in the root
	match  func(string) bool // or: the names it matches
	parse  parser
	gradle bool // or: Gradle, read from two files
}

var kinds = []kind{
	{file: "package.json", parse: parsePackageJSON},
	{file: "Cargo.toml", parse: parseCargo},
	{file: "pyproject.toml", parse: parsePyproject},
	{file: "go.mod", parse: parseGoMod},
	{file: "setup.cfg", parse: parseSetupCfg},
	{file: "pom.xml", parse: parsePom},
	{file: "composer.json", parse: parsePackageJSON},
	{gradle: true},
	{match: suffix(".gemspec"), parse: parseGemspec},
	{file: "pubspec.yaml", parse: parsePubspec},
	{match: suffix(".csproj"), parse: parseCsproj},
}

func suffix(s string) func(string) bool {
	return func(n string) bool { return len(n) > len(s) && strings.HasSuffix(n, s) }
}

// readManifests reads every manifest kind present in the root.
func (r *reader) readManifests() {
	for _, k := range kinds {
		if k.gradle {
			r.readGradle()
			continue
		}
		files := []string{k.file}
		if k.match != nil {
			files = r.names(k.match)
		}
		for _, f := range files {
			if !r.has(f) {
				continue
			}
			body, ok := r.file(f, true)
			if !ok {
				continue
			}
			mf, err := safeParse(k.parse, f, body)
			if err != nil {
				r.problemf("%s: %s", f, short(err))
				continue
			}
			mf.files = []string{f}
			r.manifests = append(r.manifests, mf)
		}
	}
}

// readGradle reads Gradle's two files: the name lives in settings.gradle,
// the group in build.gradle.
func (r *reader) readGradle() {
	var settings, build []byte
	var files []string
	for _, f := range []string{"settings.gradle.kts", "settings.gradle"} {
		if r.has(f) && settings == nil {
			if b, ok := r.file(f, true); ok {
				settings, files = b, append(files, f)
			}
		}
	}
	for _, f := range []string{"build.gradle.kts", "build.gradle"} {
		if r.has(f) && build == nil {
			if b, ok := r.file(f, true); ok {
				build, files = b, append(files, f)
			}
		}
	}
	if files == nil {
		return
	}
	mf := parseGradle(settings, build)
	mf.files = files
	r.manifests = append(r.manifests, mf)
}

// safeParse runs p and turns a panic into an error: a third-party parser
// meeting a crafted file must not take the catalog down with it.
func safeParse(p parser, file string, body []byte) (mf manifest, err error) {
	defer func() {
		if v := recover(); v != nil {
			mf, err = manifest{}, fmt.Errorf("parser failed: %v", v)
		}
	}()
	return p(file, bytes.TrimPrefix(body, []byte("\uFEFF")))
}

// short is an error's text bounded for Problems.
func short(err error) string { return Clean(err.Error(), 160) }

// parsePackageJSON reads package.json and composer.json: name, description
// and keywords, each taken only when it has the expected JSON type.
func parsePackageJSON(_ string, b []byte) (manifest, error) {
	var v struct {
		Name        json.RawMessage `json:"name"`
		Description json.RawMessage `json:"description"`
		Keywords    json.RawMessage `json:"keywords"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return manifest{}, err
	}
	m := manifest{
		name:        jsonString(v.Name),
		description: jsonString(v.Description),
		keywords:    jsonStrings(v.Keywords),
	}
	m.packages = nonEmpty(m.name)
	return m, nil
}

func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func jsonStrings(raw json.RawMessage) []string {
	var vs []any
	if json.Unmarshal(raw, &vs) != nil {
		return nil
	}
	return stringsOf(vs)
}

// stringsOf keeps the string elements of a decoded array.
func stringsOf(vs []any) []string {
	var out []string
	for _, v := range vs {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// parseCargo reads [package]; a field inherited with `x.workspace = true`
// falls back to [workspace.package] of the same file.
func parseCargo(_ string, b []byte) (manifest, error) {
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		return manifest{}, err
	}
	pkg := table(doc, "package")
	ws := table(table(doc, "workspace"), "package")
	m := manifest{
		name:        str(pkg["name"]),
		description: str(pkg["description"]),
		keywords:    strs(pkg["keywords"]),
	}
	if m.description == "" {
		m.description = str(ws["description"])
	}
	if m.keywords == nil {
		m.keywords = strs(ws["keywords"])
	}
	m.packages = nonEmpty(m.name)
	return m, nil
}

// parsePyproject reads [project], else [tool.poetry].
func parsePyproject(_ string, b []byte) (manifest, error) {
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		return manifest{}, err
	}
	proj := table(doc, "project")
	poetry := table(table(doc, "tool"), "poetry")
	m := manifest{
		name:        cmp(str(proj["name"]), str(poetry["name"])),
		description: cmp(str(proj["description"]), str(poetry["description"])),
		keywords:    append(strs(proj["keywords"]), strs(poetry["keywords"])...),
	}
	m.packages = nonEmpty(m.name)
	return m, nil
}

func table(doc map[string]any, key string) map[string]any {
	t, _ := doc[key].(map[string]any)
	return t
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func strs(v any) []string {
	vs, _ := v.([]any)
	return stringsOf(vs)
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// parseGoMod reads the module line. The name is the last path element, but
// not a major-version suffix: example.com/tool/v2 is "tool".
func parseGoMod(_ string, b []byte) (manifest, error) {
	for line := range strings.Lines(string(b)) {
		line, _, _ = strings.Cut(line, "//")
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t' && rest[0] != '"' && rest[0] != '`') {
			continue
		}
		path := strings.TrimSpace(rest)
		if u, err := strconv.Unquote(path); err == nil {
			path = u
		}
		if path == "" || strings.ContainsAny(path, " \t\"`") {
			return manifest{}, errors.New("malformed module line")
		}
		return manifest{name: modName(path), packages: []string{path}}, nil
	}
	return manifest{}, errors.New("no module line")
}

var majorVersion = regexp.MustCompile(`^v[0-9]+$`)

func modName(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	n := len(parts) - 1
	if n > 0 && majorVersion.MatchString(parts[n]) {
		n--
	}
	return parts[n]
}

// parseSetupCfg reads [metadata] of setup.cfg. "file:" and "attr:" values
// point elsewhere and are not followed.
func parseSetupCfg(_ string, b []byte) (manifest, error) {
	md := iniSection(b, "metadata")
	val := func(keys ...string) string {
		for _, k := range keys {
			v := md[k]
			if v != "" && !strings.HasPrefix(v, "file:") && !strings.HasPrefix(v, "attr:") {
				return v
			}
		}
		return ""
	}
	m := manifest{name: val("name"), description: val("description", "summary")}
	for kw := range strings.FieldsFuncSeq(val("keywords"), func(r rune) bool { return r == ',' || r == '\n' }) {
		m.keywords = append(m.keywords, kw)
	}
	m.packages = nonEmpty(m.name)
	return m, nil
}

// iniSection returns the keys of one section of an INI file, lower-cased
// with '-' read as '_' (as setuptools does). Indented lines continue the
// previous value.
func iniSection(b []byte, want string) map[string]string {
	out := make(map[string]string)
	in, key := false, ""
	for line := range strings.Lines(string(b)) {
		line = strings.TrimRight(line, " \t\r\n")
		t := strings.TrimSpace(line)
		switch {
		case t == "" || t[0] == '#' || t[0] == ';':
			key = ""
		case t[0] == '[':
			name, _, _ := strings.Cut(t[1:], "]")
			in, key = strings.EqualFold(strings.TrimSpace(name), want), ""
		case !in:
		case line[0] == ' ' || line[0] == '\t':
			if key != "" {
				out[key] = strings.TrimSpace(out[key] + "\n" + t)
			}
		default:
			i := strings.IndexAny(t, "=:")
			if i <= 0 {
				key = ""
				continue
			}
			key = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(t[:i])), "-", "_")
			out[key] = strings.TrimSpace(t[i+1:])
		}
	}
	return out
}

// xmlDecoder is a lenient decoder for manifests: HTML entities are known,
// and a declared charset is read as is (text is cleaned later anyway).
func xmlDecoder(b []byte) *xml.Decoder {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = false
	d.Entity = xml.HTMLEntity
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	return d
}

// unresolved reports a value that is a build-tool expression (${x}, $(x)),
// which we never evaluate.
func unresolved(s string) bool {
	return strings.Contains(s, "${") || strings.Contains(s, "$(") || strings.Contains(s, "#{")
}

func literal(s string) string {
	s = strings.TrimSpace(s)
	if unresolved(s) {
		return ""
	}
	return s
}

// parsePom reads the project's own coordinates; the groupId may come from
// <parent>.
func parsePom(_ string, b []byte) (manifest, error) {
	var p struct {
		XMLName     xml.Name
		GroupID     string `xml:"groupId"`
		ArtifactID  string `xml:"artifactId"`
		Name        string `xml:"name"`
		Description string `xml:"description"`
		Parent      struct {
			GroupID string `xml:"groupId"`
		} `xml:"parent"`
	}
	if err := xmlDecoder(b).Decode(&p); err != nil {
		return manifest{}, err
	}
	if p.XMLName.Local != "project" {
		return manifest{}, errors.New("root element is not <project>")
	}
	group, artifact := cmp(literal(p.GroupID), literal(p.Parent.GroupID)), literal(p.ArtifactID)
	m := manifest{name: cmp(literal(p.Name), artifact), description: literal(p.Description)}
	if group != "" && artifact != "" {
		m.packages = append(m.packages, group+":"+artifact)
	}
	m.packages = append(m.packages, nonEmpty(artifact)...)
	return m, nil
}

// parseCsproj reads the first PackageId, AssemblyName, Description and
// PackageTags; the assembly name defaults to the file name, as in MSBuild.
func parseCsproj(file string, b []byte) (manifest, error) {
	var p struct {
		XMLName xml.Name
		Groups  []struct {
			PackageID    string `xml:"PackageId"`
			AssemblyName string `xml:"AssemblyName"`
			Description  string `xml:"Description"`
			PackageTags  string `xml:"PackageTags"`
		} `xml:"PropertyGroup"`
	}
	if err := xmlDecoder(b).Decode(&p); err != nil {
		return manifest{}, err
	}
	if p.XMLName.Local != "Project" {
		return manifest{}, errors.New("root element is not <Project>")
	}
	var id, asm, desc, tags string
	for _, g := range p.Groups {
		id, asm = cmp(id, literal(g.PackageID)), cmp(asm, literal(g.AssemblyName))
		desc, tags = cmp(desc, literal(g.Description)), cmp(tags, literal(g.PackageTags))
	}
	asm = cmp(asm, strings.TrimSuffix(filepath.Base(file), ".csproj"))
	m := manifest{name: cmp(id, asm), description: desc, packages: nonEmpty(id, asm)}
	for t := range strings.FieldsFuncSeq(tags, func(r rune) bool { return r == ';' || r == ',' }) {
		m.keywords = append(m.keywords, strings.TrimSpace(t))
	}
	return m, nil
}

// quoted matches a one-line string literal, "..." or '...'; the value is in
// group 1 or 2.
const quoted = `(?:"([^"\n]*)"|'([^'\n]*)')`

var (
	gradleName  = regexp.MustCompile(`(?m)^\s*rootProject\.name\s*=\s*` + quoted)
	gradleGroup = regexp.MustCompile(`(?m)^\s*(?:project\.)?group\s*(?:=\s*|\s)` + quoted)
	gradleDesc  = regexp.MustCompile(`(?m)^\s*(?:project\.)?description\s*(?:=\s*|\s)` + quoted)
	gemAttr     = regexp.MustCompile(`(?m)^\s*\w+\.(name|summary|description)\s*=\s*(?:` + quoted + `|%q\{([^}\n]*)\})`)
)

// firstLiteral returns the first literal value re matches in b.
func firstLiteral(re *regexp.Regexp, b []byte) string {
	sm := re.FindSubmatch(b)
	if sm == nil {
		return ""
	}
	return literal(string(sm[1]) + string(sm[2]))
}

// parseGradle reads rootProject.name from settings.gradle(.kts) and group
// and description from build.gradle(.kts) with patterns; the scripts are
// never evaluated.
func parseGradle(settings, build []byte) manifest {
	name, group := firstLiteral(gradleName, settings), firstLiteral(gradleGroup, build)
	m := manifest{name: name, description: firstLiteral(gradleDesc, build)}
	if group != "" && name != "" {
		m.packages = append(m.packages, group+":"+name)
	}
	m.packages = append(m.packages, nonEmpty(name)...)
	return m
}

// parseGemspec reads `x.name = "..."`, `x.summary`, `x.description` with a
// pattern; the Ruby is never evaluated.
func parseGemspec(_ string, b []byte) (manifest, error) {
	attrs := map[string]string{}
	for _, sm := range gemAttr.FindAllSubmatch(b, -1) {
		k := string(sm[1])
		if _, seen := attrs[k]; !seen {
			attrs[k] = literal(string(sm[2]) + string(sm[3]) + string(sm[4]))
		}
	}
	if len(attrs) == 0 {
		return manifest{}, errors.New("no name, summary or description")
	}
	m := manifest{name: attrs["name"], description: cmp(attrs["description"], attrs["summary"])}
	m.packages = nonEmpty(m.name)
	return m, nil
}

// parsePubspec reads the top-level name: and description: lines of
// pubspec.yaml, with their indented continuation lines; it is not a YAML
// parser.
func parsePubspec(_ string, b []byte) (manifest, error) {
	var m manifest
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t\r")
		key, val, ok := strings.Cut(line, ":")
		if !ok || (key != "name" && key != "description") {
			continue
		}
		val = strings.TrimSpace(val)
		block := val != "" && (val[0] == '>' || val[0] == '|')
		if block {
			val = ""
		} else {
			val = yamlScalar(val)
		}
		// Indented (or blank) lines continue the value.
		for i+1 < len(lines) {
			next := strings.TrimRight(lines[i+1], " \t\r")
			if next != "" && next[0] != ' ' && next[0] != '\t' {
				break
			}
			i++
			if !block && strings.TrimSpace(next) == "" {
				break
			}
			val += " " + strings.TrimSpace(next)
		}
		if key == "name" && m.name == "" {
			m.name = val
		} else if key == "description" && m.description == "" {
			m.description = val
		}
	}
	if m.name == "" && m.description == "" {
		return manifest{}, errors.New("no top-level name or description")
	}
	m.packages = nonEmpty(m.name)
	return m, nil
}

// yamlScalar reads a one-line YAML scalar: quoted, or plain up to a comment.
func yamlScalar(v string) string {
	switch {
	case strings.HasPrefix(v, `"`):
		if end := strings.LastIndexByte(v, '"'); end > 0 {
			if u, err := strconv.Unquote(v[:end+1]); err == nil {
				return u
			}
			return v[1:end]
		}
	case strings.HasPrefix(v, "'"):
		if end := strings.LastIndexByte(v, '\''); end > 0 {
			return strings.ReplaceAll(v[1:end], "''", "'")
		}
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}
