package server

// SchemaVersion is the version of the envelope below (R17).
const SchemaVersion = 1

// Statuses (R22).
const (
	StatusOK             = "ok"
	StatusSetupRequired  = "setup_required"
	StatusNoMatches      = "no_matches"
	StatusCursorExpired  = "cursor_expired"
	StatusUnknownProject = "unknown_project"
	StatusRecordChanged  = "record_changed"
	StatusMissing        = "missing"
	StatusNotAvailable   = "not_available"
)

// GBrain states.
const (
	GBrainDisabled = "disabled"
	GBrainOK       = "ok"
	GBrainDegraded = "degraded"
)

// Envelope is the answer of both tools, field for field as R17 lists, plus a
// short message for statuses that need one.
type Envelope struct {
	SchemaVersion   int       `json:"schemaVersion"`
	Status          string    `json:"status"`
	Message         string    `json:"message,omitempty"`
	MachineID       string    `json:"machineId"`
	CatalogRevision uint64    `json:"catalogRevision"`
	ScanState       string    `json:"scanState"`
	Coverage        string    `json:"coverage"`
	Projects        []Project `json:"projects"`
	NextCursor      *string   `json:"nextCursor"`
	GBrainState     string    `json:"gbrainState"`
	// DidYouMean lists names close to a query that matched nothing (or
	// only approximately): names, aliases and package names of projects
	// this frontend may see, to search for instead.
	DidYouMean []string `json:"didYouMean,omitempty"`
	// Total is how many projects the whole listing holds for this view
	// (every page; historical candidates included). It lets the CLI say
	// "5 of 12"; it is not part of the tool's answer (R17).
	Total int `json:"-"`
}

// Project is one record as an agent sees it. ProjectPath is null (and
// Handoff absent) whenever the live re-check failed or paths are not exposed.
type Project struct {
	ProjectID              string   `json:"projectId"`
	RecordRevision         uint64   `json:"recordRevision"`
	Name                   string   `json:"name"`
	Description            string   `json:"description"`
	Reason                 []string `json:"reason"`
	ProjectPath            *string  `json:"projectPath"`
	Availability           string   `json:"availability"`
	IndexState             string   `json:"indexState"`
	Freshness              string   `json:"freshness"`
	ValidatedAt            string   `json:"validatedAt"`
	RevalidateAfterSeconds int      `json:"revalidateAfterSeconds"`
	Handoff                *Handoff `json:"handoff,omitempty"`
	// Beyond R17's fields: facts that help an agent tell look-alikes apart.
	Packages []string `json:"packages,omitempty"`
	// Version is the release its first manifest declares.
	Version   string `json:"version,omitempty"`
	Branch    string `json:"branch,omitempty"`
	Worktree  bool   `json:"worktree,omitempty"`
	Workspace string `json:"workspace,omitempty"` // "self": the caller's own workspace project; "related"
	Why       string `json:"why,omitempty"`       // why there is no path
	// MachineID is the machine of a historical project (a GBrain card of a
	// project that is not on this machine).
	MachineID string `json:"machineId,omitempty"`
	// MovedTo is the id of the record this project's index moved to.
	MovedTo string `json:"movedTo,omitempty"`
	// Warnings are problems met reading the project's files (a hint file
	// that does not parse); they never change what is shared.
	Warnings []string `json:"warnings,omitempty"`
	// Commit is the commit checked out now, read only for look-alikes
	// (where it tells clones apart).
	Commit string `json:"commit,omitempty"`
	// Lookalike puts this candidate beside the others of the answer that
	// share its name, a package or its repository.
	Lookalike *Lookalike `json:"lookalike,omitempty"`
}

// Handoff is the native CodeGraph call, built only from the checked path.
type Handoff struct {
	MCPServerHint     string            `json:"mcpServerHint"`
	ToolName          string            `json:"toolName"`
	Arguments         map[string]string `json:"arguments"`
	RequiredFromAgent []string          `json:"requiredFromAgent"`
}
