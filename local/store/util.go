package store

import "encoding/binary"

func u64(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func readU64(v []byte) uint64 {
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}
