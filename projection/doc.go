// Package projection keeps cgcat's reference-only project cards in GBrain
// (R28–R32) and turns GBrain hits back into local project ids.
//
// It owns:
//   - the single-writer projector: one process at a time, chosen by the
//     lease file dataDir/projector.lease and fenced by the store's
//     "projector" fencing number, drains the outbox, up to 8 cards at once
//     ([Projector.InFlight]): read the record, build and encode the card,
//     get_page, check ownership and the content hash we recorded after our
//     last write, put_page, read back, record the hash of the read-back
//     content and drop the row — the last two in one fenced batch
//     ([Projector.Drain]). A batch carries up to 50 rows or 1 s of work,
//     because one synced commit costs more than the network calls; a batch
//     lost in a crash leaves its rows queued, and their cards are then found
//     already written and adopted with one read each. It talks to GBrain
//     through the small interface gbrain.Brain ([Conn], [Dialer]), so its
//     tests run against an in-process fake;
//   - the per-project projection state kept in the store through its
//     typed doors (store.ProjectionStates: slug, hashes, revision,
//     conflict; store.ProjectionMeta: the sync and reconcile summaries, the
//     mirror's mark and machines, the recovery state) ([ReadStatus]); the
//     store builds the keys, this package names the row types;
//   - conflicts: a card edited by someone else is never overwritten; it is
//     recorded and shown by `cgcat gbrain status` and `cgcat doctor`;
//   - the mirror ([Projector.RefreshMirror], mirror.go): the lease holder
//     lists the cards of the expected source under the slug prefix (this
//     machine's, other machines', cards people edited) updated since the
//     newest one mirrored (list_pages updated_after), reads only those,
//     judges each (edited unless it is what cgcat wrote) and keeps their
//     searchable fields in the store (mirror/<slug>), never a path; a full
//     listing now and then finds deletions; search and resolve answer from
//     it locally;
//   - machines (machines.go, retire.go): this machine's page (heartbeat,
//     the cards it took back lately); other machines' pages, whose
//     retirement leaves their cards out of the mirror and whose silence
//     marks them stale; [Projector.Retire], the one place another machine's
//     cards are deleted, and only when a person asks;
//   - recovery of a lost catalog (recover.go): this machine's cards, listed
//     by its machine tag, are read before the first scan binds ids; where
//     that cannot finish the ids are pending and no card is written;
//   - retraction (retract.go): the card of a forgotten or hidden project is
//     deleted from GBrain (delete_page) when it is ours and unedited, else
//     reported as a conflict; [Projector.Sweep] queues what no record change
//     queued (projects hidden after projection, or shared again);
//     [Projector.Prune] finds this machine's own orphaned cards;
//   - reconcile ([Projector.Reconcile]): enumerating our cards with
//     list_pages, re-enqueueing missing and stale cards, reporting this
//     machine's orphans (never another machine's card);
//   - adoption after a lost catalog: a card of this machine for a project
//     id the scanner took back by root_key is updated when it is exactly
//     what cgcat writes, not called a conflict; [PrimeMirror] and the
//     service's [Service.MirrorReady] make discovery of a fresh store wait
//     for [Projector.Recover], so those ids come back;
//   - [CardLookup]: one card read from GBrain for resolve (a short
//     connection, or the service's recall connection);
//   - recall ([Recaller]): GBrain's semantic query (only with
//     semanticSearch) over a connection of its own in every serve →
//     slugs under our prefix → locally bound project ids whose cards
//     really are ours;
//   - the background [Service] run by `cgcat serve`: only the projector
//     lease holder connects, for short rounds (a drain when the outbox has
//     rows; every minute a sweep, a drain and a mirror refresh), closes a
//     stdio connection keepAliveSeconds after a round so a PGLite brain is
//     free between rounds, records every round's GBrain contact for every
//     host's gbrainState, and retries a held or silent brain with backoff,
//     reporting it at once.
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
//     "local-paths";
//   - import the answering side (package server) or MCP's server code: the
//     frontend meets it on the contracts of package local ([local.Recall],
//     [local.CardLookup]).
package projection
