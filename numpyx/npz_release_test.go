package numpyx_test

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// bigNPZ returns an archive of stored members, each an 8 MB float64 array (mapped memory under
// core's default allocation), the member under corrupt with a data byte changed so that its
// CRC-32 fails.
func bigNPZ(t *testing.T, corrupt string, keys ...string) []byte {
	t.Helper()
	var pairs []any
	for _, k := range keys {
		x := core.MustNew(core.Float64, 1000, 1000)
		if k == corrupt {
			require.NoError(t, core.Set(x, 12345.0, 999, 999)) // a marker to find in the archive
		}
		var npy bytes.Buffer
		require.NoError(t, numpyx.Write(&npy, x))
		pairs = append(pairs, k+".npy", npy.Bytes())
	}
	b := rawNPZ(t, false, pairs...)
	if corrupt != "" {
		marker := binary.LittleEndian.AppendUint64(nil, math.Float64bits(12345))
		i := bytes.Index(b, marker)
		require.Positive(t, i)
		b[i] ^= 1
	}
	return b
}

// A member whose checksum fails after its array was read gets ErrFormat, and the array made
// for it goes back at once (no collection needed).
func TestNPZReadReleasesOnBadChecksum(t *testing.T) {
	b := bigNPZ(t, "a", "a", "ok")
	z, err := numpyx.NewReader(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	ok, err := z.Read("ok")
	require.NoError(t, err)
	if !ok.Foreign() {
		t.Skip("core maps no memory here")
	}
	ok.Release()
	base := core.LiveForeign()
	_, err = z.Read("a")
	require.ErrorIs(t, err, numpyx.ErrFormat)
	assert.Equal(t, base, core.LiveForeign(), "the array of a member whose checksum fails is released")
}

// ReadNPZ releases the arrays it read before the member that fails.
func TestReadNPZReleasesOnError(t *testing.T) {
	name := filepath.Join(t.TempDir(), "z.npz")
	require.NoError(t, os.WriteFile(name, bigNPZ(t, "z", "a", "b", "z"), 0o644))
	base := core.LiveForeign()
	_, err := numpyx.ReadNPZ(name)
	require.ErrorIs(t, err, numpyx.ErrFormat)
	assert.Equal(t, base, core.LiveForeign(), "the arrays read before the bad member are released")
}

// MaxInflated holds over reads from several goroutines at once (which NPZ allows): the reads
// that succeed never inflate more than the cap together, every other one fails with
// ErrTooLarge, and the race detector sees no race on the cap. (Bytes inflated by a read that
// then fails count too, so how many succeed depends on how the reads interleave; one after
// another, exactly as many as the cap holds do.)
func TestNPZMaxInflatedConcurrent(t *testing.T) {
	var buf bytes.Buffer
	w := numpyx.NewNPZWriter(&buf)
	require.NoError(t, w.Write("small", core.MustNew(core.Float64, 10))) // 80 data bytes, a 128-byte header
	require.NoError(t, w.Close())
	const perRead, limit = 80 + 128, 10 * (80 + 128)
	z, err := numpyx.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), numpyx.MaxInflated(limit))
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	okReads, capped := 0, 0
	for range 40 {
		wg.Go(func() {
			x, err := z.Read("small")
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				okReads++
				x.Release()
			} else if assert.ErrorIs(t, err, numpyx.ErrTooLarge) {
				capped++
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, okReads*perRead, limit, "the reads that succeeded fit the cap")
	assert.Equal(t, 40, okReads+capped)

	z, err = numpyx.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), numpyx.MaxInflated(limit))
	require.NoError(t, err)
	for i := range 10 {
		x, err := z.Read("small")
		require.NoError(t, err, "read %d", i)
		x.Release()
	}
	_, err = z.Read("small")
	require.ErrorIs(t, err, numpyx.ErrTooLarge, "ten reads of 208 bytes spend a cap of 2080")
}

// Read's memory is what its documentation says: Go memory for a small array, and for a large
// one (under core's default allocation, where it maps) a block from core's cache, foreign memory
// that goes back exactly when the tensor is released.
func TestReadMemory(t *testing.T) {
	small, err := numpyx.Read(bytes.NewReader(npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", make([]byte, 32))))
	require.NoError(t, err)
	assert.False(t, small.Foreign(), "a small array is Go memory")
	var npy bytes.Buffer
	require.NoError(t, numpyx.Write(&npy, core.MustNew(core.Float64, 1000, 1000)))
	base := core.LiveForeign()
	big, err := numpyx.Read(bytes.NewReader(npy.Bytes()))
	require.NoError(t, err)
	if !big.Foreign() {
		t.Skip("core maps no memory here")
	}
	assert.Equal(t, base+1, core.LiveForeign())
	big.Release()
	assert.Equal(t, base, core.LiveForeign(), "released: the block goes back at once")
}

// bombNPZ returns an archive of one deflated member: an array of one float64 followed by
// trailing bytes of zeros (which NumPy ignores), a gibibyte of them in about a megabyte.
func bombNPZ(t *testing.T, trailing int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "a.npy", Method: zip.Deflate})
	require.NoError(t, err)
	_, err = w.Write(npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)))
	require.NoError(t, err)
	zeros := make([]byte, 1<<20)
	for trailing > 0 {
		n, err := w.Write(zeros[:min(trailing, len(zeros))])
		require.NoError(t, err)
		trailing -= n
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// MaxInflated bounds what a member inflates to after its array too: a member of a small array
// and a gibibyte of trailing bytes (a megabyte deflated) is refused once they pass the cap,
// instead of inflating all of them (seconds of work per megabyte of archive); trailing bytes
// within the cap, and any without a cap, are read and ignored as NumPy ignores them.
func TestNPZMaxInflatedTrailing(t *testing.T) {
	bomb := bombNPZ(t, 1<<30)
	require.Less(t, len(bomb), 2<<20)
	r := &countingReaderAt{r: bytes.NewReader(bomb)}
	z, err := numpyx.NewReader(r, int64(len(bomb)), numpyx.MaxInflated(1<<20))
	require.NoError(t, err)
	r.n.Store(0)
	_, err = z.Read("a")
	require.ErrorIs(t, err, numpyx.ErrTooLarge)
	assert.Contains(t, err.Error(), `"a"`)
	assert.Less(t, r.n.Load(), int64(len(bomb)/10), "the trailing bytes were inflated far past the cap")

	small := bombNPZ(t, 1000)
	z, err = numpyx.NewReader(bytes.NewReader(small), int64(len(small)), numpyx.MaxInflated(128+1008))
	require.NoError(t, err)
	x, err := z.Read("a")
	require.NoError(t, err, "a 128-byte header, 8 data bytes and 1000 trailing ones fit a cap of 1136")
	x.Release()
	_, err = z.Read("a")
	require.ErrorIs(t, err, numpyx.ErrTooLarge, "the cap is spent")
	z, err = numpyx.NewReader(bytes.NewReader(small), int64(len(small)))
	require.NoError(t, err)
	x, err = z.Read("a")
	require.NoError(t, err, "no cap")
	x.Release()
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}
