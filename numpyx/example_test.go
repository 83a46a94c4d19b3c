package numpyx_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// Write a tensor in .npy format and read it back; the header is the one numpy.save writes.
func ExampleWrite() {
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	var buf bytes.Buffer
	if err := numpyx.Write(&buf, x); err != nil {
		panic(err)
	}
	h, err := numpyx.ReadHeader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Version, h, "data at", h.DataOffset)

	back, err := numpyx.Read(&buf)
	if err != nil {
		panic(err)
	}
	v, _ := core.Elements[float32](back)
	fmt.Println(back.Shape(), v)
	// Output:
	// 1.0 {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } data at 128
	// [2 3] [1 2 3 4 5 6]
}

// A Fortran-contiguous tensor (here a transposed view) is written as it lies, with
// fortran_order set, and read back Fortran-strided.
func ExampleWrite_fortran() {
	x := core.MustFromSlice([]int16{1, 2, 3, 4, 5, 6}, 2, 3)
	xt, _ := x.Transpose()
	var buf bytes.Buffer
	if err := numpyx.Write(&buf, xt); err != nil {
		panic(err)
	}
	back, err := numpyx.Read(&buf)
	if err != nil {
		panic(err)
	}
	v, _ := core.At[int16](back, 2, 0)
	fmt.Println(back.Shape(), back.Strides(), v)
	// Output:
	// [3 2] [1 3] 3
}

// Map a file: the tensor is the file's bytes, read-only, unmapped on Release.
func ExampleMap() {
	path := filepath.Join(os.TempDir(), "numpyx-example-map.npy")
	defer os.Remove(path)
	if err := numpyx.WriteFile(path, core.MustFromSlice([]float64{0.5, 1.5, 2.5})); err != nil {
		panic(err)
	}
	m, err := numpyx.Map(path)
	if err != nil {
		panic(err)
	}
	defer m.Release()
	v, _ := core.ReadOnlyElements[float64](m)
	fmt.Println(v, m.ReadOnly())
	// Output:
	// [0.5 1.5 2.5] true
}

// Write an .npz archive member by member and read it lazily.
func ExampleNPZWriter() {
	var buf bytes.Buffer
	w := numpyx.NewNPZWriter(&buf, numpyx.Compressed()) // deflated, like numpy.savez_compressed
	_ = w.Write("weights", core.MustFromSlice([]float32{0.25, -1}, 1, 2))
	_ = w.Write("step", core.Scalar(int64(7)))
	if err := w.Close(); err != nil {
		panic(err)
	}
	z, err := numpyx.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		panic(err)
	}
	fmt.Println(z.Keys())
	h, _ := z.Header("weights")
	fmt.Println(h)
	step, _ := z.Read("step")
	s, _ := core.At[int64](step)
	fmt.Println(s)
	// Output:
	// [weights step]
	// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }
	// 7
}

// Parse a header dict, as a Python 2 file might have written it.
func ExampleParseHeader() {
	h, err := numpyx.ParseHeader([]byte("{'descr': '>c16', 'fortran_order': True, 'shape': (3L, 4L)}"))
	if err != nil {
		panic(err)
	}
	fmt.Println(h.DType, h.BigEndian, h.Fortran, h.Shape)
	_, err = numpyx.ParseHeader([]byte("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}"))
	fmt.Println(err)
	// Output:
	// complex128 true true [3 4]
	// numpyx: descr "|O" is not a dtype numpyx reads (only b1, i1-i8, u1-u8, f2, f4, f8, c8, c16 are)
}
