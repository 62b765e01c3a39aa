package server

// SchemaVersion is the version of the envelope below (seed 6.3).
const SchemaVersion = 1

// Statuses (R22, seed section 12).
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

// Envelope is the answer of both tools, field for field as seed 6.3, plus a
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
	// Beyond the seed: facts that help an agent tell look-alikes apart.
	Packages  []string `json:"packages,omitempty"`
	Branch    string   `json:"branch,omitempty"`
	Worktree  bool     `json:"worktree,omitempty"`
	Workspace string   `json:"workspace,omitempty"` // "self": the caller's own workspace project; "related"
	Why       string   `json:"why,omitempty"`       // why there is no path
	// MovedTo is the id of the record this project's index moved to.
	MovedTo string `json:"movedTo,omitempty"`
	// Warnings are problems met reading the project's files (a hint file
	// that does not parse); they never change what is shared.
	Warnings []string `json:"warnings,omitempty"`
}

// Handoff is the native CodeGraph call, built only from the checked path.
type Handoff struct {
	MCPServerHint     string            `json:"mcpServerHint"`
	ToolName          string            `json:"toolName"`
	Arguments         map[string]string `json:"arguments"`
	RequiredFromAgent []string          `json:"requiredFromAgent"`
}

// inputSchemaProjects and inputSchemaResolve are seed 6.2 and 6.4 verbatim.
const inputSchemaProjects = `{
  "type": "object",
  "properties": {
    "query": { "type": "string", "maxLength": 1000, "description": "Words to match against project names, package names, aliases, descriptions and READMEs (not code). Omit to list projects." },
    "workspacePath": { "type": "string", "maxLength": 4096, "description": "Absolute path of the caller's current workspace; only used to rank and mark related projects." },
    "limit": { "type": "integer", "minimum": 1, "maximum": 50, "default": 5 },
    "cursor": { "type": "string", "maxLength": 2048, "description": "nextCursor from a previous answer with the same arguments." },
    "refresh": { "type": "boolean", "default": false, "description": "Schedule a bounded catalog refresh (never an index rebuild)." }
  },
  "additionalProperties": false
}`

const inputSchemaResolve = `{
  "type": "object",
  "properties": {
    "projectId": { "type": "string", "minLength": 1, "maxLength": 128, "description": "A projectId from an earlier answer, session or GBrain card. Never a path." },
    "expectedRecordRevision": { "type": "integer", "minimum": 1 }
  },
  "required": ["projectId"],
  "additionalProperties": false
}`

// outputSchema describes Envelope.
const outputSchema = `{
  "type": "object",
  "properties": {
    "schemaVersion": { "type": "integer", "const": 1 },
    "status": { "type": "string", "enum": ["ok", "setup_required", "no_matches", "cursor_expired", "unknown_project", "record_changed", "missing", "not_available"] },
    "message": { "type": "string" },
    "machineId": { "type": "string" },
    "catalogRevision": { "type": "integer", "minimum": 0 },
    "scanState": { "type": "string", "enum": ["idle", "running", "not_configured"] },
    "coverage": { "type": "string", "enum": ["complete", "partial", "none"] },
    "projects": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "projectId": { "type": "string" },
          "recordRevision": { "type": "integer", "minimum": 1 },
          "name": { "type": "string" },
          "description": { "type": "string" },
          "reason": { "type": "array", "items": { "type": "string" } },
          "projectPath": { "type": ["string", "null"] },
          "availability": { "type": "string", "enum": ["present", "missing", "inaccessible", "unknown"] },
          "indexState": { "type": "string", "enum": ["marker_present", "marker_missing", "unknown"] },
          "freshness": { "type": "string", "enum": ["unknown"] },
          "validatedAt": { "type": "string" },
          "revalidateAfterSeconds": { "type": "integer", "minimum": 0 },
          "handoff": {
            "type": "object",
            "properties": {
              "mcpServerHint": { "type": "string" },
              "toolName": { "type": "string" },
              "arguments": { "type": "object", "properties": { "projectPath": { "type": "string" } }, "required": ["projectPath"] },
              "requiredFromAgent": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["mcpServerHint", "toolName", "arguments", "requiredFromAgent"]
          },
          "packages": { "type": "array", "items": { "type": "string" } },
          "branch": { "type": "string" },
          "worktree": { "type": "boolean" },
          "workspace": { "type": "string", "enum": ["self", "related"] },
          "why": { "type": "string" },
          "movedTo": { "type": "string" },
          "warnings": { "type": "array", "items": { "type": "string" } }
        },
        "required": ["projectId", "recordRevision", "name", "description", "reason", "projectPath", "availability", "indexState", "freshness", "validatedAt", "revalidateAfterSeconds"]
      }
    },
    "nextCursor": { "type": ["string", "null"] },
    "gbrainState": { "type": "string", "enum": ["disabled", "ok", "degraded"] }
  },
  "required": ["schemaVersion", "status", "machineId", "catalogRevision", "scanState", "coverage", "projects", "nextCursor", "gbrainState"]
}`
