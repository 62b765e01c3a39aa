package store

import "encoding/binary"

// U64 is n as 8 big-endian bytes, the way numbers are written in keys (so
// they sort) and in values.
func U64(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// ReadU64 reads what U64 wrote; anything but 8 bytes reads as 0.
func ReadU64(v []byte) uint64 {
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}
