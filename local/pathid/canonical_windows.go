//go:build windows

package pathid

import (
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

func canonical(p string) (string, error) {
	p = filepath.Clean(p) // Win32 resolves ".." lexically too
	if fp, err := finalPathName(p); err == nil {
		return fp, nil
	}
	c, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	return onDiskSpelling(osFS{}, filepath.Clean(c))
}

// finalPathName asks Windows for the path of the open file: symlinks and
// junctions resolved, 8.3 short names expanded, names in their on-disk
// case, drive letters for local volumes. It fails for volumes mounted
// without a drive letter; the caller falls back to EvalSymlinks.
func finalPathName(p string) (string, error) {
	h, err := openForQuery(p)
	if err != nil {
		return "", err
	}
	defer windows.CloseHandle(h)
	const flags = 0 // FILE_NAME_NORMALIZED | VOLUME_NAME_DOS
	buf := make([]uint16, 512)
	for {
		n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), flags)
		if err != nil {
			return "", err
		}
		if int(n) < len(buf) {
			return stripVerbatim(windows.UTF16ToString(buf[:n])), nil
		}
		buf = make([]uint16, n+1)
	}
}

// stripVerbatim turns \\?\C:\x into C:\x and \\?\UNC\srv\share\x into
// \\srv\share\x, the forms users write and Rules compare.
func stripVerbatim(s string) string {
	if rest, ok := strings.CutPrefix(s, `\\?\`); ok {
		if len(rest) >= 4 && strings.EqualFold(rest[:4], `UNC\`) {
			return `\\` + rest[4:]
		}
		if winDrive(rest) {
			return rest
		}
	}
	return s
}

// openForQuery opens a file or directory (following reparse points) with
// no right but reading attributes.
func openForQuery(p string) (windows.Handle, error) {
	// Past MAX_PATH only the verbatim form opens.
	if len(p) >= 248 {
		switch {
		case strings.HasPrefix(p, `\\?\`), strings.HasPrefix(p, `\\.\`):
		case strings.HasPrefix(p, `\\`):
			p = `\\?\UNC\` + p[2:]
		default:
			p = `\\?\` + p
		}
	}
	name, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return 0, err
	}
	return windows.CreateFile(name, windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
}
