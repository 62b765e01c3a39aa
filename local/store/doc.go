// Package store is the durable catalog: a LevelDB database in the data dir
// that binds stable project ids to canonical roots. It is the one authority
// for "which id is which root"; everything else (the published views, the
// in-memory catalog, GBrain's cards) is a copy or a claim.
//
// Beside the records and their root bindings it keeps, for the packages
// that own them, the scan state and the scanner's walk stack, the fencing
// numbers of the leases, the outbox of GBrain cards to write, the
// projector's per-card state, the mirror of GBrain's cards, and the last
// word from GBrain. keys.go lists every key prefix and the one package that
// may use it, and each owner reads and writes its rows through a typed door
// (door.go: a Table of rows by id, or a single Row, whose JSON encoding goes
// with it; Outbox, ProjectionStates, ProjectionMeta, and for package scan
// its walk queue and seen set, ScanQueue and ScanSeen), so no package
// outside the store builds a key or reads a raw value. When a record is
// created, its revision grows or it is deleted, the store queues its
// outbox row in the same batch (Tx.PutProject, Tx.DeleteProject), so a
// card can never be lost between the two.
//
// Several processes share one data dir while LevelDB admits one opener at a
// time, so no process keeps the database open: a writer opens it, commits
// one short batch, publishes what changed (package view) and closes it,
// retrying while another process holds it. Readers that answer agents never
// open it at all: they follow the published views, so a writer frozen in
// the middle of a batch delays only other writers. It also owns the data
// dir's identity file (identity.go: machine id and secret, kept apart so
// they outlive the database) and the salvage of a damaged database
// (recover.go, `cgcat store recover`).
//
// The store never touches a project's files, never talks to GBrain, and
// never decides what is shared: it stores what its callers decide.
package store
