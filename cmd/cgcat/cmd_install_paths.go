package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/cgcat/cgcat/local"
)

// Where each host keeps its files (from this process's environment, the
// same variables the hosts read), and what install leaves in cgcat's own
// state directory: one folder of backups per host, and the record of the
// files and folders install created, so that uninstall can take away what
// it made and left empty.

// keepBackups is how many backups of one file a host's folder keeps.
const keepBackups = 5

// hostEnv is the environment hosts read their locations from.
func hostEnv() hostconfig.Env {
	home, _ := os.UserHomeDir()
	return hostconfig.Env{Home: home, Getenv: os.Getenv}
}

// hostFile returns the file to edit for h and whether it exists.
func hostFile(h *hostconfig.Host, env hostconfig.Env, project string) (path string, exists bool, err error) {
	if path, err = h.ConfigFile(env, project); err != nil {
		return "", false, err
	}
	_, serr := os.Stat(path)
	switch {
	case serr == nil:
		return path, true, nil
	case errors.Is(serr, fs.ErrNotExist):
		return path, false, nil
	}
	return "", false, serr
}

// stateDir is cgcat's state directory: $XDG_STATE_HOME/cgcat, else
// ~/.local/state/cgcat ("" without a home directory).
func stateDir() string {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "cgcat")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "cgcat")
}

// backupsOf is where the backups of h's files go: its own folder under
// the state directory, keeping the last few of each file (next to the file
// when there is no state directory).
func backupsOf(h *hostconfig.Host) hostconfig.Backups {
	dir := stateDir()
	if dir == "" {
		return hostconfig.Backups{}
	}
	return hostconfig.Backups{Dir: filepath.Join(dir, "backups", h.Name), Keep: keepBackups}
}

// created is what install made for one host: folders and files that did
// not exist before.
type created struct {
	Dirs  []string `json:"dirs,omitempty"`
	Files []string `json:"files,omitempty"`
	// Keys are members install added to a user's JSON file.
	Keys []createdKey `json:"keys,omitempty"`
}

// createdKey: install's edit of File created the member Path[:Created]
// (and what is below it, down to Path).
type createdKey struct {
	File    string   `json:"file"`
	Path    []string `json:"path"`
	Created int      `json:"created"`
}

func createdFile(h *hostconfig.Host) string {
	dir := stateDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "installed", h.Name+".json")
}

func loadCreated(h *hostconfig.Host) created {
	var c created
	if p := createdFile(h); p != "" {
		if b, err := os.ReadFile(p); err == nil {
			_ = json.Unmarshal(b, &c) // a damaged record forgets, it never removes more
		}
	}
	return c
}

func saveCreated(h *hostconfig.Host, c created) error {
	p := createdFile(h)
	if p == "" {
		return nil
	}
	if len(c.Dirs) == 0 && len(c.Files) == 0 && len(c.Keys) == 0 {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		_ = os.Remove(filepath.Dir(p)) // only when empty
		return nil
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".installed-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// recordCreated adds folders and files to h's record.
func recordCreated(h *hostconfig.Host, dirs, files []string) error {
	if len(dirs) == 0 && len(files) == 0 {
		return nil
	}
	c := loadCreated(h)
	for _, d := range dirs {
		if !slices.Contains(c.Dirs, d) {
			c.Dirs = append(c.Dirs, d)
		}
	}
	for _, f := range files {
		if !slices.Contains(c.Files, f) {
			c.Files = append(c.Files, f)
		}
	}
	if err := saveCreated(h, c); err != nil {
		return fmt.Errorf("recording what install created: %w", err)
	}
	return nil
}

func wasCreated(h *hostconfig.Host, file string) bool {
	return slices.Contains(loadCreated(h).Files, file)
}

// mkdirRecorded creates dir and its missing parents with mode and returns
// the folders it created.
func mkdirRecorded(dir string, mode fs.FileMode) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, mode); err != nil {
		return nil, err
	}
	return missing, nil
}

// removeCreatedFile removes a file install created (after a backup) and
// forgets it.
func removeCreatedFile(h *hostconfig.Host, path string, o *installOptions) (backup string, err error) {
	now := time.Now
	if o.now != nil {
		now = o.now
	}
	if backup, err = hostconfig.RemoveWithBackup(path, now(), backupsOf(h)); err != nil {
		return backup, fmt.Errorf("%s: %w", path, err)
	}
	c := loadCreated(h)
	c.Files = slices.DeleteFunc(c.Files, func(f string) bool { return f == path })
	return backup, saveCreated(h, c)
}

// removeCreatedDirs removes the folders install created that are empty
// now, deepest first, and forgets what no longer exists.
func removeCreatedDirs(h *hostconfig.Host, out io.Writer) error {
	c := loadCreated(h)
	if len(c.Dirs) == 0 && len(c.Files) == 0 && len(c.Keys) == 0 {
		return nil
	}
	dirs := slices.Clone(c.Dirs)
	slices.SortFunc(dirs, func(a, b string) int {
		return strings.Count(b, string(filepath.Separator)) - strings.Count(a, string(filepath.Separator))
	})
	for _, d := range dirs {
		if ents, err := os.ReadDir(d); err == nil && len(ents) == 0 && os.Remove(d) == nil {
			fmt.Fprintf(out, "removed the empty folder %s, which cgcat's install had created\n", local.Printable(d))
		}
	}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	c.Dirs = slices.DeleteFunc(c.Dirs, func(d string) bool { return !exists(d) })
	c.Files = slices.DeleteFunc(c.Files, func(f string) bool { return !exists(f) })
	c.Keys = slices.DeleteFunc(c.Keys, func(k createdKey) bool { return !exists(k.File) })
	return saveCreated(h, c)
}

// recordKey notes that install's edit of file created the member at
// path[:len(missing)] (missing is what MissingPath found before the edit).
func recordKey(h *hostconfig.Host, file string, path, missing []string) error {
	if len(missing) == 0 {
		return nil
	}
	c := loadCreated(h)
	k := createdKey{File: file, Path: path, Created: len(missing)}
	if !slices.ContainsFunc(c.Keys, func(o createdKey) bool { return o.File == file && slices.Equal(o.Path, path) }) {
		c.Keys = append(c.Keys, k)
	}
	return saveCreated(h, c)
}

// pruneRecorded takes away from after (file's content once cgcat's entry
// or rule is gone) the members install created at path and left empty,
// and forgets them. A file that cannot be pruned is left as after.
func pruneRecorded(h *hostconfig.Host, file string, path []string, after []byte) []byte {
	c := loadCreated(h)
	i := slices.IndexFunc(c.Keys, func(k createdKey) bool { return k.File == file && slices.Equal(k.Path, path) })
	if i < 0 {
		return after
	}
	out, changed, err := hostconfig.PruneEmpty(after, path, c.Keys[i].Created)
	if err != nil || !changed {
		return after
	}
	c.Keys = slices.Delete(c.Keys, i, i+1)
	if saveCreated(h, c) != nil {
		return after
	}
	return out
}
