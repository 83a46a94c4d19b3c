package ggufx_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// raw builds GGUF bytes field by field, independently of Write, for hostile and layout tests.
type raw struct{ b []byte }

func (r *raw) u8(v uint8) *raw   { r.b = append(r.b, v); return r }
func (r *raw) u16(v uint16) *raw { r.b = binary.LittleEndian.AppendUint16(r.b, v); return r }
func (r *raw) u32(v uint32) *raw { r.b = binary.LittleEndian.AppendUint32(r.b, v); return r }
func (r *raw) u64(v uint64) *raw { r.b = binary.LittleEndian.AppendUint64(r.b, v); return r }
func (r *raw) f32(v float32) *raw {
	return r.u32(math.Float32bits(v))
}
func (r *raw) str(s string) *raw { r.u64(uint64(len(s))); r.b = append(r.b, s...); return r }
func (r *raw) bytes(b ...byte) *raw {
	r.b = append(r.b, b...)
	return r
}

// start writes magic, version and counts.
func start(version uint32, tensors, kvs uint64) *raw {
	r := &raw{b: []byte("GGUF")}
	return r.u32(version).u64(tensors).u64(kvs)
}

// tensor writes one tensor info.
func (r *raw) tensor(name string, typ uint32, off uint64, dims ...uint64) *raw {
	r.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		r.u64(d)
	}
	return r.u32(typ).u64(off)
}

// data pads to align and appends n bytes of data made by fill (or zeros).
func (r *raw) data(align int, n int, fill func(i int) byte) *raw {
	for len(r.b)%align != 0 {
		r.b = append(r.b, 0)
	}
	for i := range n {
		v := byte(0)
		if fill != nil {
			v = fill(i)
		}
		r.b = append(r.b, v)
	}
	return r
}

// file writes b to a new file and returns its path.
func file(t testing.TB, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.gguf")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}
