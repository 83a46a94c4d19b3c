package gopeers_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	st "github.com/nlpodyssey/safetensors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// view is a tensor as the Go peer (github.com/nlpodyssey/safetensors) writes it.
type view struct {
	dt    st.DType
	shape []uint64
	data  []byte
}

func (v view) DType() st.DType { return v.dt }
func (v view) Shape() []uint64 { return v.shape }
func (v view) Data() []byte    { return v.data }
func (v view) DataLen() uint64 { return uint64(len(v.data)) }
func u64s(s []int64) []uint64 {
	out := make([]uint64, len(s))
	for i, d := range s {
		out[i] = uint64(d)
	}
	return out
}
func i64s(s []uint64) []int64 {
	out := make([]int64, len(s))
	for i, d := range s {
		out[i] = int64(d)
	}
	return out
}

// peerDTypes are the 13 dtypes the Go peer knows, by their common name.
var peerDTypes = []string{"BOOL", "U8", "I8", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64", "U64"}

// peerTensors makes random tensors of every peer dtype and a few shapes, as raw bytes.
func peerTensors(t *testing.T) map[string]view {
	rng := rand.New(rand.NewPCG(1, 2))
	out := map[string]view{}
	for _, name := range peerDTypes {
		dt, err := st.ParseDType(name)
		require.NoError(t, err)
		for i, shape := range [][]uint64{{}, {7}, {3, 5}, {0, 2}, {2, 3, 4}} {
			n := uint64(1)
			for _, d := range shape {
				n *= d
			}
			data := make([]byte, n*dt.Size())
			for k := range data {
				data[k] = byte(rng.Uint32())
				if name == "BOOL" {
					data[k] &= 1
				}
			}
			out[name+"/"+string(rune('a'+i))] = view{dt, shape, data}
		}
	}
	return out
}

// TestPeerWritesWeRead: files the Go peer writes read exactly here, from a file and a map.
func TestPeerWritesWeRead(t *testing.T) {
	want := peerTensors(t)
	b, err := st.Serialize(want, map[string]string{"framework": "nlpodyssey"})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "peer.safetensors")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	got, err := safetensorsx.ReadFile(path)
	require.NoError(t, err)
	f, err := safetensorsx.Open(path)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, map[string]string{"framework": "nlpodyssey"}, f.Metadata())
	mapped, err := f.Tensors()
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for name, v := range want {
		dt, err := safetensorsx.FromDType(v.dt.String())
		require.NoError(t, err)
		for _, x := range []*core.Tensor{got[name], mapped[name]} {
			assert.Equal(t, dt, x.DType(), name)
			assert.Equal(t, i64s(v.shape), x.Shape(), name)
			assert.True(t, bytes.Equal(v.data, cBytes(t, x)), name)
		}
	}
}

// TestWeWritePeerReads: files written here read exactly with the Go peer, tensor data and
// metadata alike. (Its own header lists tensors in name order, so the files differ from
// ours and the reference's in the header, not the data section.)
func TestWeWritePeerReads(t *testing.T) {
	src := peerTensors(t)
	ts := map[string]*core.Tensor{}
	for name, v := range src {
		dt, err := safetensorsx.FromDType(v.dt.String())
		require.NoError(t, err)
		ts[name] = fromBytes(t, dt, i64s(v.shape), v.data)
	}
	var buf bytes.Buffer
	require.NoError(t, safetensorsx.Write(&buf, ts, map[string]string{"k": "v"}))
	peer, err := st.Deserialize(buf.Bytes())
	require.NoError(t, err)
	require.Equal(t, len(src), peer.Len())
	for name, v := range src {
		pv, ok := peer.Tensor(name)
		require.True(t, ok, name)
		assert.Equal(t, v.dt, pv.DType(), name)
		assert.Equal(t, v.shape, pv.Shape(), name)
		assert.True(t, bytes.Equal(v.data, pv.Data()), name)
	}
	// the data sections agree: both writers order by dtype alignment, then name
	peerBytes, err := st.Serialize(src, map[string]string{"k": "v"})
	require.NoError(t, err)
	ours, err := safetensorsx.ReadHeader(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	theirs, err := safetensorsx.ReadHeader(bytes.NewReader(peerBytes))
	require.NoError(t, err)
	assert.Equal(t, ours.Tensors, theirs.Tensors)
	assert.Equal(t, buf.Bytes()[ours.DataOffset:], peerBytes[theirs.DataOffset:])
}

// cBytes returns x's elements in C order, whatever its layout (memory.WriteTo).
func cBytes(t testing.TB, x *core.Tensor) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := memory.WriteTo(&buf, x)
	require.NoError(t, err)
	return buf.Bytes()
}

// fromBytes makes a Go-memory tensor of dt and shape holding raw (C order).
func fromBytes(t testing.TB, dt core.DLDataType, shape []int64, raw []byte) *core.Tensor {
	t.Helper()
	x, err := core.New(dt, shape...)
	require.NoError(t, err)
	b, err := x.Bytes()
	require.NoError(t, err)
	require.Equal(t, len(b), len(raw), "%s %v", dt, shape)
	copy(b, raw)
	return x
}
