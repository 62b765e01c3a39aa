// Package gbrain is cgcat's own MCP client to GBrain (repository
// garrytan/gbrain; behaviour measured on 0.46.28.0, which the fake server in
// gbraintest/fakegbrain reproduces and its tests pin down) and the codec of
// the reference-only project cards cgcat keeps there. It is the only
// package that speaks to GBrain, and it imports nothing else of cgcat.
//
// It owns:
//   - the connection: a stdio child ([Connection.Command]) or an HTTP URL
//     ([Connection.URL], GBrain's stateless streamable HTTP), the MCP
//     handshake, the child's lifetime (stdin closed first, then a signal)
//     and its stderr tail;
//   - HTTP authentication (auth.go, auth_endpoint.go): OAuth 2.1 client
//     credentials read from environment variables at dial time, the token
//     endpoint found by discovery on the configured host only, one token per
//     lifetime renewed before it expires, a read refused with 401 re-sent
//     once with a new token; or a static bearer token;
//   - the typed calls cgcat needs (get_page, put_page, list_pages with
//     updated_after, search, query, delete_page, whoami, sources_list,
//     get_brain_identity), sending only the parameters GBrain documents and
//     parsing only the JSON text of content[0]; [Brain] is the few of them
//     the projection needs, with their contracts, and [DialTransport] runs
//     a client over an in-process server (the tests' fake);
//   - the error classes a caller acts on: [Definite], [Transient] and
//     [Ambiguous] (a write that may have happened), see [Classify];
//   - brain and source safety: the brain is pinned for a stdio child
//     (GBRAIN_BRAIN_ID, [Options.ExpectedBrain]); the source id is validated,
//     pinned for a stdio child (GBRAIN_SOURCE), checked against sources_list
//     ([Client.CheckSource]), checked on every page read, and over HTTP — where the token decides
//     where writes land — checked with whoami before the first write of
//     every token ([Client.CheckWriteSource]);
//   - the card codec ([Card] with its root_key, availability and moved_to;
//     [Encode], [Decode], [CardSlug], [ContentHash]; format [CardVersion])
//     and the machine pages ([MachinePage], [EncodeMachine],
//     [DecodeMachine]);
//   - a stdio child's stderr, kept as a tail and streamed line by line to
//     [Options.OnStderr] (a person sees what GBrain says while it starts).
//
// It must never:
//   - know about the catalog's store, the outbox or sharing policy: it is
//     handed cards and slugs and hands back pages and errors;
//   - retry a write by itself: put_page has no compare-and-swap, so whether
//     and when to retry after an [Ambiguous] failure (read back first, compare
//     hashes) is the projector's decision — and so is re-sending a write that
//     GBrain refused with 401 (surely not applied: [Transient]);
//   - log or put into an error a client secret or a token;
//   - reuse a host's GBrain connection, or write or delete without a pinned
//     source (PutPage and DeletePage refuse with [ErrNoSource]);
//   - treat anything it reads from GBrain as a binding or a path to hand out:
//     a decoded card is a claim to be checked against the local catalog.
package gbrain
