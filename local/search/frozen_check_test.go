package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"
)

// frozenSection is where section i of a frozen index lies in b.
func frozenSection(b []byte, i int) (off, n int) {
	ft := b[len(b)-footerSize+8+8+8+8*int(numFields):]
	return int(binary.LittleEndian.Uint64(ft[16*i:])), int(binary.LittleEndian.Uint64(ft[16*i+8:]))
}

func craftBase(t *testing.T) []byte {
	t.Helper()
	ix := New()
	for _, d := range newCorpus(7).docs(40) {
		ix.Put(d)
	}
	return frozenBytes(t, ix)
}

// An id table with no free entry (every entry a valid slot) made Slot loop
// for ever on an id that is not there. It ends now, and says not found.
func TestFrozenIDTableFullEnds(t *testing.T) {
	b := craftBase(t)
	off, n := frozenSection(b, secIDHash)
	for i := off; i < off+n; i += 4 {
		binary.LittleEndian.PutUint32(b[i:], 1)
	}
	f, err := OpenFrozen(b, nil)
	if err != nil {
		t.Fatalf("a full id table of valid slots is well-formed: %v", err)
	}
	done := make(chan bool, 1)
	go func() {
		_, ok := f.Slot("not-an-id-of-this-index")
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("found an id that is not there")
		}
	case <-time.After(time.Minute):
		t.Fatal("Slot loops on a full id table")
	}
}

// Every reference inside a frozen index is checked at open: a string, a
// posting's slot, a term list, the listing order, an exact-tier slot, a
// value list or a whole term that points outside is refused (before, a
// search or a listing panicked on it, or read past its section).
func TestFrozenOutOfRangeRefused(t *testing.T) {
	good := craftBase(t)
	if _, err := OpenFrozen(good, nil); err != nil {
		t.Fatal(err)
	}
	put32 := func(sec, index int, v uint32) func([]byte) {
		return func(b []byte) {
			off, _ := frozenSection(b, sec)
			binary.LittleEndian.PutUint32(b[off+4*index:], v)
		}
	}
	for name, craft := range map[string]func([]byte){
		"doc id string past the strings": put32(secDocs, 0, 1<<30),
		"doc name length past them":      put32(secDocs, 5, 1<<30),
		"values past the value list":     put32(secDocs, 6, 1<<30),
		"term list past its section":     put32(secDocs, 9, 1<<30),
		"term text past the strings":     put32(secTText, 0, 1<<30),
		"posting slot past the docs":     put32(secPost, 0, 1<<20),
		"postings out of order": func(b []byte) {
			tp, n := frozenSection(b, secTPost)
			po, _ := frozenSection(b, secPost)
			for i := tp; i+16 <= tp+n; i += 8 {
				a, z := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
				if z-a >= 2 { // the term's second posting gets its first's slot
					copy(b[po+8*int(a)+8:], b[po+8*int(a):po+8*int(a)+4])
					return
				}
			}
		},
		"listing order not a permutation": func(b []byte) {
			put32(secOrder, 0, 1)(b)
			put32(secOrder, 1, 1)(b)
		},
		"id table slot past the docs": func(b []byte) {
			off, n := frozenSection(b, secIDHash)
			for i := off; i < off+n; i += 4 {
				if binary.LittleEndian.Uint32(b[i:]) != 0 {
					binary.LittleEndian.PutUint32(b[i:], 1<<20)
					return
				}
			}
		},
		"fuzzy term past the dictionary": put32(secFzID, 0, 1<<20),
		"exact slot past the docs":       put32(secExSlots+int(exName), 0, 1<<20),
		"whole term past the dictionary": put32(secWhole, 0, 1<<20),
		"term list with a bad varint": func(b []byte) {
			off, _ := frozenSection(b, secTList)
			for i := range 12 {
				b[off+i] = 0xff
			}
		},
		"name count not its postings": put32(secTNDF, 0, 1<<20),
	} {
		bad := bytes.Clone(good)
		craft(bad)
		if bytes.Equal(bad, good) {
			t.Fatalf("%s: the craft changed nothing", name)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: open panicked: %v", name, r)
				}
			}()
			if _, err := OpenFrozen(bad, nil); !errors.Is(err, ErrFrozen) {
				t.Errorf("%s: want ErrFrozen, got %v", name, err)
			}
		}()
	}
}

// An index built by another version of the tokenizer (another Derivation)
// is whole but refused for search, with its own error.
func TestFrozenOfAnotherDerivation(t *testing.T) {
	b := craftBase(t)
	binary.LittleEndian.PutUint64(b[len(b)-footerSize+16:], Derivation()^0x10)
	f, err := OpenFrozen(b, nil)
	if !errors.Is(err, ErrDerivation) || f == nil || f.Len() != 40 {
		t.Fatalf("want ErrDerivation with the index, got %v", err)
	}
}
