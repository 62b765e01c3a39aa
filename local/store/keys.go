package store

// The key space. Every key in the database starts with one of these; the
// comment names the package that reads and writes it. Values are JSON unless
// said otherwise; numbers in keys are big-endian so they sort.
const (
	keyFormat   = "meta/format"          // store: format version (decimal text)
	keyStoreID  = "meta/storeId"         // store: random id of this database, new when it is made again
	keyRevision = "meta/catalogRevision" // store: catalogRevision (u64)
	keyViewSeq  = "meta/viewSeq"         // store: number of the last published change (u64)
	keyLegacyID = "meta/machineId"       // store: machine id of releases before the identity file
	keyLegacyKS = "meta/secret"          // store: secret of releases before the identity file

	prefixProj    = "p/"     // store: p/<projectId> → local.Project
	prefixRoot    = "r/"     // store: r/<pathid.Key(root)> → projectId
	prefixDBID    = "d/"     // store: d/<database file id>/<projectId> → "" (finds a moved index)
	prefixGone    = "gone/"  // store: gone/<projectId> → "" (an id forgotten here, never given out again)
	prefixFence   = "fence/" // store: fence/<lease name> → u64 fencing number
	keyScanState  = "scan/state"
	keyGBrainSeen = "gbrain/contact" // store: local.GBrainContact, the last word from GBrain

	// PrefixOutbox holds pending GBrain cards: outbox/<projectId> → outbox
	// row. The store writes a row in the same batch as the record change
	// that needs it (PutProject, DeleteProject); package outbox consumes.
	PrefixOutbox = "outbox/"
	// PrefixScan is package scan's own state: its persisted walk stack
	// (scan/q/<seq>, scan/qseq) and the records seen in the running pass
	// (scan/seen/<id>). keyScanState, under the same prefix, is the store's.
	PrefixScan = "scan/"
	// PrefixProjection is package projection's: per-card state
	// (proj/<projectId>) and its bookkeeping (projmeta/...).
	PrefixProjection     = "proj/"
	PrefixProjectionMeta = "projmeta/"
	// PrefixMirror is package projection's mirror of GBrain cards:
	// mirror/<slug> → card fields.
	PrefixMirror = "mirror/"
)
