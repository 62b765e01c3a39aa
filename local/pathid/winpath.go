package pathid

import "strings"

// Windows path syntax as pure string logic, so it is tested on every
// platform. It follows the Win32 rules a path goes through before it
// reaches the file system; anything that needs the file system (8.3 short
// names, junctions, mapped drives, a server's other names) is Canonical's
// job on Windows.

// winParse splits p into a volume (upper-cased: drive letters, server and
// share names are case-insensitive everywhere), whether p is absolute, and
// its cleaned segments.
func winParse(p string) (vol string, abs bool, segs []string) {
	// \\?\ (and the NT form \??\) pass the rest to the file system as is;
	// \\.\ and //?/ are device paths that still get Win32 normalisation.
	verbatim := strings.HasPrefix(p, `\\?\`) || strings.HasPrefix(p, `\??\`)
	s := strings.ReplaceAll(p, "/", `\`)
	var rest string
	switch {
	case strings.HasPrefix(s, `\\?\`) || strings.HasPrefix(s, `\\.\`) || strings.HasPrefix(s, `\??\`):
		d := s[4:]
		switch {
		case strings.EqualFold(d, "UNC"):
			vol, abs, rest = winUNC("") // no server: not a root
		case len(d) >= 4 && strings.EqualFold(d[:4], `UNC\`):
			vol, abs, rest = winUNC(d[4:])
		case winDrive(d):
			vol, abs, rest = strings.ToUpper(d[:2]), true, d[2:]
		default:
			// A device or volume GUID path: \\?\Volume{...}\x, \\.\pipe\x.
			// Both prefixes reach the same namespace.
			dev, r, _ := strings.Cut(d, `\`)
			vol, abs, rest = `\\?\`+foldString(dev), dev != "", r
		}
	case strings.HasPrefix(s, `\\`):
		vol, abs, rest = winUNC(s[2:])
	case winDrive(s):
		vol, rest = strings.ToUpper(s[:2]), s[2:]
		abs = strings.HasPrefix(rest, `\`) // "C:x" is relative to C:'s cwd
	case strings.HasPrefix(s, `\`):
		vol, rest = "", s // rooted on the current drive: not absolute
	default:
		rest = s
	}
	rooted := abs || strings.HasPrefix(rest, `\`)
	for _, seg := range strings.Split(rest, `\`) {
		switch seg {
		case "", ".":
			continue
		case "..":
			if len(segs) > 0 && segs[len(segs)-1] != ".." {
				segs = segs[:len(segs)-1]
			} else if !rooted {
				segs = append(segs, "..")
			}
			continue
		}
		// A colon cannot occur in a Win32 name: what follows it names a
		// stream of the file before it (dir::$INDEX_ALLOCATION is dir).
		seg, _, _ = strings.Cut(seg, ":")
		if !verbatim {
			// Win32 drops trailing dots and spaces, so "private." and
			// "private " open "private".
			if t := strings.TrimRight(seg, ". "); t != "" {
				seg = t
			}
		}
		if seg == "" {
			continue
		}
		segs = append(segs, seg)
	}
	return vol, abs, segs
}

func winDrive(s string) bool {
	return len(s) >= 2 && s[1] == ':' && ('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z')
}

// winUNC parses "server\share\rest". The share is part of the root: a
// path needs both to be absolute. The local administrative shares
// (\\localhost\C$) are the drives themselves.
func winUNC(s string) (vol string, abs bool, rest string) {
	server, r, _ := strings.Cut(s, `\`)
	share, rest, _ := strings.Cut(r, `\`)
	srv, shr := foldString(server), foldString(share)
	if (srv == "LOCALHOST" || srv == "127.0.0.1") && len(shr) == 2 && shr[1] == '$' && 'A' <= shr[0] && shr[0] <= 'Z' {
		return shr[:1] + ":", true, rest
	}
	return `\\` + srv + `\` + shr, server != "" && share != "", rest
}

func (r Rules) winKey(p string) string {
	vol, abs, segs := winParse(p)
	for i, s := range segs {
		if s != ".." {
			segs[i] = r.name(s)
		}
	}
	body := strings.Join(segs, `\`)
	switch {
	case abs:
		return vol + `\` + body
	case vol != "": // "C:x", or a UNC path without share
		return vol + body
	case strings.HasPrefix(strings.ReplaceAll(p, "/", `\`), `\`):
		return `\` + body
	case body == "":
		return "."
	}
	return body
}
