// Package local holds the words every part of cgcat shares about the local
// catalog: a discovered project and its metadata ([Project], [Metadata]),
// what a direct check showed ([Availability], [IndexState]), how far
// discovery got ([ScanState], [Coverage], [Gap]), the last word from GBrain
// ([GBrainContact]), a GBrain card as the mirror keeps it ([Card]), and the
// two small contracts the answering side and the GBrain side meet on
// ([Recall], [CardLookup]): they live here, below both, so neither imports
// the other. [Printable] makes a name safe to print on a terminal.
//
// The work is done by the packages below it, one job each: config (the
// config file, R1–R7), pathid (path identity), nofollow (opening
// directories with no symlink in the path), marker (what a project is),
// meta (bounded metadata reading), lease (one process per job), scan
// (discovery), store (the LevelDB catalog and its key space), view (the
// published copy readers follow), search (ranking), catalog (the read model
// every answer comes from), refresh (the discovery loop, and following the
// disk), watch (file events) and fixture (test helpers).
//
// Nothing under local speaks MCP, talks to GBrain, runs a project's code or
// opens a CodeGraph database, and nothing here imports a package outside
// local/: the GBrain side (projection) and the answering side (server)
// build on it, never the other way round.
package local

import "time"

// Availability is what a direct check of a project's root last showed.
type Availability string

const (
	Present      Availability = "present"      // root and marker were there
	Missing      Availability = "missing"      // a direct re-check found root or marker gone
	Inaccessible Availability = "inaccessible" // the check was refused (permission, offline volume)
	Unknown      Availability = "unknown"      // never checked directly
)

// IndexState says only what we can observe of a CodeGraph index: that the
// marker file exists. It never claims the index is healthy or fresh (R13).
type IndexState string

const (
	MarkerPresent IndexState = "marker_present"
	MarkerMissing IndexState = "marker_missing"
	MarkerUnknown IndexState = "unknown"
)

// FreshnessUnknown is the only freshness we can honestly report: we have no
// channel to the index's contents.
const FreshnessUnknown = "unknown"

// Project is one catalog record: a stable id bound to a canonical root.
type Project struct {
	ID             string       `json:"id"`
	Root           string       `json:"root"` // canonical, absolute, on-disk spelling
	RecordRevision uint64       `json:"recordRevision"`
	Meta           Metadata     `json:"meta"`
	MetaHash       uint64       `json:"metaHash"` // xxh3 of the stable metadata; a change bumps RecordRevision
	Availability   Availability `json:"availability"`
	Why            string       `json:"why,omitempty"` // why not present: "root gone", "permission denied", ...
	IndexState     IndexState   `json:"indexState"`
	FirstSeen      time.Time    `json:"firstSeen"`
	LastSeen       time.Time    `json:"lastSeen"`    // last time a scan saw the marker
	ValidatedAt    time.Time    `json:"validatedAt"` // last direct check of root + marker
	// Changed is the catalogRevision that last touched this record.
	Changed uint64 `json:"changed"`

	// DBID is the file identity (device and inode; a file id on Windows) of
	// its .codegraph/codegraph.db when last seen: a new root holding the
	// same database is this index moved (MovedTo).
	DBID string `json:"dbId,omitempty"`
	// Lineage is the identity of every directory from the discovery root
	// down to the project root, as the walk saw them, so a deny root also
	// hides a project reached through an alias of it (bind mount, junction).
	Lineage []string `json:"lineage,omitempty"`
	// MovedTo is the id of the record this index moved to, once known.
	MovedTo string `json:"movedTo,omitempty"`
	// MissingSince is when a direct check first found it missing.
	MissingSince time.Time `json:"missingSince,omitzero"`
	// MetaStamp fingerprints the files its metadata was read from (names,
	// sizes, modification times): metadata is read again only when it moves.
	MetaStamp uint64 `json:"metaStamp,omitempty"`
}

// Metadata is what bounded reading of a project's own files gave (R12).
// Every string is already stripped of control characters and length-bounded.
type Metadata struct {
	Name        string   `json:"name,omitempty"`        // best display name (manifest, hint file, else folder name)
	Description string   `json:"description,omitempty"` // manifest or hint-file description
	Packages    []string `json:"packages,omitempty"`    // package / module names declared by manifests
	Version     string   `json:"version,omitempty"`     // release declared by the first manifest that has one
	Keywords    []string `json:"keywords,omitempty"`
	Aliases     []string `json:"aliases,omitempty"` // from codegraph/project.json
	Tags        []string `json:"tags,omitempty"`    // from codegraph/project.json
	Related     []string `json:"related,omitempty"` // from codegraph/project.json
	Readme      string   `json:"readme,omitempty"`  // first meaningful README paragraph, markdown stripped
	Manifests   []string `json:"manifests,omitempty"`
	Git         GitInfo  `json:"git,omitzero"`
	// Problems are diagnostics (a hint file that did not parse, a manifest
	// over the size bound). They never change sharing or discovery.
	Problems []string `json:"problems,omitempty"`
}

// GitInfo is read from files under .git, never by running git.
type GitInfo struct {
	Remote   string `json:"remote,omitempty"`   // origin URL with any credentials removed
	Branch   string `json:"branch,omitempty"`   // current branch, or "" when detached
	Head     string `json:"head,omitempty"`     // commit id when detached
	Worktree bool   `json:"worktree,omitempty"` // a linked worktree (.git is a file)
	// CommonDir is the repository's git directory when it lies outside the
	// project: a linked worktree's main .git, a submodule's or a separate
	// git dir named by a .git file. Answers show the branch only when the
	// sharing view holds it (a git dir outside the view lends no branch).
	CommonDir string `json:"commonDir,omitempty"`
}
