package view

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cgcat/cgcat/local/search"
	"github.com/zeebo/xxh3"
)

// Benchmarks of what healing costs readers, over a real data dir:
//
//	CGCAT_BENCH_DATADIR=/tmp/cgcat-bench/q100000/data go test ./local/view -run '^$' -bench Heal -benchtime 10x
//
// (bench/cmd/gencat -n 100000 makes one.)
func benchDataDir(b *testing.B) (string, Pointer) {
	dir := os.Getenv("CGCAT_BENCH_DATADIR")
	if dir == "" {
		b.Skip("CGCAT_BENCH_DATADIR is not set")
	}
	ptr, err := readPointer(dir)
	if err != nil {
		b.Fatal(err)
	}
	return dir, ptr
}

// Opening the base: the checksum alone, and the whole open (checksum,
// bounds of every index reference, every record matched to its slot).
func BenchmarkHealOpenBase(b *testing.B) {
	dir, ptr := benchDataDir(b)
	path := filepath.Join(Dir(dir), baseName(ptr.Base))
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("checksum", func(b *testing.B) {
		for range b.N {
			xxh3.Hash(data[:len(data)-8])
		}
	})
	b.Run("open", func(b *testing.B) {
		for range b.N {
			if _, err := ReadBase(dir, ptr.Base); err != nil {
				b.Fatal(err)
			}
		}
	})
	s, err := ReadBase(dir, ptr.Base)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("records-match", func(b *testing.B) {
		for range b.N {
			if !s.Base.recordsWhole() || !s.Base.idsMatch() {
				b.Fatal("mismatch")
			}
		}
	})
	off, n := section(data, bsIndex)
	b.Run("index-open", func(b *testing.B) {
		for range b.N {
			if _, err := search.OpenFrozen(data[off:off+n], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A reader's per-call costs: Changed (one stat of the pointer, one fstat
// of the mapped base) and a guarded record decode.
func BenchmarkHealPerCall(b *testing.B) {
	dir, _ := benchDataDir(b)
	f := NewFollower(dir)
	u, err := f.Next()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("changed", func(b *testing.B) {
		for range b.N {
			f.Changed()
		}
	})
	base := u.Snapshot.Base
	b.Run("moved", func(b *testing.B) {
		for range b.N {
			base.Moved()
		}
	})
	b.Run("record-guarded", func(b *testing.B) {
		for i := range b.N {
			base.Record(uint32(i % base.Len()))
		}
	})
	m := base.mapped
	base.mapped = nil
	b.Run("record-unguarded", func(b *testing.B) {
		for i := range b.N {
			base.Record(uint32(i % base.Len()))
		}
	})
	base.mapped = m
}

// Verify end to end (doctor) and a reader's way around a damaged base
// (the previous one and the deltas after it).
func BenchmarkHealVerify(b *testing.B) {
	dir, _ := benchDataDir(b)
	for range b.N {
		if r := Verify(dir); len(r.Problems) > 0 {
			b.Fatal(r.Problems)
		}
	}
}

func BenchmarkHealPreviousBase(b *testing.B) {
	dir, ptr := benchDataDir(b)
	for range b.N {
		if _, _, err := previousBase(dir, ptr); err != nil {
			b.Skipf("no previous base: %v", err)
		}
	}
}

// The guard alone: what every read of a mapped base adds.
func BenchmarkHealGuard(b *testing.B) {
	m := &mapping{}
	for range b.N {
		func() { defer m.unguard(m.guard()) }()
	}
}
