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

	// prefixOutbox holds pending GBrain cards: outbox/<projectId> → outbox
	// row. The store writes a row in the same batch as the record change
	// that needs it (PutProject, DeleteProject); package outbox consumes
	// through the Outbox door (outbox.go).
	prefixOutbox = "outbox/"
	// Package scan's own state, through its doors (scanwalk.go): the
	// persisted walk queue (ScanQueue: scan/q/<seq BE> → ScanItem, and
	// scan/qseq, the next seq) and the records seen in the running pass
	// (ScanSeen: scan/seen/<id> → ""). keyScanState, under the same
	// prefix, is the store's.
	prefixScanQueue = "scan/q/"
	keyScanQueueSeq = "scan/qseq"
	prefixScanSeen  = "scan/seen/"
	// prefixProjection is package projection's: per-card state
	// (proj/<projectId>, ProjectionStates) and its bookkeeping
	// (projmeta/<name>, ProjectionMeta).
	prefixProjection     = "proj/"
	prefixProjectionMeta = "projmeta/"
	// prefixMirror is the mirror of GBrain cards that package projection
	// keeps: mirror/<slug> → card fields (Tx.PutCard, Reader.Cards).
	prefixMirror = "mirror/"
)

// ProjectionStates is the door to package projection's per-card state,
// proj/<projectId>; projection names the row type.
func ProjectionStates[T any]() Table[T] { return Table[T]{prefix: prefixProjection} }

// MetaName names one of package projection's single rows, projmeta/<name>.
type MetaName string

// Package projection's single rows.
const (
	MetaLastSync    MetaName = "lastSync"    // the last drain's summary
	MetaReconcile   MetaName = "reconcile"   // the last reconcile's report
	MetaRecovery    MetaName = "recovery"    // the state of a store's recovery from GBrain
	MetaMirror      MetaName = "mirror"      // the last mirror refresh's report
	MetaMirrorMark  MetaName = "mirrorMark"  // where the mirror's incremental refresh resumes
	MetaMachines    MetaName = "machines"    // machine id → what its machine page said
	MetaUndecodable MetaName = "undecodable" // slug → updated_at of our pages that are no card
)

// ProjectionMeta is the door to one of package projection's single rows;
// projection names the row type.
func ProjectionMeta[T any](name MetaName) Row[T] {
	return Row[T]{key: prefixProjectionMeta + string(name)}
}
