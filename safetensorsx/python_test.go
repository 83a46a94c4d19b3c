package safetensorsx_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/pyrun"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// refWriter is a reference safetensors writer written from the format's description (the
// huggingface/safetensors README and its serializer's rules) with NumPy: tensors ordered by
// the Dtype enum, largest first, then by name; compact JSON, "__metadata__" first, non-ASCII
// as is; header padded with spaces to a multiple of 8; data C order, little-endian. It writes,
// into argv[1]: ref.safetensors (aligned, with metadata), names.safetensors (tensors ordered
// by name alone, as early writers did, so some are misaligned; no metadata) and one .raw file
// per tensor (its C-order bytes), and prints the manifest: one JSON line per tensor, then one
// line with the metadata.
const refWriter = `
import sys, os, json, struct
import numpy as np
out = sys.argv[1]
ORDER = ['BOOL','F4','F6_E2M3','F6_E3M2','U8','I8','F8_E5M2','F8_E4M3','F8_E8M0','F8_E4M3FNUZ',
         'F8_E5M2FNUZ','I16','U16','F16','BF16','I32','U32','F32','C64','F64','I64','U64']
NP = {'BOOL': '?', 'U8': '<u1', 'I8': '<i1', 'I16': '<i2', 'U16': '<u2', 'I32': '<i4', 'U32': '<u4',
      'I64': '<i8', 'U64': '<u8', 'F16': '<f2', 'F32': '<f4', 'F64': '<f8', 'C64': '<c8'}
BITS = {'F4': 4, 'F6_E2M3': 6, 'F6_E3M2': 6, 'BF16': 16}
rng = np.random.default_rng(7)

def make(dt, shape):
    n = int(np.prod(shape))
    if dt in NP:
        d = np.dtype(NP[dt])
        if d.kind == 'b':
            a = rng.integers(0, 2, n).astype(bool)
        elif d.kind in 'iu':
            info = np.iinfo(d)
            a = rng.integers(info.min, info.max, n, dtype=d, endpoint=True)
        elif d.kind == 'f':
            a = (rng.standard_normal(n) * 10).astype(d)
        else:
            a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(d)
        a = a.reshape(shape)
        # a non-contiguous source: the writer must serialise C order
        return np.asfortranarray(a) if a.ndim == 2 else a
    nbytes = n * BITS.get(dt, 8) // 8
    return rng.integers(0, 256, nbytes, dtype=np.uint8)   # raw bits of a type NumPy lacks

def raw(a):
    return np.ascontiguousarray(a).tobytes(order='C')

def save(path, tensors, metadata, key):
    items = sorted(tensors.items(), key=key)
    hdr = {}
    if metadata is not None:
        hdr['__metadata__'] = dict(sorted(metadata.items()))
    off = 0
    for name, (dt, shape, a) in items:
        n = len(raw(a))
        hdr[name] = {'dtype': dt, 'shape': list(shape), 'data_offsets': [off, off + n]}
        off += n
    js = json.dumps(hdr, separators=(',', ':'), ensure_ascii=False).encode('utf-8')
    js += b' ' * (-len(js) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(js)))
        f.write(js)
        for name, (dt, shape, a) in items:
            f.write(raw(a))

shapes = {'F4': [(2, 3), (0,)], 'F6_E2M3': [(2, 4)], 'F6_E3M2': [(4,)]}
tensors = {}
for dt in ORDER:
    for i, shape in enumerate(shapes.get(dt, [(), (3,), (2, 3), (0, 4), (2, 3, 5)])):
        tensors['%s.%d' % (dt.lower(), i)] = (dt, shape, make(dt, shape))
# names that test the JSON escaping and the byte order of names
for name in ['layer\u00e9.w', 'q"uote\\back', 'tab\there\n', 'ctl\x01\x1f\x7f', '<b>&amp;', '\u2028sep', '\U0001F600', '']:
    tensors[name] = ('F32', (2,), make('F32', (2,)))
metadata = {'format': 'pt', 'note': 'caf\u00e9 "q" \\ \n\t\x02 <&> \u2028', 'empty': '', '\u00fcber': 'x'}
save(os.path.join(out, 'ref.safetensors'), tensors, metadata, lambda kv: (-ORDER.index(kv[1][0]), kv[0]))
save(os.path.join(out, 'names.safetensors'), tensors, None, lambda kv: kv[0])
for i, (name, (dt, shape, a)) in enumerate(sorted(tensors.items())):
    p = os.path.join(out, '%d.raw' % i)
    with open(p, 'wb') as f:
        f.write(raw(a))
    print(json.dumps({'name': name, 'dtype': dt, 'shape': list(shape), 'raw': p}))
print(json.dumps(metadata))
`

type refTensor struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	Raw   string  `json:"raw"`
	raw   []byte
}

// reference runs refWriter into a fresh directory and returns it, the tensors and the metadata.
func reference(t *testing.T) (string, []refTensor, map[string]string) {
	dir := t.TempDir()
	out := pyrun.Run(t, refWriter, dir)
	var ts []refTensor
	var meta map[string]string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var rt refTensor
		line := sc.Bytes()
		if bytes.Contains(line, []byte(`"raw"`)) {
			require.NoError(t, json.Unmarshal(line, &rt))
			b, err := os.ReadFile(rt.Raw)
			require.NoError(t, err)
			rt.raw = b
			ts = append(ts, rt)
		} else {
			require.NoError(t, json.Unmarshal(line, &meta))
		}
	}
	require.GreaterOrEqual(t, len(ts), 90)
	require.NotEmpty(t, meta)
	return dir, ts, meta
}

// TestReadReference: every tensor of the reference writer's file reads exactly, by every read
// path: ReadFile, Read from a stream, a Reader over io.ReaderAt, and a memory map.
func TestReadReference(t *testing.T) {
	dir, ts, meta := reference(t)
	for _, file := range []string{"ref.safetensors", "names.safetensors"} {
		path := filepath.Join(dir, file)
		t.Run(file, func(t *testing.T) {
			all, err := safetensorsx.ReadFile(path)
			require.NoError(t, err)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			streamed, err := safetensorsx.Read(onlyReader{bytes.NewReader(data)})
			require.NoError(t, err)
			r, err := safetensorsx.NewReader(bytes.NewReader(data), int64(len(data)))
			require.NoError(t, err)
			f, err := safetensorsx.Open(path)
			require.NoError(t, err)
			defer f.Close()
			if file == "ref.safetensors" {
				assert.Equal(t, meta, f.Metadata())
				assert.Equal(t, meta, r.Metadata())
			} else {
				assert.Nil(t, f.Metadata())
			}
			require.Len(t, all, len(ts))
			require.Len(t, streamed, len(ts))
			misaligned := 0
			for _, rt := range ts {
				dt, err := safetensorsx.FromDType(rt.DType)
				require.NoError(t, err)
				one, err := r.Tensor(rt.Name)
				require.NoError(t, err)
				m, err := f.Tensor(rt.Name)
				require.NoError(t, err)
				ok, why := f.Shareable(rt.Name)
				if !ok {
					misaligned++
					_, err := safetensorsx.Map(path, adapters.ZeroCopyOnly())
					require.ErrorIs(t, err, adapters.ErrCopyRequired, why)
				}
				for k, x := range []*core.Tensor{all[rt.Name], streamed[rt.Name], one, m} {
					require.NotNil(t, x, rt.Name)
					assert.Equal(t, dt, x.DType(), "%q (%d)", rt.Name, k)
					assert.Equal(t, rt.Shape, x.Shape(), "%q (%d)", rt.Name, k)
					b, err := x.ReadOnlyBytes()
					require.NoError(t, err)
					assert.True(t, bytes.Equal(rt.raw, b), "%q (%d): bytes differ", rt.Name, k)
				}
				assert.Equal(t, ok && !m.Empty(), m.ReadOnly(), "%q: a view of the map is read-only, a copy is not", rt.Name)
				if !m.Empty() {
					assert.Equal(t, !ok, m.Flags()&core.FlagIsCopied != 0, "%q", rt.Name)
				}
			}
			if file == "ref.safetensors" {
				assert.Zero(t, misaligned, "the reference writer aligns every tensor")
			} else {
				assert.NotZero(t, misaligned, "ordering by name must misalign something, or this file tests nothing")
			}
		})
	}
}

// TestWriteMatchesReference: Write produces the reference writer's file byte for byte, from
// tensors of any layout.
func TestWriteMatchesReference(t *testing.T) {
	dir, ts, meta := reference(t)
	want, err := os.ReadFile(filepath.Join(dir, "ref.safetensors"))
	require.NoError(t, err)
	tensors := map[string]*core.Tensor{}
	for i, rt := range ts {
		dt, err := safetensorsx.FromDType(rt.DType)
		require.NoError(t, err)
		x := fromBytes(t, dt, rt.Shape, rt.raw)
		if len(rt.Shape) == 2 && x.Len() > 1 && i%2 == 0 && !dt.SubByte() {
			// the same elements as the transpose of a Fortran-order tensor: not C-contiguous
			f, err := core.New(dt, rt.Shape[1], rt.Shape[0])
			require.NoError(t, err)
			ft, err := f.Transpose()
			require.NoError(t, err)
			require.NoError(t, memory.Copy(ft, x))
			require.False(t, ft.IsContiguous())
			x = ft
		}
		tensors[rt.Name] = x
	}
	var buf bytes.Buffer
	require.NoError(t, safetensorsx.Write(&buf, tensors, meta))
	if !bytes.Equal(want, buf.Bytes()) {
		n := 0
		for n < min(len(want), buf.Len()) && want[n] == buf.Bytes()[n] {
			n++
		}
		t.Fatalf("differs from the reference at byte %d of %d/%d:\nref: %q\nours: %q", n, len(want), buf.Len(),
			want[max(n-40, 0):min(n+40, len(want))], buf.Bytes()[max(n-40, 0):min(n+40, buf.Len())])
	}
	path := filepath.Join(t.TempDir(), "ours.safetensors")
	require.NoError(t, safetensorsx.WriteFile(path, tensors, meta))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "WriteFile writes what Write does")
}

// onlyReader hides every method but Read, so the reader cannot tell its size.
type onlyReader struct{ r *bytes.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
