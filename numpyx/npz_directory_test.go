package numpyx_test

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/tensorio/notregular"
	"github.com/dlpack-go/dlpack/numpyx"
)

// overlappingNPZ returns a zip archive of one deflated member holding npy, and n directory
// entries ("a0.npy", "a1.npy", ...) that all point at it: a zip bomb's shape, where every
// entry inflates the same compressed stream again.
func overlappingNPZ(t testing.TB, n int, npy []byte) []byte {
	t.Helper()
	var comp bytes.Buffer
	fw, err := flate.NewWriter(&comp, flate.BestCompression)
	require.NoError(t, err)
	_, err = fw.Write(npy)
	require.NoError(t, err)
	require.NoError(t, fw.Close())
	le := binary.LittleEndian
	crc, csize, usize := crc32.ChecksumIEEE(npy), uint32(comp.Len()), uint32(len(npy))
	fixed := func(b []byte) []byte { // version needed, flags, method, time and date, sizes
		b = le.AppendUint16(b, 20)
		b = le.AppendUint16(b, 0)
		b = le.AppendUint16(b, 8)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, crc)
		b = le.AppendUint32(b, csize)
		return le.AppendUint32(b, usize)
	}
	b := le.AppendUint32(nil, 0x04034b50)
	b = fixed(b)
	b = le.AppendUint16(b, uint16(len("a0.npy")))
	b = le.AppendUint16(b, 0)
	b = append(b, "a0.npy"...)
	b = append(b, comp.Bytes()...)
	dir := len(b)
	for i := range n {
		name := "a" + strconv.Itoa(i) + ".npy"
		b = le.AppendUint32(b, 0x02014b50)
		b = le.AppendUint16(b, 20) // made by
		b = fixed(b)
		b = le.AppendUint16(b, uint16(len(name)))
		b = append(b, make([]byte, 12)...) // extra and comment lengths, disk, attributes
		b = le.AppendUint32(b, 0)          // every entry's local header is the one at 0
		b = append(b, name...)
	}
	end := len(b)
	b = le.AppendUint32(b, 0x06054b50)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint16(b, uint16(n))
	b = le.AppendUint16(b, uint16(n))
	b = le.AppendUint32(b, uint32(end-dir))
	b = le.AppendUint32(b, uint32(dir))
	return le.AppendUint16(b, 0)
}

// A directory of 2,000 entries over one deflated 16 MiB array (32 GiB if each were inflated)
// is refused when it is opened, before anything is inflated; one entry alone is read.
func TestNPZOverlappingMembers(t *testing.T) {
	var npy bytes.Buffer
	require.NoError(t, numpyx.Write(&npy, core.MustNew(core.Float64, 2<<20)))
	bomb := overlappingNPZ(t, 2000, npy.Bytes())
	require.Less(t, len(bomb), 200<<10)
	r := &countingReaderAt{r: bytes.NewReader(bomb)}
	_, err := numpyx.NewReader(r, int64(len(bomb)))
	require.ErrorIs(t, err, numpyx.ErrFormat)
	assert.Contains(t, err.Error(), `members "a0.npy" and "a1.npy" share bytes`)
	assert.Less(t, r.n.Load(), int64(2*len(bomb)), "the directory is checked without inflating anything")

	name := filepath.Join(t.TempDir(), "bomb.npz")
	require.NoError(t, os.WriteFile(name, bomb, 0o644))
	_, err = numpyx.ReadNPZ(name)
	require.ErrorIs(t, err, numpyx.ErrFormat)

	one := overlappingNPZ(t, 1, npy.Bytes())
	z, err := numpyx.NewReader(bytes.NewReader(one), int64(len(one)))
	require.NoError(t, err)
	x, err := z.Read("a0")
	require.NoError(t, err)
	assert.Equal(t, []int64{2 << 20}, x.Shape())
	x.Release()
}

// A deflated member whose compressed size runs past the end of the archive is refused on
// opening (ErrTruncated).
func TestNPZMemberPastEnd(t *testing.T) {
	var npy bytes.Buffer
	require.NoError(t, numpyx.Write(&npy, core.MustNew(core.Float64, 1000)))
	b := overlappingNPZ(t, 1, npy.Bytes())
	// the central directory's compressed size: 20 bytes into its entry
	dir := bytes.Index(b, []byte{0x50, 0x4b, 0x01, 0x02})
	binary.LittleEndian.PutUint32(b[dir+20:], uint32(len(b)))
	_, err := numpyx.NewReader(bytes.NewReader(b), int64(len(b)))
	require.ErrorIs(t, err, numpyx.ErrTruncated)
	assert.Contains(t, err.Error(), `member "a0.npy" claims`)
}

// Every file opener refuses a named pipe, a directory and a device with ErrNotRegularFile, at
// once: a named pipe nobody writes to used to block the opener forever.
func TestOpenersRefuseNonRegularFiles(t *testing.T) {
	paths, fifo := notregular.Paths(t, "fifo.npz")
	openers := map[string]func(string) error{
		"ReadFile": func(p string) error { _, err := numpyx.ReadFile(p); return err },
		"Map":      func(p string) error { _, err := numpyx.Map(p); return err },
		"Open":     func(p string) error { _, err := numpyx.Open(p); return err },
		"ReadNPZ":  func(p string) error { _, err := numpyx.ReadNPZ(p); return err },
	}
	for opener, open := range openers {
		for kind, path := range paths {
			t.Run(opener+"/"+kind, func(t *testing.T) {
				err := notregular.Within(t, fifo, func() error { return open(path) })
				require.ErrorIs(t, err, numpyx.ErrNotRegularFile)
				assert.Equal(t, fmt.Sprintf("numpyx: %s is %s, not a regular file", path, kind), err.Error())
			})
		}
	}
}

// Open streams an array's data bytes, exactly DataLen of them, then checks the member: io.EOF
// after a good member, ErrFormat when the checksum fails, ErrTruncated when the member ends early,
// ErrTooLarge past the cap.
func TestNPZOpen(t *testing.T) {
	x := core.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	var buf bytes.Buffer
	w := numpyx.NewNPZWriter(&buf, numpyx.Compressed())
	require.NoError(t, w.Write("x", x))
	require.NoError(t, w.Close())
	z, err := numpyx.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	h, rc, err := z.Open("x")
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 3}, h.Shape)
	data, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	want, err := x.ReadOnlyBytes()
	require.NoError(t, err)
	assert.Equal(t, want, data)
	_, _, err = z.Open("y")
	require.ErrorIs(t, err, numpyx.ErrNotFound)

	// a data byte changed under a stored member: the checksum fails at the end
	var stored bytes.Buffer
	w = numpyx.NewNPZWriter(&stored)
	require.NoError(t, w.Write("x", x))
	require.NoError(t, w.Close())
	b := bytes.Clone(stored.Bytes())
	i := bytes.Index(b, want)
	require.Positive(t, i)
	b[i] ^= 1
	z, err = numpyx.NewReader(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	_, rc, err = z.Open("x")
	require.NoError(t, err)
	_, err = io.ReadAll(rc)
	require.ErrorIs(t, err, numpyx.ErrFormat)
	rc.Close()

	// a header that promises more than the member holds
	lie := rawNPZ(t, true, "x.npy", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (100,), }", make([]byte, 64)))
	z, err = numpyx.NewReader(bytes.NewReader(lie), int64(len(lie)))
	require.NoError(t, err)
	_, rc, err = z.Open("x")
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	require.ErrorIs(t, err, numpyx.ErrTruncated)
	assert.Contains(t, err.Error(), `member "x" ends 736 data bytes early`)
	assert.Len(t, got, 64)
	rc.Close()

	// the cap: the array's 48 bytes are taken when it is opened
	z, err = numpyx.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), numpyx.MaxInflated(128+47))
	require.NoError(t, err)
	_, _, err = z.Open("x")
	require.ErrorIs(t, err, numpyx.ErrTooLarge)
	assert.Contains(t, err.Error(), `member "x" holds 48 data bytes`)
}

// BenchmarkNPZManyMembers opens an archive of many small members and reads every one: the cost
// per member stays flat as the archive grows (a key is found in a map; the directory's extents
// are sorted once).
func BenchmarkNPZManyMembers(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run("members="+strconv.Itoa(n), func(b *testing.B) {
			arc := manyMembers(b, n)
			b.ResetTimer()
			for b.Loop() {
				z, err := numpyx.NewReader(bytes.NewReader(arc), int64(len(arc)))
				require.NoError(b, err)
				for _, k := range z.Keys() {
					x, err := z.Read(k)
					require.NoError(b, err)
					x.Release()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
		})
	}
}

// manyMembers returns an archive of n stored members, each a float32 array of 4 elements.
func manyMembers(tb testing.TB, n int) []byte {
	var npy bytes.Buffer
	require.NoError(tb, numpyx.Write(&npy, core.MustFromSlice([]float32{1, 2, 3, 4})))
	pairs := make([]any, 0, 2*n)
	for i := range n {
		pairs = append(pairs, "m"+strconv.Itoa(i)+".npy", npy.Bytes())
	}
	return rawNPZ(tb, false, pairs...)
}
