package view

import (
	"io"
	"os"
	"unsafe"
)

// readFile reads size bytes of f into 8-byte aligned memory (the frozen
// index needs it).
func readFile(f *os.File, size int) ([]byte, func(), bool, error) {
	w := make([]uint64, (size+7)/8)
	data := unsafeBytes(w, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, false, err
	}
	return data, func() {}, false, nil
}

// unsafeBytes views the first n bytes of w.
func unsafeBytes(w []uint64, n int) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n)
}

// alignedBuffer collects bytes in 8-byte aligned memory (a frozen index
// is read in place, as words).
type alignedBuffer struct {
	w []uint64
	n int
}

func (a *alignedBuffer) Write(p []byte) (int, error) {
	if need := (a.n + len(p) + 7) / 8; need > len(a.w) {
		w := make([]uint64, max(need, 2*len(a.w)))
		copy(w, a.w)
		a.w = w
	}
	copy(unsafeBytes(a.w, len(a.w)*8)[a.n:], p)
	a.n += len(p)
	return len(p), nil
}

func (a *alignedBuffer) bytes() []byte { return unsafeBytes(a.w, a.n) }
