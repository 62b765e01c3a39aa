package meta

import (
	"bytes"
	"cmp"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// parsePackageJSON reads package.json and composer.json: name, description
// and keywords, each taken only when it has the expected JSON type.
func parsePackageJSON(file string, b []byte) (manifest, error) {
	var v struct {
		Name        json.RawMessage `json:"name"`
		Description json.RawMessage `json:"description"`
		Keywords    json.RawMessage `json:"keywords"`
		Version     json.RawMessage `json:"version"`
		// TypeScript's marks: declarations shipped, or the compiler used.
		Types, Typings  json.RawMessage
		Dependencies    map[string]json.RawMessage `json:"dependencies"`
		DevDependencies map[string]json.RawMessage `json:"devDependencies"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return manifest{}, err
	}
	m := manifest{
		name:        jsonString(v.Name),
		description: jsonString(v.Description),
		keywords:    jsonStrings(v.Keywords),
		version:     jsonString(v.Version),
	}
	m.packages = nonEmpty(m.name)
	if file == "composer.json" {
		return withLanguage(m, langPHP), nil
	}
	m = withLanguage(m, langJavaScript)
	_, dep := v.Dependencies["typescript"]
	_, dev := v.DevDependencies["typescript"]
	if dep || dev || jsonString(v.Types) != "" || jsonString(v.Typings) != "" {
		m = withLanguage(m, langTypeScript)
	}
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
		version:     cmp.Or(str(pkg["version"]), str(ws["version"])),
	}
	if m.description == "" {
		m.description = str(ws["description"])
	}
	if m.keywords == nil {
		m.keywords = strs(ws["keywords"])
	}
	m.packages = nonEmpty(m.name)
	return withLanguage(m, langRust), nil
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
		name:        cmp.Or(str(proj["name"]), str(poetry["name"])),
		description: cmp.Or(str(proj["description"]), str(poetry["description"])),
		keywords:    append(strs(proj["keywords"]), strs(poetry["keywords"])...),
		version:     cmp.Or(str(proj["version"]), str(poetry["version"])),
	}
	m.packages = nonEmpty(m.name)
	return withLanguage(m, langPython), nil
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
		return withLanguage(manifest{name: modName(path), packages: []string{path}}, langGo), nil
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
	m := manifest{name: val("name"), description: val("description", "summary"), version: val("version")}
	for kw := range strings.FieldsFuncSeq(val("keywords"), func(r rune) bool { return r == ',' || r == '\n' }) {
		m.keywords = append(m.keywords, kw)
	}
	m.packages = nonEmpty(m.name)
	return withLanguage(m, langPython), nil
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
		Version     string `xml:"version"`
		Parent      struct {
			GroupID string `xml:"groupId"`
			Version string `xml:"version"`
		} `xml:"parent"`
	}
	if err := xmlDecoder(b).Decode(&p); err != nil {
		return manifest{}, err
	}
	if p.XMLName.Local != "project" {
		return manifest{}, errors.New("root element is not <project>")
	}
	group, artifact := cmp.Or(literal(p.GroupID), literal(p.Parent.GroupID)), literal(p.ArtifactID)
	m := manifest{name: cmp.Or(literal(p.Name), artifact), description: literal(p.Description),
		version: cmp.Or(literal(p.Version), literal(p.Parent.Version))}
	if group != "" && artifact != "" {
		m.packages = append(m.packages, group+":"+artifact)
	}
	m.packages = append(m.packages, nonEmpty(artifact)...)
	return withLanguage(m, langJava), nil
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
			Version      string `xml:"Version"`
			PackageVer   string `xml:"PackageVersion"`
		} `xml:"PropertyGroup"`
	}
	if err := xmlDecoder(b).Decode(&p); err != nil {
		return manifest{}, err
	}
	if p.XMLName.Local != "Project" {
		return manifest{}, errors.New("root element is not <Project>")
	}
	var id, asm, desc, tags, version string
	for _, g := range p.Groups {
		id, asm = cmp.Or(id, literal(g.PackageID)), cmp.Or(asm, literal(g.AssemblyName))
		desc, tags = cmp.Or(desc, literal(g.Description)), cmp.Or(tags, literal(g.PackageTags))
		version = cmp.Or(version, literal(g.PackageVer), literal(g.Version))
	}
	asm = cmp.Or(asm, strings.TrimSuffix(filepath.Base(file), ".csproj"))
	m := manifest{name: cmp.Or(id, asm), description: desc, packages: nonEmpty(id, asm), version: version}
	for t := range strings.FieldsFuncSeq(tags, func(r rune) bool { return r == ';' || r == ',' }) {
		m.keywords = append(m.keywords, strings.TrimSpace(t))
	}
	return withLanguage(m, langCSharp), nil
}
