package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// asset is one file of the release, with its checksum.
type asset struct {
	name         string // file name under the release directory
	goos, goarch string
	kind         string // "archive" or "mcpb"
	sha256       string
}

// entry is one file inside an archive.
type entry struct {
	name string // slash path inside the archive
	mode fs.FileMode
	body []byte
}

// pack writes the archive and the MCP bundle of one platform.
func pack(o options, goos, goarch, bin, extras string) ([]asset, error) {
	base := fmt.Sprintf("cgcat_%s_%s_%s", strings.TrimPrefix(o.version, "v"), goos, goarch)
	binBody, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	exeName := "cgcat" + exe(goos)
	files := []entry{{name: exeName, mode: 0o755, body: binBody}}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		return nil, err
	}
	files = append(files, entry{name: "README.md", mode: 0o644, body: readme})
	err = filepath.WalkDir(extras, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(extras, p)
		b, err := os.ReadFile(p)
		files = append(files, entry{name: filepath.ToSlash(rel), mode: 0o644, body: b})
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(files[2:], func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var body []byte
	name := base + ".tar.gz"
	if goos == "windows" {
		name = base + ".zip"
		body, err = zipOf(base, files)
	} else {
		body, err = tarGzOf(base, files)
	}
	if err != nil {
		return nil, err
	}
	arch, err := writeAsset(o.out, name, body, goos, goarch, "archive")
	if err != nil {
		return nil, err
	}
	mb, err := mcpbOf(o, exeName, binBody)
	if err != nil {
		return nil, err
	}
	bundle, err := writeAsset(o.out, base+".mcpb", mb, goos, goarch, "mcpb")
	if err != nil {
		return nil, err
	}
	return []asset{arch, bundle}, nil
}

func writeAsset(dir, name string, body []byte, goos, goarch, kind string) (asset, error) {
	sum := sha256.Sum256(body)
	return asset{name: name, goos: goos, goarch: goarch, kind: kind, sha256: hex.EncodeToString(sum[:])}, writeFile(filepath.Join(dir, name), body)
}

// modTime is the time every archive entry carries (the same bytes for the
// same inputs).
var modTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// tarGzOf packs files under the directory base.
func tarGzOf(base string, files []entry) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		hdr := &tar.Header{Name: path.Join(base, f.name), Mode: int64(f.mode), Size: int64(len(f.body)), ModTime: modTime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipOf packs files under the directory base ("" for the top level).
func zipOf(base string, files []entry) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		hdr := &zip.FileHeader{Name: path.Join(base, f.name), Method: zip.Deflate, Modified: modTime}
		hdr.SetMode(f.mode)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.body); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// mcpbOf is an MCP bundle: a zip with manifest.json and the binary at its
// top level, started as `cgcat serve`.
func mcpbOf(o options, exeName string, bin []byte) ([]byte, error) {
	manifest := map[string]any{
		"manifest_version": "0.2",
		"name":             "cgcat",
		"version":          strings.TrimPrefix(o.version, "v"),
		"description":      "Finds the local projects CodeGraph indexed and hands their exact root path to coding agents",
		"author":           map[string]string{"name": "cgcat"},
		"repository":       map[string]string{"type": "git", "url": repoURL},
		"server": map[string]any{
			"type":        "binary",
			"entry_point": exeName,
			"mcp_config":  map[string]any{"command": "${__dirname}/" + exeName, "args": []string{"serve"}},
		},
		"tools": []map[string]string{
			{"name": "local_codegraph_projects", "description": "Find local CodeGraph-indexed projects and their root paths"},
			{"name": "local_codegraph_resolve", "description": "Current path and state of a project id"},
		},
	}
	mb, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		return nil, err
	}
	return zipOf("", []entry{{name: "manifest.json", mode: 0o644, body: append(mb, '\n')}, {name: exeName, mode: 0o755, body: bin}})
}

// writeSums writes SHA256SUMS in sha256sum's format.
func writeSums(dir string, assets []asset) error {
	var b strings.Builder
	for _, a := range assets {
		fmt.Fprintf(&b, "%s  %s\n", a.sha256, a.name)
	}
	return writeFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()))
}
