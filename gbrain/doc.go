// Package gbrain is cgcat's own MCP client to GBrain (repository
// garrytan/gbrain, behaviour measured on 0.46.28.0 and written down in
// shared/GBRAIN.md) and the codec of the reference-only project cards cgcat
// keeps there.
//
// It owns:
//   - the connection: a stdio child ([Connection.Command]) or an HTTP URL
//     ([Connection.URL]) with a bearer token read from an environment
//     variable at dial time, the MCP handshake, the child's lifetime
//     (stdin closed first, then a signal) and its stderr tail;
//   - the typed calls cgcat needs (get_page, put_page, list_pages, search,
//     query, delete_page, whoami, sources_list), sending only the parameters
//     GBrain documents and parsing only the JSON text of content[0];
//   - the error classes a caller acts on: [Definite], [Transient] and
//     [Ambiguous] (a write that may have happened), see [Classify];
//   - source safety: the source id is validated, pinned for a stdio child
//     (GBRAIN_SOURCE), checked against sources_list ([Client.CheckSource]) and
//     checked on every page read;
//   - the card codec ([Card], [Encode], [Decode], [CardSlug], [ContentHash]).
//
// It must never:
//   - know about the catalog's store, the outbox or sharing policy: it is
//     handed cards and slugs and hands back pages and errors;
//   - retry a write by itself: put_page has no compare-and-swap, so whether
//     and when to retry after an [Ambiguous] failure (read back first, compare
//     hashes) is the projector's decision;
//   - reuse a host's GBrain connection, or write without a pinned source;
//   - treat anything it reads from GBrain as a binding or a path to hand out:
//     a decoded card is a claim to be checked against the local catalog.
package gbrain
