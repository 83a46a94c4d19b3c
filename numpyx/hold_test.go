//go:build unix

package numpyx_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/foreignmem"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/numpyx"
)

// The writers hold the tensor for every w.Write: the tensor passed inline is the only holder of
// memory unmapped on release, and collections run throughout.
func TestWritersHoldTheirTensor(t *testing.T) {
	leakcheck.Check(t)
	src := core.MustNew(core.Float64, 300, 300)
	b, _ := src.Bytes()
	for i := range b {
		b[i] = byte(i * 7)
	}
	tr, err := src.Transpose()
	require.NoError(t, err)
	var releases []*atomic.Int32
	mk := func(x *core.Tensor) *core.Tensor {
		m, err := foreignmem.Twin(x)
		require.NoError(t, err)
		releases = append(releases, m.Releases)
		return m.Tensor
	}
	var want bytes.Buffer
	require.NoError(t, numpyx.Write(&want, src))
	var wantT bytes.Buffer
	require.NoError(t, numpyx.Write(&wantT, tr))
	dir := t.TempDir()
	foreignmem.Collect(t)
	for range 20 {
		var got bytes.Buffer
		require.NoError(t, numpyx.Write(&got, mk(src)))
		require.Equal(t, want.Bytes(), got.Bytes())
		got.Reset()
		require.NoError(t, numpyx.Write(slowWriter{&got}, mk(tr))) // streamed through the buffer
		require.Equal(t, wantT.Bytes(), got.Bytes())
		require.NoError(t, numpyx.WriteFile(filepath.Join(dir, "x.npy"), mk(src)))
		require.NoError(t, numpyx.WriteNPZ(filepath.Join(dir, "x.npz"), map[string]*core.Tensor{"a": mk(tr)}))
		c, err := memory.Cast(mapOnly(t, filepath.Join(dir, "x.npy")), core.Float32)
		require.NoError(t, err)
		require.Equal(t, []int64{300, 300}, c.Shape())
	}
	require.True(t, leakcheck.Until(func() bool { return foreignmem.ReleasedOnce(releases...) }), "an operand was never released")
}

// mapOnly maps name; the returned tensor is the only holder of the mapping.
func mapOnly(t *testing.T, name string) *core.Tensor {
	m, err := numpyx.Map(name)
	require.NoError(t, err)
	return m
}

// slowWriter writes in small pieces, so that a write spans many calls.
type slowWriter struct{ w io.Writer }

func (s slowWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), 4096)
		m, err := s.w.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

// A Go bool holds 0 or 1 and nothing else: Map of a bool file with other bytes reads and
// normalises it (flagged as a copy), or refuses under ZeroCopyOnly.
func TestMapBoolNormalised(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "b.npy")
	file := npyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }"+strings.Repeat(" ", 53)+"\n",
		[]byte{0, 1, 2, 255})
	require.NoError(t, os.WriteFile(name, file, 0o644))
	var copied bool
	m, err := numpyx.Map(name, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.True(t, copied)
	got, err := core.ReadOnlyElements[bool](m)
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, true, true}, got)
	for _, v := range got {
		b := *(*byte)(unsafe.Pointer(&v))
		assert.LessOrEqual(t, b, byte(1))
	}
	_, err = numpyx.Map(name, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	assert.Contains(t, err.Error(), "other than 0 and 1")

	// a clean bool file still maps
	clean := filepath.Join(dir, "c.npy")
	require.NoError(t, os.WriteFile(clean, npyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }"+strings.Repeat(" ", 53)+"\n",
		[]byte{0, 1, 1, 0}), 0o644))
	m, err = numpyx.Map(clean, adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.False(t, copied)
	assert.True(t, m.ReadOnly())
}

// Parsing a header costs a bounded amount whatever it holds: a header of nested lists under
// 1 MiB is refused after a few hundred values.
func TestHeaderParseBounded(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': [")
	for sb.Len() < 900_000 {
		sb.WriteString("[[[[[[1,2]]]]]],")
	}
	sb.WriteString("]}")
	dict := []byte(sb.String())
	var err error
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_, err = numpyx.ParseHeader(dict)
		}
	})
	require.ErrorIs(t, err, numpyx.ErrHeader)
	assert.Contains(t, err.Error(), "more than")
	assert.Less(t, res.AllocedBytesPerOp(), int64(len(dict)), "parsing allocated %d bytes for a %d-byte header",
		res.AllocedBytesPerOp(), len(dict))
}

// core and numpyx agree on shapes: an empty shape whose other dimensions overflow is refused by
// both, so no file numpyx writes is one it (or NumPy) refuses to read.
func TestOverflowingEmptyShapeRefused(t *testing.T) {
	_, err := numpyx.ParseHeader([]byte("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4611686018427387904, 4611686018427387904), }"))
	require.ErrorIs(t, err, numpyx.ErrHeader)
	_, err = core.New(core.Float64, 0, 1<<62, 1<<62)
	require.ErrorIs(t, err, core.ErrOverflow)
}

// MaxInflated caps what reading an archive inflates, over all reads: the arrays, and their
// .npy headers (128 bytes each here).
func TestNPZMaxInflated(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "z.npz")
	big := core.MustNew(core.Float64, 1000, 1000) // 8 MB of zeros: deflates to a few KB
	small := core.MustNew(core.Float64, 10)
	require.NoError(t, numpyx.WriteNPZ(name, map[string]*core.Tensor{"big": big, "small": small}, numpyx.Compressed()))
	fi, err := os.Stat(name)
	require.NoError(t, err)
	require.Less(t, fi.Size(), int64(100_000))
	const header = 128

	_, err = numpyx.ReadNPZ(name, numpyx.MaxInflated(1<<20))
	require.ErrorIs(t, err, numpyx.ErrTooLarge)
	assert.Contains(t, err.Error(), `"big"`)
	all, err := numpyx.ReadNPZ(name, numpyx.MaxInflated(8_000_080+2*header))
	require.NoError(t, err)
	assert.Len(t, all, 2)
	_, err = numpyx.ReadNPZ(name, numpyx.MaxInflated(8_000_080+2*header-1))
	require.ErrorIs(t, err, numpyx.ErrTooLarge, "one byte short")
	z, err := numpyx.Open(name, numpyx.MaxInflated(80+header))
	require.NoError(t, err)
	defer z.Close()
	_, err = z.Read("small")
	require.NoError(t, err, "80 bytes and the header fit")
	_, err = z.Read("small")
	require.ErrorIs(t, err, numpyx.ErrTooLarge, "the cap is over all reads")
}
