package safetensorsx_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// sentinels are safetensorsx's and those of core and adapters that its errors wrap: none of
// their texts may lead a message before its cause.
var sentinels = []error{
	safetensorsx.ErrFormat, safetensorsx.ErrHeader, safetensorsx.ErrLayout, safetensorsx.ErrTruncated,
	safetensorsx.ErrUnsupportedDType, safetensorsx.ErrNotFound, safetensorsx.ErrName, safetensorsx.ErrClosed,
	core.ErrInvalid, core.ErrShape, core.ErrOverflow, core.ErrNil, core.ErrReleased, core.ErrNotHost,
	core.ErrBounds, core.ErrDType, core.ErrTooLarge,
	adapters.ErrUnsupported, adapters.ErrCopyRequired,
}

// checkMessage is errs.Check, and also refuses a sentinel's generic text that comes before
// the cause further into the message ("safetensorsx: tensor "a": safetensorsx: malformed
// file: truncated: ...").
func checkMessage(msg string, sentinels ...error) error {
	if err := errs.Check(msg, sentinels...); err != nil {
		return err
	}
	for _, s := range sentinels {
		if i := strings.Index(msg, s.Error()+": "); i > 0 {
			return fmt.Errorf("%q has the generic %q before its cause", msg, s.Error())
		}
	}
	return nil
}

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
	cases := []struct {
		name string
		want error
		err  func() error
	}{
		{"empty", safetensorsx.ErrTruncated, read(nil)},
		{"header length past the end", safetensorsx.ErrTruncated, read(append([]byte{100, 0, 0, 0, 0, 0, 0, 0}, "{}"...))},
		{"absurd header length", safetensorsx.ErrHeader, read([]byte{0, 0, 0, 0, 0, 0, 0, 1})},
		{"not JSON", safetensorsx.ErrHeader, read(file("hello!!!", nil))},
		{"not UTF-8", safetensorsx.ErrHeader, read(file("{\"\xff\":1}", nil))},
		{"missing dtype", safetensorsx.ErrHeader, read(file(`{"a":{"shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)))},
		{"unknown dtype", safetensorsx.ErrUnsupportedDType, read(file(`{"a":{"dtype":"F7","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)))},
		{"negative dim", safetensorsx.ErrHeader, read(file(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, make([]byte, 4)))},
		{"duplicate tensor", safetensorsx.ErrHeader, read(file(`{`+f32("a", 0, 4, "[1]")+`,`+f32("a", 4, 8, "[1]")+`}`, make([]byte, 8)))},
		{"metadata not strings", safetensorsx.ErrHeader, read(file(`{"__metadata__":{"k":1}}`, nil))},
		{"size mismatch", safetensorsx.ErrLayout, read(file(`{`+f32("a", 0, 8, "[1]")+`}`, make([]byte, 8)))},
		{"end before begin", safetensorsx.ErrLayout, read(file(`{`+f32("a", 8, 4, "[1]")+`}`, make([]byte, 8)))},
		{"gap", safetensorsx.ErrLayout, read(file(`{`+f32("a", 0, 4, "[1]")+`,`+f32("b", 8, 12, "[1]")+`}`, make([]byte, 12)))},
		{"shape overflow", safetensorsx.ErrLayout, read(file(`{`+f32("a", 0, 4, "[4294967296,4294967296]")+`}`, make([]byte, 4)))},
		{"bytes after the last tensor", safetensorsx.ErrLayout, read(file(`{`+f32("a", 0, 4, "[1]")+`}`, make([]byte, 5)))},
		{"data truncated", safetensorsx.ErrTruncated, read(truncated)},
		{"data truncated, stream", safetensorsx.ErrTruncated, func() error {
			_, err := safetensorsx.Read(onlyReader{bytes.NewReader(truncated)})
			return err
		}},
		{"data truncated, Reader.Tensor", safetensorsx.ErrTruncated, func() error {
			// a Reader of a size that promises what the bytes do not hold
			r, err := safetensorsx.NewReader(bytes.NewReader(truncated), int64(len(truncated))+5)
			if err != nil {
				return err
			}
			_, err = r.Tensor("a")
			return err
		}},
		{"no such tensor", safetensorsx.ErrNotFound, func() error {
			f, err := safetensorsx.Open(good)
			require.NoError(t, err)
			defer f.Close()
			_, err = f.Tensor("b")
			return err
		}},
		{"closed", safetensorsx.ErrClosed, func() error {
			f, err := safetensorsx.Open(good)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			_, err = f.Tensor("a")
			return err
		}},
		{"Read under ZeroCopyOnly", adapters.ErrCopyRequired, func() error {
			_, err := safetensorsx.Read(bytes.NewReader(nil), adapters.ZeroCopyOnly())
			return err
		}},
		{"missing file", os.ErrNotExist, func() error { _, err := safetensorsx.Open(filepath.Join(dir, "none")); return err }},
		{"FromDType", safetensorsx.ErrUnsupportedDType, func() error { _, err := safetensorsx.FromDType("f32"); return err }},
		{"ToDType", adapters.ErrUnsupported, func() error { _, err := safetensorsx.ToDType(core.Complex128); return err }},
		{"write: metadata name", safetensorsx.ErrName, write(map[string]*core.Tensor{"__metadata__": core.MustFromSlice([]float32{1})}, nil)},
		{"write: name not UTF-8", safetensorsx.ErrName, write(map[string]*core.Tensor{"\xff": core.MustFromSlice([]float32{1})}, nil)},
		{"write: metadata not UTF-8", safetensorsx.ErrName, write(nil, map[string]string{"k": "\xfe"})},
		{"write: complex128", safetensorsx.ErrUnsupportedDType, write(map[string]*core.Tensor{"c": core.MustFromSlice([]complex128{1})}, nil)},
		{"write: odd F4", safetensorsx.ErrLayout, write(map[string]*core.Tensor{"c": core.MustNew(core.DLDataType{Code: core.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}, 3)}, nil)},
		{"write: nil", core.ErrNil, write(map[string]*core.Tensor{"n": nil}, nil)},
		{"write: released", core.ErrReleased, write(map[string]*core.Tensor{"r": released}, nil)},
		{"write: past 2^63", core.ErrOverflow, write(map[string]*core.Tensor{"a": broadcast(t, 1<<59), "b": broadcast(t, 1<<59)}, nil)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.NoError(t, checkMessage(err.Error(), sentinels...))
			assert.Regexp(t, `^safetensorsx: `, err.Error(), "names its package first")
		})
	}
}
