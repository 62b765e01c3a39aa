package meta

import (
	"cmp"
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// quoted matches a one-line string literal, "..." or '...'; the value is in
// group 1 or 2.
const quoted = `(?:"([^"\n]*)"|'([^'\n]*)')`

var (
	gradleName  = regexp.MustCompile(`(?m)^\s*rootProject\.name\s*=\s*` + quoted)
	gradleGroup = regexp.MustCompile(`(?m)^\s*(?:project\.)?group\s*(?:=\s*|\s)` + quoted)
	gradleDesc  = regexp.MustCompile(`(?m)^\s*(?:project\.)?description\s*(?:=\s*|\s)` + quoted)
	gradleVer   = regexp.MustCompile(`(?m)^\s*(?:project\.)?version\s*(?:=\s*|\s)` + quoted)
	// flutterSDK is a dependency on the Flutter SDK (sdk: flutter).
	flutterSDK = regexp.MustCompile(`(?m)^\s+sdk:\s*flutter\s*$`)
	// kotlinPlugin is the Kotlin Gradle plugin, however it is applied.
	kotlinPlugin = regexp.MustCompile(`(?m)^\s*(?:kotlin\(\s*"|id\s*\(?\s*["']org\.jetbrains\.kotlin|apply\s+plugin:\s*["']kotlin)`)
	gemAttr      = regexp.MustCompile(`(?m)^\s*\w+\.(name|summary|description|version)\s*=\s*(?:` + quoted + `|%q\{([^}\n]*)\})`)
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
	m := manifest{name: name, description: firstLiteral(gradleDesc, build), version: firstLiteral(gradleVer, build)}
	if group != "" && name != "" {
		m.packages = append(m.packages, group+":"+name)
	}
	m.packages = append(m.packages, nonEmpty(name)...)
	m = withLanguage(m, langJava)
	if kotlinPlugin.Match(build) || kotlinPlugin.Match(settings) {
		m = withLanguage(m, langKotlin)
	}
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
	m := manifest{name: attrs["name"], description: cmp.Or(attrs["description"], attrs["summary"]), version: attrs["version"]}
	m.packages = nonEmpty(m.name)
	return withLanguage(m, langRuby), nil
}

// parsePubspec reads the top-level name:, description: and version: lines of
// pubspec.yaml, with their indented continuation lines; it is not a YAML
// parser.
func parsePubspec(_ string, b []byte) (manifest, error) {
	var m manifest
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t\r")
		key, val, ok := strings.Cut(line, ":")
		if !ok || (key != "name" && key != "description" && key != "version") {
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
		switch {
		case key == "name" && m.name == "":
			m.name = val
		case key == "description" && m.description == "":
			m.description = val
		case key == "version" && m.version == "":
			m.version = val
		}
	}
	if m.name == "" && m.description == "" {
		return manifest{}, errors.New("no top-level name or description")
	}
	m.packages = nonEmpty(m.name)
	m = withLanguage(m, langDart)
	if flutterSDK.Match(b) {
		m = withLanguage(m, langFlutter)
	}
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
