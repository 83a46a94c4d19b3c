package memory_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/stretchr/testify/require"
)

// FuzzNewUninitParts makes blocks of parts from arbitrary descriptions (what a file's header
// says, in a reader): a refused description allocates nothing and names a sentinel; an accepted
// one gives parts whose bytes lie inside the block, each reading back what was written through
// the block, and the block (mapped here from 64 bytes) goes back exactly once when every part
// and the block are released, in an order the input chooses.
func FuzzNewUninitParts(f *testing.F) {
	f.Add(int64(256), []byte{0, 2, 32, 1, 4, 4}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0}, uint8(0))
	f.Add(int64(64), []byte{1, 8, 1, 0}, []byte{}, uint8(3))
	f.Add(int64(-1), []byte{}, []byte{}, uint8(0))
	f.Add(int64(1<<20), []byte{4, 6, 1, 5, 3, 2, 2, 2, 2, 2}, []byte{1, 0, 0, 0, 0, 0, 0, 0}, uint8(1))
	prev := memory.SetAllocation(memory.Allocation{MappedMin: 64, CacheBytes: 16 << 20, CacheIdle: time.Second})
	f.Cleanup(func() { memory.SetAllocation(prev) })
	leakcheck.Settle() // earlier tests' garbage must not move the counts below
	f.Fuzz(func(t *testing.T, size int64, desc, offsets []byte, order uint8) {
		size %= 1 << 22 // bounded: the block is really allocated
		// desc: per part, code, bits, lanes, ndim, then ndim dimensions (one byte each)
		var parts []memory.Part
		offs := int64s(offsets, 64)
		for len(desc) >= 4 && len(parts) < 64 {
			nd := int(desc[3] % 8)
			if len(desc) < 4+nd {
				break
			}
			shape := make([]int64, nd)
			for i := range shape {
				shape[i] = int64(desc[4+i])
			}
			parts = append(parts, memory.Part{Offset: offs[len(parts)] % (1 << 23), Shape: shape,
				DType: core.DLDataType{Code: core.DataTypeCode(desc[0] % 8), Bits: desc[1], Lanes: uint16(desc[2])}})
			desc = desc[4+nd:]
		}
		base := core.LiveForeign()
		_, live0 := memory.PoolBytes()
		block, ts, err := memory.NewUninitParts(size, parts)
		if err != nil {
			require.ErrorIs(t, err, core.ErrInvalid)
			require.Equal(t, base, core.LiveForeign(), "a refused block allocates nothing")
			_, live := memory.PoolBytes()
			require.Equal(t, live0, live)
			return
		}
		require.Len(t, ts, len(parts))
		h, err := core.Hold(block)
		require.NoError(t, err)
		b, err := block.Bytes()
		require.NoError(t, err)
		require.Len(t, b, int(size))
		for i := range b {
			b[i] = byte(i * 7)
		}
		lo, hi := block.ByteRange()
		for i, x := range ts {
			require.Equal(t, parts[i].Shape, x.Shape(), "part %d", i)
			require.Equal(t, parts[i].DType, x.DType(), "part %d", i)
			if x.Empty() {
				continue
			}
			xlo, xhi := x.ByteRange()
			require.True(t, xlo >= lo && xhi <= hi, "part %d: [%#x, %#x) outside the block [%#x, %#x)", i, xlo, xhi, lo, hi)
			xb, err := x.ReadOnlyBytes()
			require.NoError(t, err)
			off := int(parts[i].Offset)
			for k := range xb {
				if xb[k] != byte((off+k)*7) {
					require.Equal(t, byte((off+k)*7), xb[k], "part %d byte %d", i, k)
				}
			}
		}
		h.Release()
		// release in an order the input picks, with a view of one part outliving the rest
		var v *core.Tensor
		if len(ts) > 0 {
			v, err = ts[int(order)%len(ts)].View()
			require.NoError(t, err)
		}
		if order%2 == 0 {
			block.Release()
		}
		for k := range ts {
			ts[(k*int(order|1))%len(ts)].Release() // an odd step: a permutation when len is a power of two, repeats otherwise
		}
		for _, x := range ts {
			x.Release()
		}
		block.Release()
		if v != nil {
			require.Equal(t, v.Foreign(), core.LiveForeign() == base+1, "the view alone holds a mapped block")
			v.Release()
		}
		require.Equal(t, base, core.LiveForeign(), "every holder released: the block went back")
		_, live := memory.PoolBytes()
		require.Equal(t, live0, live)
	})
}

// int64s decodes up to n little-endian int64 values from b, zero-padded.
func int64s(b []byte, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		var w [8]byte
		if len(b) > 0 {
			copy(w[:], b)
			if len(b) >= 8 {
				b = b[8:]
			} else {
				b = nil
			}
		}
		out[i] = int64(binary.LittleEndian.Uint64(w[:]))
	}
	return out
}
