package numpyx_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// sentinels are numpyx's own: none of their texts may lead a message before its cause (the
// tests of this package hold every message they provoke to errstest.Check with them).
var sentinels = []error{
	numpyx.ErrFormat, numpyx.ErrVersion, numpyx.ErrHeader, numpyx.ErrTruncated, numpyx.ErrUnsupportedDType,
	numpyx.ErrNotFound, numpyx.ErrDuplicateKey, numpyx.ErrTooLarge, numpyx.ErrNotRegularFile,
}

// TestErrorMessages provokes numpyx's refusals (malformed and truncated .npy files, dtypes it
// does not read or write, broken and hostile .npz archives, files that are not regular, tensors
// it cannot write) and holds each message to the module's rule: what was wrong first, each
// package prefix once, errors.Is still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	f8 := func(shape string) string {
		return "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }"
	}
	read := func(b []byte) func() error {
		return func() error { _, err := numpyx.Read(bytes.NewReader(b)); return err }
	}
	dir := t.TempDir()
	file := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, b, 0o644))
		return path
	}
	truncated := file("truncated.npy", npyFile(f8("(4,)"), make([]byte, 31)))
	bigEndian := file("big.npy", npyFile("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", make([]byte, 16)))
	npz := func(b []byte, opts ...adapters.Option) *numpyx.NPZ {
		z, err := numpyx.NewReader(bytes.NewReader(b), int64(len(b)), opts...)
		require.NoError(t, err)
		return z
	}
	var good bytes.Buffer
	w := numpyx.NewNPZWriter(&good, numpyx.Compressed())
	require.NoError(t, w.Write("x", core.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)))
	require.NoError(t, w.Close())
	var stored bytes.Buffer
	w = numpyx.NewNPZWriter(&stored)
	require.NoError(t, w.Write("x", core.MustFromSlice([]float64{1, 2})))
	require.NoError(t, w.Close())
	corrupt := bytes.Clone(stored.Bytes())
	i := bytes.Index(corrupt, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}) // 1.0 as little-endian float64
	require.Positive(t, i)
	corrupt[i+7] = 0x40
	var npy bytes.Buffer
	require.NoError(t, numpyx.Write(&npy, core.MustNew(core.Float64, 100)))
	pastEnd := overlappingNPZ(t, 1, npy.Bytes())
	at := bytes.Index(pastEnd, []byte{0x50, 0x4b, 0x01, 0x02}) // the central directory's compressed size
	binary.LittleEndian.PutUint32(pastEnd[at+20:], uint32(len(pastEnd)))
	released := core.MustFromSlice([]float32{1, 2})
	released.Release()
	huge, err := core.MustFromSlice([]float64{1}, 1).BroadcastTo(1<<31, 1<<31)
	require.NoError(t, err)
	write := func(x *core.Tensor) func() error {
		return func() error { return numpyx.Write(&bytes.Buffer{}, x) }
	}
	cases := []errstest.Case{
		{Name: "empty", Want: numpyx.ErrTruncated, Err: read(nil)},
		{Name: "bad magic", Want: numpyx.ErrFormat, Err: read([]byte("PK\x03\x04zzzzzzzzzzzzzzz"))},
		{Name: "version 4.0", Want: numpyx.ErrVersion, Err: read([]byte(numpyx.Magic + "\x04\x00\x10\x00"))},
		{Name: "header past EOF", Want: numpyx.ErrTruncated, Err: read([]byte(numpyx.Magic + "\x01\x00\xff\xff{'descr'"))},
		{Name: "data truncated", Want: numpyx.ErrTruncated, Err: read(npyFile(f8("(2,)"), make([]byte, 15)))},
		{Name: "shape overflows", Want: numpyx.ErrHeader, Err: read(npyFile(f8("(4294967296, 4294967296)"), nil))},
		{Name: "too many dims", Want: numpyx.ErrHeader, Err: read(npyFile(f8("("+strings.Repeat("1, ", 65)+")"), nil))},
		{Name: "object dtype", Want: numpyx.ErrUnsupportedDType, Err: read(npyFile("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)))},
		{Name: "structured dtype", Want: adapters.ErrUnsupported, Err: read(npyFile("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }", nil))},
		{Name: "bar on f8", Want: numpyx.ErrHeader, Err: read(npyFile("{'descr': '|f8', 'fortran_order': False, 'shape': (1,), }", nil))},
		{Name: "a call", Want: numpyx.ErrHeader, Err: read(npyFile("{'descr': __import__('os'), 'fortran_order': False, 'shape': (1,), }", nil))},
		{Name: "missing key", Want: numpyx.ErrHeader, Err: read(npyFile("{'descr': '<f8', 'shape': (1,), }", nil))},
		{Name: "Map of a truncated file", Want: numpyx.ErrTruncated, Err: func() error { _, err := numpyx.Map(truncated); return err }},
		{Name: "Map under ZeroCopyOnly", Want: adapters.ErrCopyRequired, Err: func() error {
			_, err := numpyx.Map(bigEndian, adapters.ZeroCopyOnly())
			return err
		}},
		{Name: "missing file", Want: os.ErrNotExist, Err: func() error { _, err := numpyx.ReadFile(filepath.Join(dir, "none.npy")); return err }},
		{Name: "directory", Want: numpyx.ErrNotRegularFile, Err: func() error { _, err := numpyx.ReadNPZ(dir); return err }},
		{Name: "not a zip archive", Want: numpyx.ErrFormat, Err: func() error {
			_, err := numpyx.NewReader(bytes.NewReader([]byte("not a zip")), 9)
			return err
		}},
		{Name: "npz: two members under one key", Want: numpyx.ErrDuplicateKey, Err: func() error {
			dup := rawNPZ(t, false, "a.npy", nil, "a", nil)
			_, err := numpyx.NewReader(bytes.NewReader(dup), int64(len(dup)))
			return err
		}},
		{Name: "npz: member past the end", Want: numpyx.ErrTruncated, Err: func() error {
			_, err := numpyx.NewReader(bytes.NewReader(pastEnd), int64(len(pastEnd)))
			return err
		}},
		{Name: "npz: no such key", Want: numpyx.ErrNotFound, Err: func() error { _, err := npz(good.Bytes()).Read("y"); return err }},
		{Name: "npz: bad checksum", Want: numpyx.ErrFormat, Err: func() error { _, err := npz(corrupt).Read("x"); return err }},
		{Name: "npz: bad member header", Want: numpyx.ErrHeader, Err: func() error {
			_, err := npz(rawNPZ(t, true, "x.npy", npyFile(f8("[1]"), nil))).Header("x")
			return err
		}},
		{Name: "npz: member ends early", Want: numpyx.ErrTruncated, Err: func() error {
			_, rc, err := npz(rawNPZ(t, true, "x.npy", npyFile(f8("(100,)"), make([]byte, 64)))).Open("x")
			if err != nil {
				return err
			}
			defer rc.Close()
			_, err = io.ReadAll(rc)
			return err
		}},
		{Name: "npz: past MaxInflated", Want: numpyx.ErrTooLarge, Err: func() error {
			_, err := npz(good.Bytes(), numpyx.MaxInflated(128+47)).Read("x")
			return err
		}},
		{Name: "write: bfloat16", Want: numpyx.ErrUnsupportedDType, Err: write(core.MustNew(core.BFloat16, 3))},
		{Name: "write: released", Want: core.ErrReleased, Err: write(released)},
		{Name: "write: nil", Want: core.ErrNil, Err: write(nil)},
		{Name: "write: past 2^63 bytes", Want: core.ErrOverflow, Err: write(huge)},
		{Name: "npz write: empty key", Want: core.ErrArgument, Err: func() error {
			return numpyx.NewNPZWriter(&bytes.Buffer{}).Write("", core.Scalar(1.0))
		}},
		{Name: "npz write: released", Want: core.ErrReleased, Err: func() error {
			return numpyx.WriteNPZ(filepath.Join(dir, "r.npz"), map[string]*core.Tensor{"r": released})
		}},
	}
	errstest.Run(t, `^numpyx: `, cases, sentinels...)
}
