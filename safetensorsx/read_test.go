package safetensorsx_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// readAllWays reads data (a whole file) by every path that reads every tensor: the sized ones,
// which read small tensors in shared blocks, and a stream of unknown length, which reads each
// tensor on its own.
func readAllWays(t *testing.T, data []byte) map[string]map[string]*core.Tensor {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.safetensors")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	out := map[string]map[string]*core.Tensor{}
	var err error
	out["ReadFile"], err = safetensorsx.ReadFile(path)
	require.NoError(t, err)
	out["Read"], err = safetensorsx.Read(bytes.NewReader(data))
	require.NoError(t, err)
	r, err := safetensorsx.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	out["Reader.ReadAll"], err = r.ReadAll()
	require.NoError(t, err)
	out["Read (unknown length)"], err = safetensorsx.Read(onlyReader{bytes.NewReader(data)})
	require.NoError(t, err)
	return out
}

// TestReadSmallTensorsShareBlocks: small tensors are read into one shared block, each 64-byte
// aligned even where the file has them misaligned (as older writers left them), with the same
// elements as when each is read on its own; the block outlives everything but one of them.
func TestReadSmallTensorsShareBlocks(t *testing.T) {
	big := make([]byte, 128<<10) // over the 64 KiB under which tensors share blocks
	for i := range big {
		big[i] = byte(i * 7)
	}
	f64 := binary.LittleEndian.AppendUint64(nil, math.Float64bits(-2.25))
	f64 = binary.LittleEndian.AppendUint64(f64, math.Float64bits(1e300))
	var data []byte
	var entries string
	for _, e := range []struct {
		name, dtype, shape string
		b                  []byte
	}{
		{"a", "U8", "[3]", []byte{1, 2, 3}},
		{"b", "F32", "[1]", binary.LittleEndian.AppendUint32(nil, math.Float32bits(1.5))}, // at byte 3
		{"c", "BOOL", "[2]", []byte{0, 7}},
		{"d", "F64", "[2]", f64}, // at byte 9
		{"big", "U8", fmt.Sprintf("[%d]", len(big)), big},
		{"e", "I16", "[1]", []byte{0xfe, 0xff}},
		{"f", "I16", "[]", []byte{0x02, 0x01}},
	} {
		if entries != "" {
			entries += ","
		}
		entries += fmt.Sprintf(`%q:{"dtype":%q,"shape":%s,"data_offsets":[%d,%d]}`, e.name, e.dtype, e.shape, len(data), len(data)+len(e.b))
		data = append(data, e.b...)
	}
	for way, ts := range readAllWays(t, file("{"+entries+"}", data)) {
		t.Run(way, func(t *testing.T) {
			require.Len(t, ts, 7)
			for name, x := range ts {
				assert.Zero(t, uintptr(x.Data())%core.Alignment, "%s: 64-byte aligned", name)
				assert.False(t, x.ReadOnly(), name)
				assert.NotZero(t, x.Flags()&core.FlagIsCopied, name)
			}
			assert.Equal(t, []byte{1, 2, 3}, cBytes(t, ts["a"]))
			assert.Equal(t, []byte{0, 1}, cBytes(t, ts["c"]), "bools normalised")
			assert.Equal(t, big, cBytes(t, ts["big"]))
			v, err := core.Elements[float64](ts["d"])
			require.NoError(t, err)
			assert.Equal(t, []float64{-2.25, 1e300}, v)
			e, err := core.At[int16](ts["e"], 0)
			require.NoError(t, err)
			assert.Equal(t, int16(-2), e)
			f, err := core.At[int16](ts["f"])
			require.NoError(t, err)
			assert.Equal(t, int16(0x0102), f)

			// writing one tensor leaves its neighbours alone
			a, err := core.Elements[uint8](ts["a"])
			require.NoError(t, err)
			for i := range a {
				a[i] = 0xff
			}
			assert.Equal(t, []byte{0, 1}, cBytes(t, ts["c"]))

			if way != "Read (unknown length)" {
				// a, b, c, d share a block, each in its own 64-byte slot: that block (not 7
				// allocations) is what the small tensors cost, and what any one of them keeps alive
				base := uintptr(ts["a"].Data())
				for i, name := range []string{"b", "c", "d"} {
					assert.Equal(t, base+uintptr(64*(i+1)), uintptr(ts[name].Data()), name)
				}
			}

			// b alone keeps the block: its element survives collections and new allocations
			b := ts["b"]
			clear(ts)
			for range 3 {
				runtime.GC()
				_ = make([]byte, 1<<20)
			}
			v32, err := core.At[float32](b, 0)
			require.NoError(t, err)
			assert.Equal(t, float32(1.5), v32)
		})
	}
}

// TestReadBlocksSplit: runs of small tensors longer than a block are split into several blocks,
// and every tensor reads the same by every path; empty tensors come through as empty.
func TestReadBlocksSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string][]byte{}
	ts := map[string]*core.Tensor{}
	for i := range 40 {
		n := 1 + rng.IntN(60<<10) // under 64 KiB each, 1.2 MiB on average in all: several blocks
		if i%13 == 5 {
			n = 0
		}
		raw := make([]byte, n)
		for k := range raw {
			raw[k] = byte(rng.Uint32())
		}
		name := fmt.Sprintf("t%02d", i)
		want[name] = raw
		ts[name] = fromBytes(t, core.Uint8, []int64{int64(n)}, raw)
	}
	var buf bytes.Buffer
	require.NoError(t, safetensorsx.Write(&buf, ts, nil))
	for way, got := range readAllWays(t, buf.Bytes()) {
		require.Len(t, got, len(want), way)
		for name, raw := range want {
			assert.Equal(t, raw, cBytes(t, got[name]), "%s: %s", way, name)
			assert.Equal(t, []int64{int64(len(raw))}, got[name].Shape(), "%s: %s", way, name)
		}
	}
}
