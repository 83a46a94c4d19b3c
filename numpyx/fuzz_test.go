package numpyx_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// seeds returns .npy files of every dtype and a few layouts, written by this package (whose
// output TestWriteNumPy proves byte-identical to numpy.save).
func seeds(t testing.TB) [][]byte {
	var out [][]byte
	for i, dt := range allDTypes {
		for _, shape := range [][]int64{{}, {0}, {3}, {2, 3}} {
			x := core.MustNew(dt, shape...)
			var buf bytes.Buffer
			if i%2 == 1 && len(shape) == 2 {
				xt, err := x.Transpose()
				require.NoError(t, err)
				x = xt
			}
			require.NoError(t, numpyx.Write(&buf, x))
			out = append(out, buf.Bytes())
		}
	}
	return out
}

// checkErr asserts the contract for bad input: a sentinel error.
func checkErr(t *testing.T, err error) {
	if err != nil && !errors.Is(err, numpyx.ErrFormat) && !errors.Is(err, numpyx.ErrUnsupportedDType) {
		t.Fatalf("error without a sentinel: %v", err)
	}
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range seeds(f) {
		h, err := numpyx.ReadHeader(bytes.NewReader(s))
		require.NoError(f, err)
		f.Add([]byte(h.String()))
	}
	f.Add([]byte("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1L,), }"))
	f.Add([]byte(`{"descr": "<f8", "fortran_order": True, "shape": ((((1,),),),)}`))
	f.Fuzz(func(t *testing.T, dict []byte) {
		h, err := numpyx.ParseHeader(dict)
		checkErr(t, err)
		if err != nil {
			return
		}
		// what parsed re-parses to the same header from its NumPy rendering
		h2, err := numpyx.ParseHeader([]byte(h.String()))
		require.NoError(t, err)
		require.Equal(t, h.DType, h2.DType)
		require.Equal(t, h.Shape, h2.Shape)
		require.Equal(t, h.Fortran, h2.Fortran)
	})
}

func FuzzRead(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, file []byte) {
		x, err := numpyx.Read(bytes.NewReader(file))
		checkErr(t, err)
		y, err2 := numpyx.Read(onlyReader{bytes.NewReader(file)})
		checkErr(t, err2)
		require.Equal(t, err == nil, err2 == nil)
		if err != nil {
			return
		}
		// what was read writes and reads back to the same elements
		var buf bytes.Buffer
		require.NoError(t, numpyx.Write(&buf, x))
		z, err := numpyx.Read(&buf)
		require.NoError(t, err)
		require.Equal(t, x.Shape(), z.Shape())
		require.Equal(t, contiguousBytes(t, y), contiguousBytes(t, z))
	})
}

func FuzzReadNPZ(f *testing.F) {
	s := seeds(f)
	for _, deflate := range []bool{false, true} {
		f.Add(rawNPZ(f, deflate, "a.npy", s[5], "b.npy", s[len(s)-1]))
		f.Add(rawNPZ(f, deflate, "x.npy", s[9][:40]))
	}
	// a deflated member whose data is not deflate (found by this fuzzer)
	bad := rawNPZ(f, true, "00001", []byte("0000"))
	f.Add(bytes.Replace(bad, []byte{0x32, 0x30, 0x30, 0x00, 0x00}, []byte("00000"), 1))
	f.Add(append(bytes.Clone(rawNPZ(f, true, "a.npy", s[3]))[:30], rawNPZ(f, false, "b", nil)...))
	f.Add(overlappingNPZ(f, 3, s[5]))
	f.Fuzz(func(t *testing.T, archive []byte) {
		z, err := numpyx.NewReader(bytes.NewReader(archive), int64(len(archive)), numpyx.MaxInflated(64<<20))
		checkErr(t, err)
		if err != nil {
			return
		}
		for _, k := range z.Keys() {
			x, err := z.Read(k)
			if !errors.Is(err, numpyx.ErrTooLarge) {
				checkErr(t, err)
			}
			_, err = z.Header(k)
			if !errors.Is(err, numpyx.ErrTooLarge) {
				checkErr(t, err)
			}
			// streaming gives the bytes Read read, and ends the same way
			h, rc, err := z.Open(k)
			if err != nil {
				if !errors.Is(err, numpyx.ErrTooLarge) {
					checkErr(t, err)
				}
				continue
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if errors.Is(err, numpyx.ErrTooLarge) {
				continue
			}
			checkErr(t, err)
			if x != nil && err == nil && !h.NeedsSwap() && h.DType != core.Bool && x.IsContiguous() {
				want, berr := x.ReadOnlyBytes()
				require.NoError(t, berr)
				require.True(t, bytes.Equal(want, data), "Open gives the bytes Read read")
			}
			if x != nil {
				x.Release()
			}
		}
	})
}
