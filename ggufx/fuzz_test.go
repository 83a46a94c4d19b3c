package ggufx_test

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
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
		mixedFile(), // ggml's 2026 types, unknown and removed numbers, a fork's layout under 42
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
		switch {
		case a.Err != nil && !errors.Is(a.Err, ggufx.ErrType):
			t.Fatalf("tensor %q: %v", a.Name, a.Err)
		case a.Err == nil && !a.Type.Known():
			t.Fatalf("tensor %q of %s has no error", a.Name, a.Type)
		case a.Err == nil && a.Len()/int64(a.Type.BlockSize())*int64(a.Type.BlockBytes()) != a.Size:
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
		if a := h.Alignment; a&(a-1) != 0 {
			return // read, but not written: llama.cpp reads powers of 2 only
		}
		// the metadata writes back to a file that parses to the same metadata (the same bytes)
		var w1, w2 bytes.Buffer
		if err := ggufx.Write(&w1, h.Metadata, nil); err != nil {
			t.Fatal(err)
		}
		h2, err := ggufx.ParseHeader(w1.Bytes())
		if err != nil {
			t.Fatalf("rewritten: %v", err)
		}
		if err := ggufx.Write(&w2, h2.Metadata, nil); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w1.Bytes(), w2.Bytes()) || h2.Metadata.Len() != h.Metadata.Len() {
			t.Fatal("the metadata does not survive a round trip")
		}
	})
}

// FuzzOpen opens what parses as a file and takes every tensor every way: the views, the blocks,
// and the dequantized elements; none may fault, and their sizes are what the header says.
func FuzzOpen(f *testing.F) {
	for _, s := range headerSeeds() {
		f.Add(s)
	}
	f.Add(plainFile())
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := dir + "/f.gguf"
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := ggufx.Open(path)
		checkErr(t, err)
		if err != nil {
			return
		}
		defer file.Close()
		checkHeader(t, file.Header(), len(b))
		copies, err := ggufx.Open(path, adapters.AlwaysCopy())
		if err != nil {
			t.Fatalf("opens, but not to copy: %v", err)
		}
		defer copies.Close()
		for _, ti := range file.Tensors() {
			x, err := file.Tensor(ti.Name)
			if ti.Err != nil {
				if err != ti.Err {
					t.Fatalf("%q: %v, not %v", ti.Name, err, ti.Err)
				}
			} else if ti.Type.Quantized() {
				if !errors.Is(err, ggufx.ErrQuantized) {
					t.Fatalf("%q: %v", ti.Name, err)
				}
			} else if err != nil {
				t.Fatalf("%q: %v", ti.Name, err)
			} else {
				if x.NumBytes() != ti.Size {
					t.Fatalf("%q: %d bytes, header says %d", ti.Name, x.NumBytes(), ti.Size)
				}
				c, err := copies.Tensor(ti.Name)
				if err != nil {
					t.Fatalf("%q copied: %v", ti.Name, err)
				}
				if !bytes.Equal(bytesOf(t, x), bytesOf(t, c)) {
					t.Fatalf("%q: the copy differs from the view", ti.Name)
				}
				x.Release()
				c.Release()
			}
			blk, bi, err := file.Blocks(ti.Name)
			if err != nil {
				t.Fatalf("%q: %v", ti.Name, err)
			}
			if blk.NumBytes() != ti.Size || bi.Blocks*int64(bi.BlockBytes) != ti.Size {
				t.Fatalf("%q: blocks of %d bytes (%+v), header says %d", ti.Name, blk.NumBytes(), bi, ti.Size)
			}
			touch(t, blk)
			blk.Release()
			d, err := file.Dequantize(ti.Name, core.Float32)
			if !ggufx.Dequantizable(ti.Type) || ti.Err != nil {
				if !errors.Is(err, ggufx.ErrType) {
					t.Fatalf("%q: %v", ti.Name, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%q: %v", ti.Name, err)
			}
			if d.Len() != ti.Len() {
				t.Fatalf("%q: %d elements, header says %d", ti.Name, d.Len(), ti.Len())
			}
			d.Release()
		}
	})
}

// bytesOf returns x's bytes.
func bytesOf(t *testing.T, x *core.Tensor) []byte {
	b, err := x.ReadOnlyBytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// touch reads every byte of x.
func touch(t *testing.T, x *core.Tensor) {
	b, err := x.ReadOnlyBytes()
	if err != nil {
		t.Fatal(err)
	}
	s := byte(0)
	for _, v := range b {
		s += v
	}
	_ = s
}
