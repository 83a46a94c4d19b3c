package safetensorsx_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// TestErrorMessages provokes safetensorsx's refusals (malformed headers, bad byte ranges,
// truncated data, unknown dtypes and names, closed files, tensors it cannot write) and holds
// each message to the module's rule: what was wrong first, each package prefix once, errors.Is
// still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	f32 := func(name string, begin, end int, shape string) string {
		return fmt.Sprintf(`"%s":{"dtype":"F32","shape":%s,"data_offsets":[%d,%d]}`, name, shape, begin, end)
	}
	read := func(b []byte) func() error {
		return func() error { _, err := safetensorsx.Read(bytes.NewReader(b)); return err }
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.safetensors")
	require.NoError(t, safetensorsx.WriteFile(good, map[string]*core.Tensor{"a": core.MustFromSlice([]float32{1, 2})}, nil))
	truncated := file(`{`+f32("a", 0, 8, "[2]")+`}`, make([]byte, 3))
	released := core.MustFromSlice([]float32{1})
	released.Release()
	write := func(ts map[string]*core.Tensor, meta map[string]string) func() error {
		return func() error { return safetensorsx.Write(&bytes.Buffer{}, ts, meta) }
	}
	cases := []errstest.Case{
		{Name: "empty", Want: safetensorsx.ErrTruncated, Err: read(nil)},
		{Name: "header length past the end", Want: safetensorsx.ErrTruncated, Err: read(append([]byte{100, 0, 0, 0, 0, 0, 0, 0}, "{}"...))},
		{Name: "absurd header length", Want: safetensorsx.ErrHeader, Err: read([]byte{0, 0, 0, 0, 0, 0, 0, 1})},
		{Name: "not JSON", Want: safetensorsx.ErrHeader, Err: read(file("hello!!!", nil))},
		{Name: "not UTF-8", Want: safetensorsx.ErrHeader, Err: read(file("{\"\xff\":1}", nil))},
		{Name: "missing dtype", Want: safetensorsx.ErrHeader, Err: read(file(`{"a":{"shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)))},
		{Name: "unknown dtype", Want: safetensorsx.ErrUnsupportedDType, Err: read(file(`{"a":{"dtype":"F7","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)))},
		{Name: "negative dim", Want: safetensorsx.ErrHeader, Err: read(file(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, make([]byte, 4)))},
		{Name: "duplicate tensor", Want: safetensorsx.ErrHeader, Err: read(file(`{`+f32("a", 0, 4, "[1]")+`,`+f32("a", 4, 8, "[1]")+`}`, make([]byte, 8)))},
		{Name: "metadata not strings", Want: safetensorsx.ErrHeader, Err: read(file(`{"__metadata__":{"k":1}}`, nil))},
		{Name: "size mismatch", Want: safetensorsx.ErrLayout, Err: read(file(`{`+f32("a", 0, 8, "[1]")+`}`, make([]byte, 8)))},
		{Name: "end before begin", Want: safetensorsx.ErrLayout, Err: read(file(`{`+f32("a", 8, 4, "[1]")+`}`, make([]byte, 8)))},
		{Name: "gap", Want: safetensorsx.ErrLayout, Err: read(file(`{`+f32("a", 0, 4, "[1]")+`,`+f32("b", 8, 12, "[1]")+`}`, make([]byte, 12)))},
		{Name: "shape overflow", Want: safetensorsx.ErrLayout, Err: read(file(`{`+f32("a", 0, 4, "[4294967296,4294967296]")+`}`, make([]byte, 4)))},
		{Name: "bytes after the last tensor", Want: safetensorsx.ErrLayout, Err: read(file(`{`+f32("a", 0, 4, "[1]")+`}`, make([]byte, 5)))},
		{Name: "data truncated", Want: safetensorsx.ErrTruncated, Err: read(truncated)},
		{Name: "data truncated, stream", Want: safetensorsx.ErrTruncated, Err: func() error {
			_, err := safetensorsx.Read(onlyReader{bytes.NewReader(truncated)})
			return err
		}},
		{Name: "data truncated, Reader.Tensor", Want: safetensorsx.ErrTruncated, Err: func() error {
			// a Reader of a size that promises what the bytes do not hold
			r, err := safetensorsx.NewReader(bytes.NewReader(truncated), int64(len(truncated))+5)
			if err != nil {
				return err
			}
			_, err = r.Tensor("a")
			return err
		}},
		{Name: "no such tensor", Want: safetensorsx.ErrNotFound, Err: func() error {
			f, err := safetensorsx.Open(good)
			require.NoError(t, err)
			defer f.Close()
			_, err = f.Tensor("b")
			return err
		}},
		{Name: "closed", Want: safetensorsx.ErrClosed, Err: func() error {
			f, err := safetensorsx.Open(good)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			_, err = f.Tensor("a")
			return err
		}},
		{Name: "Read under ZeroCopyOnly", Want: adapters.ErrCopyRequired, Err: func() error {
			_, err := safetensorsx.Read(bytes.NewReader(nil), adapters.ZeroCopyOnly())
			return err
		}},
		{Name: "missing file", Want: os.ErrNotExist, Err: func() error { _, err := safetensorsx.Open(filepath.Join(dir, "none")); return err }},
		{Name: "FromDType", Want: safetensorsx.ErrUnsupportedDType, Err: func() error { _, err := safetensorsx.FromDType("f32"); return err }},
		{Name: "ToDType", Want: adapters.ErrUnsupported, Err: func() error { _, err := safetensorsx.ToDType(core.Complex128); return err }},
		{Name: "write: metadata name", Want: safetensorsx.ErrName, Err: write(map[string]*core.Tensor{"__metadata__": core.MustFromSlice([]float32{1})}, nil)},
		{Name: "write: name not UTF-8", Want: safetensorsx.ErrName, Err: write(map[string]*core.Tensor{"\xff": core.MustFromSlice([]float32{1})}, nil)},
		{Name: "write: metadata not UTF-8", Want: safetensorsx.ErrName, Err: write(nil, map[string]string{"k": "\xfe"})},
		{Name: "write: complex128", Want: safetensorsx.ErrUnsupportedDType, Err: write(map[string]*core.Tensor{"c": core.MustFromSlice([]complex128{1})}, nil)},
		{Name: "write: odd F4", Want: safetensorsx.ErrLayout, Err: write(map[string]*core.Tensor{"c": core.MustNew(core.DLDataType{Code: core.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}, 3)}, nil)},
		{Name: "write: nil", Want: core.ErrNil, Err: write(map[string]*core.Tensor{"n": nil}, nil)},
		{Name: "write: released", Want: core.ErrReleased, Err: write(map[string]*core.Tensor{"r": released}, nil)},
		{Name: "write: past 2^63", Want: core.ErrOverflow, Err: write(map[string]*core.Tensor{"a": broadcast(t, 1<<59), "b": broadcast(t, 1<<59)}, nil)},
	}
	errstest.Run(t, `^safetensorsx: `, cases, own...)
}

// own are safetensorsx's sentinels, whose texts must not come before a cause either.
var own = []error{safetensorsx.ErrFormat, safetensorsx.ErrHeader, safetensorsx.ErrLayout, safetensorsx.ErrTruncated, safetensorsx.ErrUnsupportedDType, safetensorsx.ErrNotFound, safetensorsx.ErrName, safetensorsx.ErrClosed}
