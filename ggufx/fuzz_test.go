package ggufx_test

import (
	"errors"
	"testing"

	"github.com/dlpack-go/dlpack/ggufx"
)

// checkErr asserts the contract for bad input: an error wrapping a sentinel.
func checkErr(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, ggufx.ErrFormat) && !errors.Is(err, ggufx.ErrType) {
		t.Fatalf("error without a sentinel: %v", err)
	}
}

// headerSeeds are files made by hand (helpers_test.go's raw builder).
func headerSeeds() [][]byte {
	return [][]byte{
		valid(),
		nested(3),
		start(2, 1, 1).str("general.alignment").u32(4).u32(8).tensor("t", 28, 0, 1).data(8, 8, nil).b,
		start(3, 1, 1).str("s").u32(9).u32(8).u64(2).str("a").str("").tensor("k", 12, 0, 256, 2).data(32, 288, nil).b,
	}
}

// checkHeader asserts what a header that parsed promises: every tensor's data in the file,
// aligned, none overlapping another.
func checkHeader(t *testing.T, h *ggufx.Header, size int) {
	t.Helper()
	if h.DataOffset%h.Alignment != 0 || h.Alignment%8 != 0 {
		t.Fatalf("data offset %d, alignment %d", h.DataOffset, h.Alignment)
	}
	for i, a := range h.Tensors {
		if a.Offset < 0 || a.Size < 0 || a.Offset%h.Alignment != 0 {
			t.Fatalf("tensor %q: offset %d size %d", a.Name, a.Offset, a.Size)
		}
		if a.Size > 0 && h.DataOffset+a.Offset+a.Size > int64(size) {
			t.Fatalf("tensor %q past the end", a.Name)
		}
		if a.Len()/int64(a.Type.BlockSize())*int64(a.Type.BlockBytes()) != a.Size {
			t.Fatalf("tensor %q: size %d", a.Name, a.Size)
		}
		for _, b := range h.Tensors[i+1:] {
			if a.Size > 0 && b.Size > 0 && a.Offset < b.Offset+b.Size && b.Offset < a.Offset+a.Size {
				t.Fatalf("%q and %q overlap", a.Name, b.Name)
			}
		}
	}
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range headerSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ggufx.ParseHeader(b)
		checkErr(t, err)
		if err != nil {
			return
		}
		checkHeader(t, h, len(b))
	})
}
