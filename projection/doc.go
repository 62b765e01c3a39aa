// Package projection keeps cgcat's reference-only project cards in GBrain
// (R28–R32) and turns GBrain hits back into local project ids.
//
// It owns:
//   - the single-writer projector: one process at a time, chosen by the
//     lease file dataDir/projector.lease and fenced by the store's
//     "projector" fencing number, drains the outbox: read the record, build
//     and encode the card, get_page, check ownership and the content hash we
//     recorded after our last write, put_page, read back, record the hash of
//     the read-back content and drop the row — the last two in one fenced
//     batch ([Projector.Drain]). A batch carries up to 50 rows or 1 s of
//     work, because one synced commit costs more than the network calls; a
//     batch lost in a crash leaves its rows queued, and their cards are then
//     found already written and adopted with one read each;
//   - the per-project projection state kept in the store under
//     "proj/<projectId>" (slug, hashes, revision, conflict) and the sync and
//     reconcile summaries under "projmeta/" ([ReadStatus]);
//   - conflicts: a card edited by someone else is never overwritten; it is
//     recorded and shown by `cgcat gbrain status` and `cgcat doctor`;
//   - reconcile ([Projector.Reconcile]): enumerating our cards with
//     list_pages, re-enqueueing missing and stale cards, reporting orphans;
//   - recall ([Recaller]): search or query hits → slugs under our prefix →
//     locally bound project ids whose cards really are ours;
//   - the background [Service] run by `cgcat serve`: a lazy GBrain
//     connection with redial, recall, and the projector loop when this
//     process holds the lease.
//
// It must never:
//   - decide sharing: whether a project may leave the machine as a card is
//     asked of catalog.Policy (the live view of this process), per record;
//   - change a binding, a record or the sharing policy because of anything
//     read from GBrain: a card is a claim to check, never a source of truth;
//   - hold the store open across a network call: every read is one View,
//     every write one short Update;
//   - retry a put_page blindly: after an ambiguous failure it reads the page
//     back and compares before deciding anything;
//   - write a card without the projector lease and a current fencing number,
//     or write anything in a dry run;
//   - put an absolute path in a card unless gbrain.projection is
//     "local-paths".
package projection
