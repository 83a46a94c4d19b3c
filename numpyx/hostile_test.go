package numpyx_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// npyFile builds a version 1.0 .npy file with the given dict and data.
func npyFile(dict string, data []byte) []byte {
	b := []byte(numpyx.Magic + "\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	b = append(b, dict...)
	return append(b, data...)
}

func TestParseHeaderAccepts(t *testing.T) {
	tests := []struct {
		dict    string
		dt      core.DLDataType
		big     bool
		fortran bool
		shape   []int64
	}{
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", core.Float32, false, false, []int64{2, 3}},
		{"{'shape': (3,), 'descr': '>i8', 'fortran_order': True}", core.Int64, true, true, []int64{3}},
		{`{"descr": "|b1", "fortran_order": False, "shape": ()}` + "   \n", core.Bool, false, false, []int64{}},
		{"{'descr':'<c16','fortran_order':False,'shape':(4L, 5L),}", core.Complex128, false, false, []int64{4, 5}},
		{"{'descr': '|u1', 'fortran_order': False, 'shape': (0, 7), }", core.Uint8, false, false, []int64{0, 7}},
		{"{'descr': '<f2', 'fortran_order': False, 'shape': ((6)), }", core.Float16, false, false, nil},
	}
	for _, tc := range tests {
		h, err := numpyx.ParseHeader([]byte(tc.dict))
		if tc.shape == nil { // ((6)) is the int 6, not a tuple
			assert.ErrorIs(t, err, numpyx.ErrHeader, tc.dict)
			continue
		}
		require.NoError(t, err, tc.dict)
		assert.Equal(t, tc.dt, h.DType, tc.dict)
		assert.Equal(t, tc.big, h.BigEndian, tc.dict)
		assert.Equal(t, tc.fortran, h.Fortran, tc.dict)
		assert.Equal(t, tc.shape, h.Shape, tc.dict)
	}
}

// TestHostile feeds malformed files to every reader: each must return the right sentinel,
// never panic, never hang, and never allocate what the bytes present do not back.
func TestHostile(t *testing.T) {
	good := npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n", make([]byte, 16))
	long := func(n int) string { return strings.Repeat("1, ", n) }
	tests := []struct {
		name string
		file []byte
		want error
	}{
		{"empty", nil, numpyx.ErrTruncated},
		{"short magic", []byte("\x93NUM"), numpyx.ErrTruncated},
		{"bad magic", []byte("PK\x03\x04zzzzzzzzzzzzzzz"), numpyx.ErrFormat},
		{"version 4.0", []byte(numpyx.Magic + "\x04\x00\x10\x00"), numpyx.ErrVersion},
		{"version 1.1", []byte(numpyx.Magic + "\x01\x01\x10\x00"), numpyx.ErrVersion},
		{"no length", []byte(numpyx.Magic + "\x01\x00\x10"), numpyx.ErrTruncated},
		{"header past EOF", []byte(numpyx.Magic + "\x01\x00\xff\xff{'descr'"), numpyx.ErrTruncated},
		{"huge v2 header", []byte(numpyx.Magic + "\x02\x00\xff\xff\xff\xff{"), numpyx.ErrHeader},
		{"data truncated", good[:len(good)-1], numpyx.ErrTruncated},
		{"shape exceeds data", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", nil), numpyx.ErrTruncated},
		{"shape overflows", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", nil), numpyx.ErrHeader},
		{"huge int", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,), }", nil), numpyx.ErrHeader},
		{"negative dim", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (-1, 2), }", nil), numpyx.ErrHeader},
		{"object dtype", npyFile("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)), numpyx.ErrUnsupportedDType},
		{"structured dtype", npyFile("{'descr': [('a', '<i4'), ('b', '<f8')], 'fortran_order': False, 'shape': (1,), }", nil), numpyx.ErrUnsupportedDType},
		{"unicode dtype", npyFile("{'descr': '<U5', 'fortran_order': False, 'shape': (1,), }", nil), numpyx.ErrUnsupportedDType},
		{"long double", npyFile("{'descr': '<f16', 'fortran_order': False, 'shape': (1,), }", nil), numpyx.ErrUnsupportedDType},
		{"datetime", npyFile("{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (1,), }", nil), numpyx.ErrUnsupportedDType},
		{"not a dict", npyFile("['descr', 'fortran_order', 'shape']", nil), numpyx.ErrHeader},
		{"a call", npyFile("{'descr': __import__('os'), 'fortran_order': False, 'shape': (1,), }", nil), numpyx.ErrHeader},
		{"missing key", npyFile("{'descr': '<f8', 'shape': (1,), }", nil), numpyx.ErrHeader},
		{"extra key", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}", nil), numpyx.ErrHeader},
		{"duplicate key", npyFile("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,)}", nil), numpyx.ErrHeader},
		{"fortran not bool", npyFile("{'descr': '<f8', 'fortran_order': 0, 'shape': (1,), }", nil), numpyx.ErrHeader},
		{"shape list", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': [1], }", nil), numpyx.ErrHeader},
		{"shape float", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1.5,), }", nil), numpyx.ErrHeader},
		{"too many dims", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': ("+long(65)+"), }", nil), numpyx.ErrHeader},
		{"deep nesting", npyFile("{'descr': "+strings.Repeat("[", 5000)+", }", nil), numpyx.ErrHeader},
		{"unterminated", npyFile("{'descr': '<f8, 'fortran_order': False}", nil), numpyx.ErrHeader},
		{"escape", npyFile("{'descr': '<f\\x38', 'fortran_order': False, 'shape': (1,)}", nil), numpyx.ErrHeader},
		{"trailing junk", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), } x", nil), numpyx.ErrHeader},
		{"bar on f8", npyFile("{'descr': '|f8', 'fortran_order': False, 'shape': (1,), }", nil), numpyx.ErrHeader},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := numpyx.Read(bytes.NewReader(tc.file))
			require.ErrorIs(t, err, tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "numpyx: "), err.Error())
			assert.NoError(t, errstest.Check(err, sentinels...))
			_, err = numpyx.Read(onlyReader{bytes.NewReader(tc.file)})
			require.ErrorIs(t, err, tc.want)
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".npy")
			require.NoError(t, os.WriteFile(path, tc.file, 0o644))
			_, err = numpyx.ReadFile(path)
			require.ErrorIs(t, err, tc.want)
			_, err = numpyx.Map(path)
			require.ErrorIs(t, err, tc.want)
			assert.NoError(t, errstest.Check(err, sentinels...))
		})
	}
	// the readers that cannot tell the size grow as data arrives: a header promising 8 GB with
	// 1 MB present allocates about 2 MB
	lie := npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000,), }", make([]byte, 1<<20))
	allocs := testing.AllocsPerRun(1, func() {
		_, err := numpyx.Read(onlyReader{bytes.NewReader(lie)})
		require.ErrorIs(t, err, numpyx.ErrTruncated)
	})
	assert.Less(t, allocs, 100.0)
}

func TestAllocationBounded(t *testing.T) {
	lie := npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000,), }", make([]byte, 1<<20))
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_, _ = numpyx.Read(onlyReader{bytes.NewReader(lie)})
		}
	})
	assert.Less(t, res.AllocedBytesPerOp(), int64(4<<20), "a lying header must not cost more than the bytes present")
}

// TestNPZHostile builds broken archives.
func TestNPZHostile(t *testing.T) {
	var ok bytes.Buffer
	w := numpyx.NewNPZWriter(&ok)
	require.NoError(t, w.Write("a", core.MustFromSlice([]float64{1, 2, 3, 4})))
	require.NoError(t, w.Close())

	_, err := numpyx.NewReader(bytes.NewReader([]byte("not a zip")), 9)
	require.ErrorIs(t, err, numpyx.ErrFormat)

	// a member whose header promises more than it holds
	var lie bytes.Buffer
	for _, comp := range []bool{false, true} {
		lie.Reset()
		var opts []adapters.Option
		if comp {
			opts = append(opts, numpyx.Compressed())
		}
		zw := numpyx.NewNPZWriter(&lie, opts...)
		require.NoError(t, zw.Write("a", core.MustFromSlice([]float64{1, 2, 3, 4})))
		require.NoError(t, zw.Close())
		b := bytes.Replace(lie.Bytes(), []byte("(4,)"), []byte("(9,)"), 1)
		if !comp {
			require.NotEqual(t, lie.Bytes(), b)
		} else {
			// rebuild by hand: deflate the lying member
			b = rawNPZ(t, comp, "a.npy", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (100000000,), }", make([]byte, 64)))
		}
		z, err := numpyx.NewReader(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		_, err = z.Read("a")
		require.Error(t, err)
		assert.True(t, errors.Is(err, numpyx.ErrTruncated) || errors.Is(err, numpyx.ErrFormat), err.Error())
		assert.NoError(t, errstest.Check(err, sentinels...))
	}

	z, err := numpyx.NewReader(bytes.NewReader(ok.Bytes()), int64(ok.Len()))
	require.NoError(t, err)
	_, err = z.Read("missing")
	require.ErrorIs(t, err, numpyx.ErrNotFound)
	require.Equal(t, []string{"a"}, z.Keys())

	// corrupt data: the CRC catches it
	b := bytes.Clone(ok.Bytes())
	i := bytes.Index(b, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}) // 1.0 as little-endian float64
	require.Positive(t, i)
	b[i+7] = 0x40
	z, err = numpyx.NewReader(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	_, err = z.Read("a")
	require.ErrorIs(t, err, numpyx.ErrFormat)

	// duplicate keys on write and read
	w = numpyx.NewNPZWriter(&bytes.Buffer{})
	require.NoError(t, w.Write("a", core.Scalar(1.0)))
	require.ErrorIs(t, w.Write("a", core.Scalar(1.0)), numpyx.ErrDuplicateKey)
	dup := rawNPZ(t, false, "a.npy", ok.Bytes()[:0], "a", nil)
	_, err = numpyx.NewReader(bytes.NewReader(dup), int64(len(dup)))
	require.ErrorIs(t, err, numpyx.ErrDuplicateKey)
}

// Write refuses what NumPy cannot hold.
func TestWriteRefuses(t *testing.T) {
	bf := core.MustNew(core.BFloat16, 3)
	err := numpyx.Write(&bytes.Buffer{}, bf)
	require.ErrorIs(t, err, numpyx.ErrUnsupportedDType)
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	x := core.MustFromSlice([]float32{1, 2})
	x.Release()
	require.ErrorIs(t, numpyx.Write(&bytes.Buffer{}, x), core.ErrReleased)
	// a view repeating one element into 2^64 bytes: refused before a byte is written (the
	// count wrapped to 0 and the streaming writer divided by it)
	huge, err := core.MustFromSlice([]float64{1}, 1).BroadcastTo(1<<31, 1<<31)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.ErrorIs(t, numpyx.Write(&buf, huge), core.ErrOverflow)
	assert.Zero(t, buf.Len())
	_, err = numpyx.HeaderOf(huge)
	require.ErrorIs(t, err, core.ErrOverflow)
}
