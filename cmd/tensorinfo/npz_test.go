package main

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// sharedBlobNPZ returns a zip archive of one deflated member holding npy and n directory entries
// ("a0.npy", "a1.npy", ...) that all point at it: every entry would inflate the same stream.
func sharedBlobNPZ(t testing.TB, n int, npy []byte) []byte {
	t.Helper()
	var comp bytes.Buffer
	fw, err := flate.NewWriter(&comp, flate.BestCompression)
	require.NoError(t, err)
	_, err = fw.Write(npy)
	require.NoError(t, err)
	require.NoError(t, fw.Close())
	le := binary.LittleEndian
	crc := crc32.ChecksumIEEE(npy)
	fixed := func(b []byte) []byte { // version needed, flags, deflate, time and date, CRC, sizes
		b = le.AppendUint16(le.AppendUint16(le.AppendUint16(b, 20), 0), 8)
		b = le.AppendUint32(le.AppendUint32(b, 0), crc)
		return le.AppendUint32(le.AppendUint32(b, uint32(comp.Len())), uint32(len(npy)))
	}
	b := fixed(le.AppendUint32(nil, 0x04034b50))
	b = append(le.AppendUint16(le.AppendUint16(b, 6), 0), "a0.npy"...)
	b = append(b, comp.Bytes()...)
	dir := len(b)
	for i := range n {
		name := "a" + strconv.Itoa(i) + ".npy"
		b = fixed(le.AppendUint16(le.AppendUint32(b, 0x02014b50), 20))
		b = append(le.AppendUint16(b, uint16(len(name))), make([]byte, 12)...)
		b = append(le.AppendUint32(b, 0), name...) // every entry's local header is the one at 0
	}
	end := len(b)
	tail := le.AppendUint32(nil, 0x06054b50)
	tail = le.AppendUint32(tail, 0)
	tail = le.AppendUint16(le.AppendUint16(tail, uint16(n)), uint16(n))
	tail = le.AppendUint32(le.AppendUint32(tail, uint32(end-dir)), uint32(dir))
	return append(b, le.AppendUint16(tail, 0)...)
}

// 2,000 directory entries over one deflated 16 MiB array (32 GiB if each were inflated, the
// review's archive inflated 500 GiB) are refused before anything is inflated.
func TestNPZSharedBlob(t *testing.T) {
	var npy bytes.Buffer
	require.NoError(t, numpyx.Write(&npy, core.MustNew(core.Float64, 2<<20)))
	path := filepath.Join(t.TempDir(), "bomb.npz")
	require.NoError(t, os.WriteFile(path, sharedBlobNPZ(t, 2000, npy.Bytes()), 0o644))
	code, out, errb := tensorinfo("-stats", path)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errb, `members "a0.npy" and "a1.npy" share bytes`)
}

// -max-inflated caps what one archive inflates: an 8 MB array of zeros, deflated to a few KB, is
// summarised under the default and refused under a cap of 1 MB, with an error naming the flag.
func TestNPZMaxInflated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zeros.npz")
	require.NoError(t, numpyx.WriteNPZ(path, map[string]*core.Tensor{"z": core.MustNew(core.Float64, 1000, 1000)}, numpyx.Compressed()))
	code, out, errb := tensorinfo("-stats", "-json", path)
	require.Equal(t, 0, code, errb)
	var rep []fileReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, 0.0, rep[0].Arrays[0].Stats.Max.v)

	for _, args := range [][]string{{"-stats"}, {"-repr"}} {
		code, _, errb = tensorinfo(append(args, "-max-inflated=1000000", path)...)
		assert.Equal(t, 1, code, args)
		assert.Contains(t, errb, "bytes are left of the MaxInflated cap", args)
		assert.Contains(t, errb, "-max-inflated=1000000", args)
	}
	code, _, errb = tensorinfo("-max-inflated=1000000", path)
	assert.Equal(t, 0, code, "listing inflates the headers only: %s", errb)
	code, _, _ = tensorinfo("-max-inflated=0", "-stats", path)
	assert.Equal(t, 0, code, "0: no limit")
	code, _, errb = tensorinfo("-max-inflated=-1", path)
	assert.Equal(t, 2, code)
	assert.Contains(t, errb, "-max-inflated=-1 is negative")
}

// A named pipe, a directory and a device are refused at once, with what they are: a named pipe
// nobody writes to used to block the command forever.
func TestNotRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "weights.npz")
	mkfifo(t, fifo)
	paths := map[string]string{fifo: "a named pipe (FIFO)", dir: "a directory"}
	if _, err := os.Stat(os.DevNull); err == nil {
		paths[os.DevNull] = "a character device"
	}
	for path, kind := range paths {
		done := make(chan string, 1)
		go func() {
			code, _, errb := tensorinfo("-stats", path)
			assert.Equal(t, 1, code)
			done <- errb
		}()
		select {
		case errb := <-done:
			assert.Equal(t, "tensorinfo: "+path+": it is "+kind+", not a regular file\n", errb)
		case <-time.After(5 * time.Second):
			unblock(fifo, done)
			t.Fatalf("%s: tensorinfo blocked", kind)
		}
	}
}

// unblock opens the named pipe fifo for writing, and closes it, until done has a value: each time
// lets a reader blocked opening the pipe go on (and read an empty file).
func unblock[T any](fifo string, done <-chan T) {
	for {
		select {
		case <-done:
			return
		case <-time.After(10 * time.Millisecond):
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscallNonblock, 0); err == nil {
				w.Close()
			}
		}
	}
}

// -stats of an archive of many members summarises every one (each found by key in constant
// time: BenchmarkStatsManyMembers shows the cost per member staying flat).
func TestStatsManyMembers(t *testing.T) {
	const n = 20000
	path := filepath.Join(t.TempDir(), "many.npz")
	require.NoError(t, os.WriteFile(path, manyMembers(t, n), 0o644))
	code, out, errb := tensorinfo("-stats", "-json", path)
	require.Equal(t, 0, code, errb)
	var rep []fileReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep[0].Arrays, n)
	for i, a := range rep[0].Arrays {
		require.Equal(t, "m"+strconv.Itoa(i), a.Name)
		require.Equal(t, float64(i), a.Stats.Min.v)
		require.Equal(t, float64(i)+3, a.Stats.Max.v)
	}
}

// manyMembers returns an archive of n stored members, member i holding the float32 values i to
// i+3.
func manyMembers(tb testing.TB, n int) []byte {
	var buf bytes.Buffer
	w := numpyx.NewNPZWriter(&buf)
	for i := range n {
		f := float32(i)
		require.NoError(tb, w.Write("m"+strconv.Itoa(i), core.MustFromSlice([]float32{f, f + 1, f + 2, f + 3})))
	}
	require.NoError(tb, w.Close())
	return buf.Bytes()
}

// BenchmarkStatsManyMembers runs -stats on archives of 1,000 to 100,000 small members and
// reports the cost per member, which stays flat when members are found by key in a map (a
// linear scan for each member made it grow with the archive: quadratic in all).
func BenchmarkStatsManyMembers(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run("members="+strconv.Itoa(n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "many.npz")
			require.NoError(b, os.WriteFile(path, manyMembers(b, n), 0o644))
			b.ResetTimer()
			for b.Loop() {
				r, err := inspect(path, options{stats: true})
				require.NoError(b, err)
				require.Len(b, r.Arrays, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
		})
	}
}
