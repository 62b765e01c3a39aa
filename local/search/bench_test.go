package search

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

var benchSizes = []int{1_000, 10_000, 100_000}

var (
	benchMu      sync.Mutex
	benchCorpora = map[int][]Doc{}
	benchIndexes = map[int]*Index{}
)

func benchDocs(n int) []Doc {
	benchMu.Lock()
	defer benchMu.Unlock()
	if d, ok := benchCorpora[n]; ok {
		return d
	}
	d := newCorpus(42).docs(n)
	benchCorpora[n] = d
	return d
}

func benchIndex(n int) *Index {
	docs := benchDocs(n)
	benchMu.Lock()
	defer benchMu.Unlock()
	if ix, ok := benchIndexes[n]; ok {
		return ix
	}
	ix := New()
	for _, d := range docs {
		ix.Put(d)
	}
	benchIndexes[n] = ix
	return ix
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkBuild builds a whole index; heap-MB is the live heap the index
// holds once built.
func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			docs := benchDocs(n)
			var heap uint64
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				before := heapInUse()
				b.StartTimer()
				ix := New()
				for _, d := range docs {
					ix.Put(d)
				}
				b.StopTimer()
				heap = heapInUse() - before
				runtime.KeepAlive(ix)
				b.StartTimer()
			}
			b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
		})
	}
}

// BenchmarkSearch runs a varied query mix (exact names and packages,
// common and rare words, phrases, camelCase, Chinese, misses, sentences)
// with a keep filter, and reports per-query latency percentiles: wall time,
// and on Linux the thread's CPU time, which a busy shared machine does not
// inflate. top=all is Search; top=20 is SearchTop for a first page.
func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		for _, top := range []int{-1, 20} {
			name := fmt.Sprintf("docs=%d/top=%d", n, top)
			if top < 0 {
				name = fmt.Sprintf("docs=%d/top=all", n)
			}
			b.Run(name, func(b *testing.B) { benchQueries(b, n, top) })
		}
	}
}

func benchQueries(b *testing.B, n, top int) {
	runQueries(b, benchIndex(n), newCorpus(99).queries(benchDocs(n), 1000), top)
}

// BenchmarkFuzzy measures what the fuzzy tier adds: the same queries with
// the tier on and off, for the usual mix (every query now looks its words
// up in the name dictionary) and for misspelt names (where the tier finds
// what the others cannot). First pages (top=20), keep filter as in
// BenchmarkSearch.
//
//	go test ./local/search -run '^$' -bench BenchmarkFuzzy -benchtime 20000x
func BenchmarkFuzzy(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		ix := benchIndex(n)
		sets := []struct {
			name    string
			queries []string
		}{
			{"mix", newCorpus(99).queries(benchDocs(n), 1000)},
			{"typos", newCorpus(97).typos(benchDocs(n), 1000)},
		}
		for _, set := range sets {
			for _, on := range []bool{true, false} {
				b.Run(fmt.Sprintf("docs=%d/%s/fuzzy=%v", n, set.name, on), func(b *testing.B) {
					ix.noFuzzy = !on
					defer func() { ix.noFuzzy = false }()
					runQueries(b, ix, set.queries, 20)
				})
			}
		}
	}
}

func runQueries(b *testing.B, ix *Index, queries []string, top int) {
	runQueriesFilter(b, ix, Filter{ID: func(id string) bool { return id[len(id)-1] != '3' }}, queries, top)
}

func runQueriesFilter(b *testing.B, ix *Index, keep Filter, queries []string, top int) {
	wall := make([]time.Duration, 0, 1<<16)
	cpu := make([]time.Duration, 0, 1<<16)
	hits := 0
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		c0, t0 := threadCPU(), time.Now()
		_, total := ix.SearchFilter(queries[i%len(queries)], keep, top)
		wall = append(wall, time.Since(t0))
		cpu = append(cpu, threadCPU()-c0)
		hits += total
		i++
	}
	report := func(lat []time.Duration, unit string) {
		slices.Sort(lat)
		at := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
		b.ReportMetric(at(0.50), "p50-"+unit)
		b.ReportMetric(at(0.99), "p99-"+unit)
	}
	report(wall, "wall-µs")
	if haveThreadCPU {
		report(cpu, "cpu-µs")
	}
	b.ReportMetric(float64(hits)/float64(i), "hits/op")
}

// BenchmarkPutReplace replaces documents in a built index: the incremental
// cost of a rescan that changed a project's metadata.
func BenchmarkPutReplace(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			docs := benchDocs(n)
			ix := New()
			for _, d := range docs {
				ix.Put(d)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				d := docs[(i*7919)%n]
				o := docs[(i*104729+1)%n] // another document's content under this id
				o.ID, o.SortKey = d.ID, d.SortKey
				ix.Put(o)
				i++
			}
		})
	}
}

// BenchmarkSearchAfterPut alternates a Put that moves a document in the
// listing order with a first-page query: the order is repaired by binary
// search, not re-sorted.
func BenchmarkSearchAfterPut(b *testing.B) {
	n := 100_000
	docs := benchDocs(n)
	ix := New()
	for _, d := range docs {
		ix.Put(d)
	}
	queries := newCorpus(98).queries(docs, 500)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		d := docs[(i*7919)%n]
		d.SortKey = fmt.Sprintf("%s~%d", d.SortKey, i)
		ix.Put(d)
		ix.SearchTop(queries[i%len(queries)], nil, 20)
		i++
	}
}

func BenchmarkList(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			ix := benchIndex(n)
			keep := func(id string) bool { return id[len(id)-1] != '3' }
			b.ReportAllocs()
			for b.Loop() {
				ix.List(keep)
			}
		})
	}
}

var (
	frozenMu sync.Mutex
	frozens  = map[int]*Index{}
)

// frozenIndex is benchIndex(n) written in the frozen form and opened over
// it, as a reader of a published base holds it.
func frozenIndex(b *testing.B, n int) *Index {
	ix := benchIndex(n)
	frozenMu.Lock()
	defer frozenMu.Unlock()
	if f, ok := frozens[n]; ok {
		return f
	}
	f := NewOver(openFrozen(b, frozenBytes(b, ix)))
	frozens[n] = f
	return f
}

// BenchmarkFrozen is BenchmarkFuzzy's mix and typos over a frozen base, as
// a serve answers: the keep filter by slot (the catalog's bitmap per view),
// and with an overlay of 1 % of the documents changed since the base.
//
//	go test ./local/search -run '^$' -bench BenchmarkFrozen -benchtime 10000x
func BenchmarkFrozen(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		docs := benchDocs(n)
		sets := []struct {
			name    string
			queries []string
		}{
			{"mix", newCorpus(99).queries(docs, 1000)},
			{"typos", newCorpus(97).typos(docs, 1000)},
		}
		for _, overlay := range []bool{false, true} {
			ix := frozenIndex(b, n)
			if overlay {
				ix = NewOver(ix.base)
				for i := 0; i < n/100; i++ {
					d := docs[(i*7919)%n]
					o := docs[(i*104729+1)%n]
					o.ID, o.SortKey = d.ID, d.SortKey
					ix.Put(o)
				}
			}
			hidden := make([]uint64, (ix.nb+63)/64)
			for s := range ix.nb {
				if id := ix.id(s); id[len(id)-1] == '3' {
					hidden[s>>6] |= 1 << (s & 63)
				}
			}
			keep := Filter{
				Base: func(s uint32) bool { return hidden[s>>6]&(1<<(s&63)) == 0 },
				ID:   func(id string) bool { return id[len(id)-1] != '3' },
			}
			for _, set := range sets {
				b.Run(fmt.Sprintf("docs=%d/%s/overlay=%v", n, set.name, overlay), func(b *testing.B) {
					runQueriesFilter(b, ix, keep, set.queries, 20)
				})
			}
		}
	}
}
