//go:build !unix

package meta

// openFlags adds nothing where O_NONBLOCK and O_NOFOLLOW do not exist; the
// regular-file check after opening still applies.
const openFlags = 0
