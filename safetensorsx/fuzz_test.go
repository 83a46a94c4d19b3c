package safetensorsx_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// seeds returns safetensors files of every dtype and a few shapes, written by this package
// (whose output TestWriteMatchesReference proves byte-identical to the reference writer's),
// and a few written by hand in other orders.
func seeds(t testing.TB) [][]byte {
	var out [][]byte
	ts := map[string]*core.Tensor{}
	for i, dt := range allDTypes(t) {
		shape := []int64{2, 4}
		if i%3 == 1 {
			shape = []int64{}
			if dt.SubByte() {
				shape = []int64{4}
			}
		}
		x := core.MustNew(dt, shape...)
		ts[dt.String()] = x
		var buf bytes.Buffer
		require.NoError(t, safetensorsx.Write(&buf, map[string]*core.Tensor{"x": x}, nil))
		out = append(out, buf.Bytes())
	}
	var buf bytes.Buffer
	require.NoError(t, safetensorsx.Write(&buf, ts, map[string]string{"format": "pt", "é": "\"\n"}))
	out = append(out, buf.Bytes())
	out = append(out, file(`{"b":{"data_offsets":[8,12],"shape":[],"dtype":"F32","x":[{}]},"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},"__metadata__":null}`, make([]byte, 12)))
	return out
}

// checkErr asserts the contract for bad input: a sentinel error.
func checkErr(t *testing.T, err error) {
	if err != nil && !errors.Is(err, safetensorsx.ErrFormat) && !errors.Is(err, safetensorsx.ErrUnsupportedDType) {
		t.Fatalf("error without a sentinel: %v", err)
	}
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s[8:])
	}
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{}}`))
	f.Add([]byte(`{"__metadata__":{"k":"\ud83d\ude00"},"x":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}}`))
	f.Fuzz(func(t *testing.T, header []byte) {
		h, err := safetensorsx.ParseHeader(header)
		checkErr(t, err)
		if err != nil {
			return
		}
		// what parsed tiles the data section, and writes back to a header that parses the same
		at := int64(0)
		ts := map[string]*core.Tensor{}
		for _, ti := range h.Tensors {
			require.Equal(t, at, ti.Begin)
			at = ti.End
			if ti.Len() <= 1<<16 {
				ts[ti.Name] = core.MustNew(ti.DType, ti.Shape...)
			}
		}
		require.Equal(t, at, h.DataLen)
		if len(ts) != len(h.Tensors) {
			return
		}
		h2, err := safetensorsx.HeaderOf(ts, h.Metadata)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, safetensorsx.Write(&buf, ts, h.Metadata))
		h3, err := safetensorsx.ReadHeader(&buf)
		require.NoError(t, err)
		require.Equal(t, h2.Tensors, h3.Tensors)
		require.Equal(t, h.Metadata, h3.Metadata)
		require.ElementsMatch(t, h.Names(), h3.Names())
	})
}

func FuzzRead(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		all, err := safetensorsx.Read(bytes.NewReader(data))
		checkErr(t, err)
		r, err2 := safetensorsx.NewReader(bytes.NewReader(data), int64(len(data)))
		checkErr(t, err2)
		require.Equal(t, err == nil, err2 == nil, "Read: %v, NewReader: %v", err, err2)
		_, err3 := safetensorsx.Read(onlyReader{bytes.NewReader(data)})
		checkErr(t, err3)
		if err != nil {
			return
		}
		require.NoError(t, err3)
		// what was read writes, and reads back to the same elements
		var buf bytes.Buffer
		require.NoError(t, safetensorsx.Write(&buf, all, r.Metadata()))
		back, err := safetensorsx.Read(&buf)
		require.NoError(t, err)
		require.Len(t, back, len(all))
		for name, x := range all {
			one, err := r.Tensor(name)
			require.NoError(t, err)
			require.Equal(t, cBytes(t, x), cBytes(t, one))
			require.Equal(t, cBytes(t, x), cBytes(t, back[name]))
		}
	})
}
