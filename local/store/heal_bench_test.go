//go:build unix

package store

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/view"
	"github.com/syndtr/goleveldb/leveldb"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// What a reader pays to answer from the store when the published files
// cannot be used: the whole catalog read (lock free, or through a copy
// while another process holds the store) and made a base in memory, from
// nothing or over the base the reader holds. CPU per op is reported beside
// the wall time (the host's load moves the latter).
//
//	CGCAT_BENCH_DATADIR=/tmp/cgcat-bench/q100000/data go test ./local/store -run '^$' -bench HealFallback -benchtime 1x
func BenchmarkHealFallback(b *testing.B) {
	dir := os.Getenv("CGCAT_BENCH_DATADIR")
	if dir == "" {
		b.Skip("CGCAT_BENCH_DATADIR is not set")
	}
	st := Handle(dir)
	ctx := context.Background()
	ptr, ok := view.ReadPointer(dir)
	if !ok {
		b.Fatal("no pointer")
	}
	held, err := view.ReadBase(dir, ptr.Base)
	if err != nil {
		b.Fatal(err)
	}
	read := func(over *view.Base) func(b *testing.B) {
		return func(b *testing.B) {
			c0 := cpuNow()
			for range b.N {
				s, err := st.ReadCatalog(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := view.BuildBase(s, over); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuNow()-c0).Seconds()/float64(b.N), "cpu-s/op")
		}
	}
	b.Run("store-free", read(nil))
	b.Run("store-free-over-held-base", read(held.Base))
	db, err := leveldb.OpenFile(DBDir(dir), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.Run("store-held", read(nil))
}
