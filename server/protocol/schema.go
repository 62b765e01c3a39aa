package protocol

// inputSchemaProjects and inputSchemaResolve are the tools' input schemas as
// specified (docs/requirements.md R15), word for word.
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

// outputSchema describes server.Envelope.
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
          "availability": { "type": "string", "enum": ["present", "missing", "inaccessible", "unknown", "historical"] },
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
          "version": { "type": "string" },
          "branch": { "type": "string" },
          "worktree": { "type": "boolean" },
          "workspace": { "type": "string", "enum": ["self", "related"] },
          "why": { "type": "string" },
          "movedTo": { "type": "string" },
          "machineId": { "type": "string" },
          "warnings": { "type": "array", "items": { "type": "string" } },
          "commit": { "type": "string" },
          "lookalike": {
            "type": "object",
            "properties": {
              "of": { "type": "array", "items": { "type": "string" } },
              "differsBy": { "type": "array", "items": { "type": "string", "enum": ["name", "package", "version", "branch", "worktree", "commit"] } },
              "sameCommitAs": { "type": "array", "items": { "type": "string" } },
              "more": { "type": "integer", "minimum": 0 }
            },
            "required": ["of", "differsBy"]
          }
        },
        "required": ["projectId", "recordRevision", "name", "description", "reason", "projectPath", "availability", "indexState", "freshness", "validatedAt", "revalidateAfterSeconds"]
      }
    },
    "nextCursor": { "type": ["string", "null"] },
    "gbrainState": { "type": "string", "enum": ["disabled", "ok", "degraded"] },
    "didYouMean": { "type": "array", "items": { "type": "string" } }
  },
  "required": ["schemaVersion", "status", "machineId", "catalogRevision", "scanState", "coverage", "projects", "nextCursor", "gbrainState"]
}`

// OutputSchema is the JSON schema every answer's structuredContent follows.
func OutputSchema() []byte { return []byte(outputSchema) }
