package safetensorsx_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// file assembles a safetensors file: the length field, the header as given, then data.
func file(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

// TestHostile: malformed files get errors matching the right sentinels from every read path,
// never a panic or a large allocation.
func TestHostile(t *testing.T) {
	f32 := func(name string, begin, end int, shape string) string {
		return `"` + name + `":{"dtype":"F32","shape":` + shape + `,"data_offsets":[` + strconv.Itoa(begin) + `,` + strconv.Itoa(end) + `]}`
	}
	huge := binary.LittleEndian.AppendUint64(nil, 1<<62)
	cases := []struct {
		name string
		file []byte
		want error
	}{
		{"empty", nil, safetensorsx.ErrTruncated},
		{"short length", []byte{1, 2, 3}, safetensorsx.ErrTruncated},
		{"absurd header length", append(huge, "{}"...), safetensorsx.ErrHeader},
		{"header length just over the bound", binary.LittleEndian.AppendUint64(nil, safetensorsx.MaxHeaderLen+1), safetensorsx.ErrHeader},
		{"header length past the end", append(binary.LittleEndian.AppendUint64(nil, 1000), "{}"...), safetensorsx.ErrTruncated},
		{"not JSON", file("hello!!!", nil), safetensorsx.ErrHeader},
		{"array", file("[1,2,3]", nil), safetensorsx.ErrHeader},
		{"string", file(`"x"`, nil), safetensorsx.ErrHeader},
		{"not UTF-8", file("{\"\xff\":1}", nil), safetensorsx.ErrHeader},
		{"trailing garbage", file("{} x", nil), safetensorsx.ErrHeader},
		{"two objects", file("{}{}", nil), safetensorsx.ErrHeader},
		{"unterminated", file(`{"a":{"dtype":"F32"`, nil), safetensorsx.ErrHeader},
		{"entry not an object", file(`{"a":[1]}`, nil), safetensorsx.ErrHeader},
		{"missing data_offsets", file(`{"a":{"dtype":"F32","shape":[1]}}`, make([]byte, 4)), safetensorsx.ErrHeader},
		{"missing dtype", file(`{"a":{"shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), safetensorsx.ErrHeader},
		{"dtype not a string", file(`{"a":{"dtype":3,"shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), safetensorsx.ErrHeader},
		{"unknown dtype", file(`{"a":{"dtype":"F7","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), safetensorsx.ErrUnsupportedDType},
		{"lower-case dtype", file(`{"a":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), safetensorsx.ErrUnsupportedDType},
		{"negative dim", file(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, make([]byte, 4)), safetensorsx.ErrHeader},
		{"fractional dim", file(`{"a":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}}`, make([]byte, 4)), safetensorsx.ErrHeader},
		{"exponent dim", file(`{"a":{"dtype":"F32","shape":[1e0],"data_offsets":[0,4]}}`, make([]byte, 4)), safetensorsx.ErrHeader},
		{"dim past int64", file(`{"a":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,4]}}`, make([]byte, 4)), safetensorsx.ErrHeader},
		{"too many dims", file(`{"a":{"dtype":"F32","shape":[`+strings.Repeat("1,", 64)+`1],"data_offsets":[0,4]}}`, make([]byte, 4)), safetensorsx.ErrHeader},
		{"three offsets", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, make([]byte, 4)), safetensorsx.ErrHeader},
		{"one offset", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}}`, make([]byte, 4)), safetensorsx.ErrHeader},
		{"duplicate tensor", file(`{`+f32("a", 0, 4, "[1]")+`,`+f32("a", 4, 8, "[1]")+`}`, make([]byte, 8)), safetensorsx.ErrHeader},
		{"duplicate field", file(`{"a":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), safetensorsx.ErrHeader},
		{"duplicate metadata", file(`{"__metadata__":{},"__metadata__":{}}`, nil), safetensorsx.ErrHeader},
		{"duplicate metadata key", file(`{"__metadata__":{"k":"a","k":"b"}}`, nil), safetensorsx.ErrHeader},
		{"metadata not strings", file(`{"__metadata__":{"k":1}}`, nil), safetensorsx.ErrHeader},
		{"metadata not an object", file(`{"__metadata__":[]}`, nil), safetensorsx.ErrHeader},
		{"deep nesting", file(`{"a":{"x":`+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+`,"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), safetensorsx.ErrHeader},
		{"lone surrogate", file(`{"\ud800":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), safetensorsx.ErrHeader},
		{"control char in string", file("{\"a\x01\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", make([]byte, 4)), safetensorsx.ErrHeader},
		{"size mismatch", file(`{`+f32("a", 0, 8, "[1]")+`}`, make([]byte, 8)), safetensorsx.ErrLayout},
		{"end before begin", file(`{`+f32("a", 8, 4, "[1]")+`}`, make([]byte, 8)), safetensorsx.ErrLayout},
		{"overlap", file(`{`+f32("a", 0, 8, "[2]")+`,`+f32("b", 4, 12, "[2]")+`}`, make([]byte, 12)), safetensorsx.ErrLayout},
		{"gap", file(`{`+f32("a", 0, 4, "[1]")+`,`+f32("b", 8, 12, "[1]")+`}`, make([]byte, 12)), safetensorsx.ErrLayout},
		{"not from zero", file(`{`+f32("a", 4, 8, "[1]")+`}`, make([]byte, 8)), safetensorsx.ErrLayout},
		{"past the end", file(`{`+f32("a", 0, 4, "[1]")+`,`+f32("b", 4, 8, "[1]")+`}`, make([]byte, 6)), safetensorsx.ErrTruncated},
		{"huge range past the end", file(`{`+f32("a", 0, 1<<40, "[274877906944]")+`}`, make([]byte, 6)), safetensorsx.ErrTruncated},
		{"bytes after the last tensor", file(`{`+f32("a", 0, 4, "[1]")+`}`, make([]byte, 5)), safetensorsx.ErrLayout},
		{"shape overflow", file(`{`+f32("a", 0, 4, "[4294967296,4294967296]")+`}`, make([]byte, 4)), safetensorsx.ErrLayout},
		{"bits overflow", file(`{`+f32("a", 0, 4, "[4611686018427387904]")+`}`, make([]byte, 4)), safetensorsx.ErrLayout},
		{"half a byte of F4", file(`{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}`, make([]byte, 2)), safetensorsx.ErrLayout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := func(what string, err error) {
				t.Helper()
				require.Error(t, err, what)
				assert.ErrorIs(t, err, c.want, "%s: %v", what, err)
				assert.True(t, errors.Is(err, safetensorsx.ErrFormat) || errors.Is(err, safetensorsx.ErrUnsupportedDType), "%s: %v", what, err)
				assert.NoError(t, errstest.Check(err, own...), what)
			}
			_, err := safetensorsx.Read(bytes.NewReader(c.file))
			check("Read", err)
			_, err = safetensorsx.Read(onlyReader{bytes.NewReader(c.file)})
			if c.name != "bytes after the last tensor" { // a stream of unknown length is not read past the data
				check("Read (unknown length)", err)
			}
			_, err = safetensorsx.NewReader(bytes.NewReader(c.file), int64(len(c.file)))
			check("NewReader", err)
			path := filepath.Join(t.TempDir(), "h.safetensors")
			require.NoError(t, os.WriteFile(path, c.file, 0o644))
			_, err = safetensorsx.ReadFile(path)
			check("ReadFile", err)
			_, err = safetensorsx.Open(path)
			check("Open", err)
		})
	}
}

// TestAccepted: what the reference reader accepts, this package reads too: keys in any order,
// ranges listed out of order, unknown members of an entry, whitespace, escapes, null metadata.
func TestAccepted(t *testing.T) {
	data := make([]byte, 12)
	binary.LittleEndian.PutUint32(data[8:], 0x3f800000) // b = 1.0
	cases := []string{
		`{"b":{"data_offsets":[8,12],"shape":[],"dtype":"F32"},"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}}`,
		"\t{ \"a\" : {\"dtype\":\"I32\",\"x\":{\"y\":[1,-2.5e3,true,null,\"s\"]},\"shape\":[2],\"data_offsets\":[0,8]},\n\"\\u0062\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[8,12]}, \"__metadata__\": null }   ",
	}
	for _, h := range cases {
		r, err := safetensorsx.NewReader(bytes.NewReader(file(h, data)), int64(8+len(h)+len(data)))
		require.NoError(t, err, h)
		assert.Equal(t, []string{"a", "b"}, r.Names(), "file order")
		assert.Nil(t, r.Metadata())
		b, err := r.Tensor("b")
		require.NoError(t, err)
		v, err := core.At[float32](b)
		require.NoError(t, err)
		assert.Equal(t, float32(1), v)
		_, err = r.Tensor("c")
		assert.ErrorIs(t, err, safetensorsx.ErrNotFound)
	}
}

// TestWriteRefuses: what cannot be written is refused with a sentinel, and WriteFile leaves
// nothing behind.
func TestWriteRefuses(t *testing.T) {
	released := core.MustFromSlice([]float32{1})
	released.Release()
	cases := []struct {
		name string
		ts   map[string]*core.Tensor
		meta map[string]string
		want error
	}{
		{"metadata key as a name", map[string]*core.Tensor{"__metadata__": core.MustFromSlice([]float32{1})}, nil, safetensorsx.ErrName},
		{"name not UTF-8", map[string]*core.Tensor{"\xff": core.MustFromSlice([]float32{1})}, nil, safetensorsx.ErrName},
		{"metadata not UTF-8", map[string]*core.Tensor{}, map[string]string{"k": "\xfe"}, safetensorsx.ErrName},
		{"complex128", map[string]*core.Tensor{"c": core.MustFromSlice([]complex128{1})}, nil, safetensorsx.ErrUnsupportedDType},
		{"int4", map[string]*core.Tensor{"c": core.MustNew(core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}, 2)}, nil, adapters.ErrUnsupported},
		{"odd F4", map[string]*core.Tensor{"c": core.MustNew(core.DLDataType{Code: core.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}, 3)}, nil, safetensorsx.ErrLayout},
		{"nil", map[string]*core.Tensor{"n": nil}, nil, core.ErrNil},
		{"released", map[string]*core.Tensor{"r": released}, nil, core.ErrReleased},
		{"2^64 bytes of one element", map[string]*core.Tensor{"b": broadcast(t, 1<<31, 1<<31)}, nil, core.ErrOverflow},
		{"ends past 2^63", map[string]*core.Tensor{"a": broadcast(t, 1<<59), "b": broadcast(t, 1<<59)}, nil, core.ErrOverflow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := safetensorsx.Write(&buf, c.ts, c.meta)
			require.ErrorIs(t, err, c.want)
			assert.NoError(t, errstest.Check(err, own...))
			assert.Zero(t, buf.Len(), "nothing is written before the input is checked")
			dir := t.TempDir()
			require.ErrorIs(t, safetensorsx.WriteFile(filepath.Join(dir, "x.safetensors"), c.ts, c.meta), c.want)
			left, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, left)
		})
	}
}

// broadcast repeats one float64 into shape (a read-only view of 8 bytes).
func broadcast(t *testing.T, shape ...int64) *core.Tensor {
	b, err := core.MustFromSlice([]float64{1}, 1).BroadcastTo(shape...)
	require.NoError(t, err)
	return b
}
