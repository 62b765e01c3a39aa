// Package store is the durable catalog: a LevelDB database in the data dir
// that binds stable project ids to canonical roots, and keeps the scan
// queue, fencing numbers and pending GBrain cards beside them.
//
// Several processes share one data dir while LevelDB admits one opener at a
// time, so no process keeps the database open: a writer opens it, commits
// one short batch, publishes what changed (package view) and closes it,
// retrying while another process holds it. Readers that answer agents never
// open it at all: they follow the published views, so a writer frozen in
// the middle of a batch delays only other writers.
//
// The store never touches a project's files. It owns its whole key space
// (keys.go lists every prefix and which package may use it) and the data
// dir's identity file (identity.go).
package store
