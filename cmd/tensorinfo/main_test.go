package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/pyrun"
	"github.com/dlpack-go/dlpack/numpyx"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// numpy runs script with Debian's python3 and NumPy in dir and returns what it prints. A missing
// interpreter or NumPy fails the test: setup installs python3-numpy.
func numpy(t *testing.T, dir, script string) []byte {
	t.Helper()
	cmd := exec.Command(pyrun.Interpreter, "-c", "import numpy as np, json\n"+script)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "python3 with NumPy is required (apt-get install python3-numpy): %s", stderr.String())
	return out
}

// tensorinfo runs the command and returns its status, stdout and stderr.
func tensorinfo(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// files NumPy wrote, and NumPy's own summary of each array
const writeFiles = `
arrays = {
  'c.npy': np.arange(12, dtype='<f4').reshape(3, 4) - 5.5,
  'f.npy': np.asfortranarray(np.array([[1.5, np.nan, 7], [3, -4, np.inf]])),
  'be.npy': np.arange(-3, 3, dtype='>i4'),
  'h.npy': np.array([0.5, -2, np.nan, np.nan], dtype=np.float16),
  'b.npy': np.array([[True, False], [True, True]]),
  'u.npy': np.array([250, 3, 7], dtype=np.uint8),
  'cplx.npy': np.array([1+2j], dtype=np.complex64),
  'scalar.npy': np.float64(2.5),
}
for name, a in arrays.items():
    np.save(name, a)
long = np.sin(np.arange(300000, dtype=np.float32))  # more than one 1 MiB piece of a streamed summary
long[::1000] = np.nan
arch = {'w': np.linspace(-1, 1, 7840, dtype=np.float32).reshape(784, 10), 'bias': np.full(10, np.nan), 'ids': np.arange(5, dtype=np.int64),
        'long': long, 'be': np.asfortranarray((np.arange(-6, 6).reshape(3, 4) / 3).astype('>f8'))}
np.savez('plain.npz', **arch)
np.savez_compressed('packed.npz', **arch)
def summary(a):
    a = np.asarray(a, dtype=np.float64)
    if np.isnan(a).all():
        return {'min': None, 'max': None, 'mean': None, 'nan_count': int(a.size)}
    f = lambda v: v if np.isfinite(v) else ('inf' if v > 0 else '-inf')
    return {'min': f(float(np.nanmin(a))), 'max': f(float(np.nanmax(a))), 'mean': f(float(np.nanmean(a))), 'nan_count': int(np.isnan(a).sum())}
out = {n: summary(a) for n, a in arrays.items() if a.dtype.kind != 'c'}
out.update({'npz:' + k: summary(v) for k, v in arch.items()})
print(json.dumps(out))
`

func TestListsWhatNumPyWrote(t *testing.T) {
	dir := t.TempDir()
	numpy(t, dir, writeFiles)
	code, out, errs := tensorinfo(filepath.Join(dir, "c.npy"), filepath.Join(dir, "f.npy"),
		filepath.Join(dir, "be.npy"), filepath.Join(dir, "b.npy"), filepath.Join(dir, "plain.npz"))
	require.Equal(t, 0, code, errs)
	for _, want := range []string{
		"c.npy (npy, 1 array)",
		"NAME   DTYPE          SHAPE   BYTE ORDER     LAYOUT            ELEMENTS  BYTES",
		"c.npy  float32 (<f4)  (3, 4)  little-endian  C (row-major)  12        48",
		"f.npy  float64 (<f8)  (2, 3)  little-endian  F (column-major)  6         48",
		"be.npy  int32 (>i4)  (6,)   big-endian  C (row-major)  6         24",
		"b.npy  bool (|b1)  (2, 2)  not applicable  C (row-major)  4         4",
		"plain.npz (npz, 5 arrays)",
		"w     float32 (<f4)  (784, 10)  little-endian  C (row-major)     7840      31360",
		"bias  float64 (<f8)  (10,)      little-endian  C (row-major)     10        80",
		"long  float32 (<f4)  (300000,)  little-endian  C (row-major)     300000    1200000",
		"be    float64 (>f8)  (3, 4)     big-endian     F (column-major)  12        96",
	} {
		assert.Contains(t, out, want)
	}
}

func TestStatsMatchNumPy(t *testing.T) {
	dir := t.TempDir()
	var want map[string]map[string]any
	require.NoError(t, json.Unmarshal(numpy(t, dir, writeFiles), &want))

	args := []string{"-json", "-stats"}
	for _, n := range []string{"c.npy", "f.npy", "be.npy", "h.npy", "b.npy", "u.npy", "scalar.npy", "plain.npz", "packed.npz"} {
		args = append(args, filepath.Join(dir, n))
	}
	code, out, errs := tensorinfo(args...)
	require.Equal(t, 0, code, errs)
	var got []fileReport
	var raw []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, raw, 9)
	checked := 0
	for i, f := range raw {
		arrays := f["arrays"].([]any)
		require.NotEmpty(t, arrays)
		for _, a := range arrays {
			a := a.(map[string]any)
			key := a["name"].(string)
			if got[i].Format == "npz" {
				key = "npz:" + key
			}
			w, ok := want[key]
			require.True(t, ok, key)
			s := a["stats"].(map[string]any)
			for _, k := range []string{"min", "max", "mean"} {
				if wf, isNum := w[k].(float64); isNum {
					assert.InDelta(t, wf, s[k].(float64), 1e-6*math.Max(1, math.Abs(wf)), "%s %s", key, k)
				} else {
					assert.Equal(t, w[k], s[k], "%s %s", key, k)
				}
			}
			assert.Equal(t, w["nan_count"], s["nan_count"], key)
			checked++
		}
	}
	assert.Equal(t, 7+5+5, checked)

	// the same, as text
	code, out, errs = tensorinfo("-stats", filepath.Join(dir, "f.npy"), filepath.Join(dir, "cplx.npy"))
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "MIN  MAX  MEAN")
	assert.Contains(t, out, "  -4   +Inf  +Inf  1\n")
	assert.Contains(t, out, "cplx.npy  complex64 (<c8)  (1,)   little-endian  C (row-major)  1         8      -    -    -     -")
}

// An .npz member larger than what -repr reads into memory is noted, not shown; its summary is
// streamed whatever its size.
func TestLargeNPZMember(t *testing.T) {
	dir := t.TempDir()
	numpy(t, dir, writeFiles)
	defer func(old int64) { copyLimit = old }(copyLimit)
	copyLimit = 1000
	code, out, errs := tensorinfo("-json", "-stats", "-repr", "-name", "long", filepath.Join(dir, "packed.npz"))
	require.Equal(t, 0, code, errs)
	var got []fileReport
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	a := got[0].Arrays[0]
	assert.Equal(t, "(not shown: the member holds 1200000 bytes, more than this tool reads into memory (1000))", a.Repr)
	require.NotNil(t, a.Stats)
	assert.Equal(t, int64(300), a.Stats.NaN)
}

func TestRepr(t *testing.T) {
	dir := t.TempDir()
	numpy(t, dir, writeFiles)
	code, out, errs := tensorinfo("-repr", "-name", "ids", filepath.Join(dir, "packed.npz"))
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "\"ids\" =\narray([0, 1, 2, 3, 4])\n")
	assert.NotContains(t, out, "\"w\"")

	// the excerpt is NumPy's own repr (a mapped file is read-only: display says so)
	code, out, errs = tensorinfo("-json", "-repr", filepath.Join(dir, "c.npy"))
	require.Equal(t, 0, code, errs)
	var got []fileReport
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	want := strings.TrimSpace(string(numpy(t, dir, "print(repr(np.load('c.npy')))")))
	want = strings.TrimSuffix(want, ")") + ", readonly=True)"
	assert.Equal(t, want, got[0].Arrays[0].Repr)
}

// A .npy file larger than this machine's memory (a sparse file of 64 GiB) is listed, and its
// excerpt shown, from a memory map: only the header and the values shown are read.
func TestLargerThanMemory(t *testing.T) {
	dir := t.TempDir()
	numpy(t, dir, `
with open('big.npy', 'wb') as f:
    np.lib.format.write_array_header_1_0(f, {'descr': '<f8', 'fortran_order': False, 'shape': (1 << 33,)})
    f.truncate(f.tell() + (1 << 36))
`)
	path := filepath.Join(dir, "big.npy")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Greater(t, fi.Size(), int64(1<<36))

	code, out, errs := tensorinfo("-repr", path)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "big.npy  float64 (<f8)  (8589934592,)  little-endian  C (row-major)  8589934592  68719476736")
	assert.Contains(t, out, "array([0., 0., 0., ..., 0., 0., 0.], readonly=True)")

	c, err := openNPY(path, options{})
	require.NoError(t, err)
	x, err := c.tensor(0)
	require.NoError(t, err)
	defer x.Release()
	assert.True(t, x.Foreign() && x.ReadOnly(), "a memory map, not a copy")
}

func TestHostileFiles(t *testing.T) {
	dir := t.TempDir()
	numpy(t, dir, writeFiles+`
import struct, zipfile
good = open('c.npy', 'rb').read()
open('truncated.npy', 'wb').write(good[:-5])
open('short.npy', 'wb').write(good[:9])
open('notnpy.npy', 'wb').write(b'hello, world, not a numpy file')
hdr = b"{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }"
hdr += b' ' * (118 - len(hdr)) + b'\n'
open('huge.npy', 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr)
hdr = b"{'descr': '<q7', 'fortran_order': False, 'shape': (1,), }"
hdr += b' ' * (118 - len(hdr)) + b'\n'
open('dtype.npy', 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr + b'\0' * 8)
z = open('plain.npz', 'rb').read()
open('cut.npz', 'wb').write(z[:len(z) // 2])
open('junk.npz', 'wb').write(b'PK\x03\x04' + b'\xff' * 60)
with zipfile.ZipFile('evil.npz', 'w') as zf:
    zf.writestr('x.npy', good[:-5])
open('plain.txt', 'w').write('just text')
`)
	for _, c := range []struct {
		file string
		want error  // nil: only the message is checked
		msg  string // in the message on stderr
		args []string
	}{
		{"truncated.npy", numpyx.ErrTruncated, "header promises 48 data bytes", nil},
		{"short.npy", numpyx.ErrTruncated, "only 1 of the 2 bytes of the header length", nil},
		{"notnpy.npy", numpyx.ErrFormat, "numpyx:", nil},
		{"huge.npy", numpyx.ErrHeader, "overflows int64 bytes", nil},
		{"dtype.npy", numpyx.ErrUnsupportedDType, `descr "<q7"`, nil},
		{"cut.npz", numpyx.ErrFormat, "not a zip archive", nil},
		{"junk.npz", numpyx.ErrFormat, "not a zip archive", nil},
		{"evil.npz", numpyx.ErrTruncated, `array "x"`, []string{"-stats"}},
		{"plain.txt", nil, "not a tensor file this tool reads (gguf, npy, npz, parquet, safetensors)", nil},
		{"missing.npy", os.ErrNotExist, "no such file", nil},
		{"plain.npz", nil, `no array named "nope"`, []string{"-name", "nope"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			others := []string{filepath.Join(dir, "u.npy")}
			if len(c.args) > 0 && c.args[0] == "-name" {
				others = nil // the name would not be found there either
			}
			code, out, errs := tensorinfo(append(append(c.args, path), others...)...)
			assert.Equal(t, 1, code)
			namesFileOnce(t, errs, path)
			assert.Contains(t, errs, c.msg)
			assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %s", errs)
			if others != nil {
				assert.Contains(t, out, "u.npy (npy, 1 array)", "the other files are still shown")
			}
			if c.want != nil {
				o := options{}
				if len(c.args) > 0 && c.args[0] == "-stats" {
					o.stats = true
				}
				_, err := inspect(path, o)
				assert.True(t, errors.Is(err, c.want), "%v is not %v", err, c.want)
			}
			// and in JSON, the file carries its error
			code, out, _ = tensorinfo(append([]string{"-json"}, append(c.args, path)...)...)
			assert.Equal(t, 1, code)
			var got []fileReport
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			require.Len(t, got, 1)
			assert.Contains(t, got[0].Error, c.msg)
		})
	}
}

// namesFileOnce checks an error line of tensorinfo: it leads with "tensorinfo: " and names the
// file once (not "tensorinfo: f.gguf: ggufx: ... (in f.gguf)").
func namesFileOnce(t *testing.T, errs, path string) {
	t.Helper()
	assert.True(t, strings.HasPrefix(errs, "tensorinfo: "), errs)
	assert.Equal(t, 1, strings.Count(errs, path), "the file named once: %s", errs)
}

func TestUsage(t *testing.T) {
	code, _, errs := tensorinfo()
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "usage: tensorinfo")
	code, _, _ = tensorinfo("-bogus", "x.npy")
	assert.Equal(t, 2, code)
	code, _, errs = tensorinfo("-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, errs, "-stats")
}

// .safetensors files: every tensor listed from the header, summaries from the memory map agree
// with NumPy's over the same values (NumPy computes them; safetensorsx writes the file).
func TestSafetensors(t *testing.T) {
	dir := t.TempDir()
	var want map[string]map[string]any
	require.NoError(t, json.Unmarshal(numpy(t, dir, writeFiles), &want))
	tensors := map[string]*core.Tensor{}
	for _, n := range []string{"c", "h", "u"} {
		x, err := numpyx.ReadFile(filepath.Join(dir, n+".npy"))
		require.NoError(t, err)
		tensors[n] = x
	}
	path := filepath.Join(dir, "weights.safetensors")
	require.NoError(t, safetensorsx.WriteFile(path, tensors, map[string]string{"format": "np"}))
	noext := filepath.Join(dir, "weights")
	require.NoError(t, os.Link(path, noext))

	code, out, errs := tensorinfo(path)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "weights.safetensors (safetensors, 3 arrays)")
	assert.Contains(t, out, "c     float32 (F32)  (3, 4)  little-endian   C (row-major)  12        48")
	assert.Contains(t, out, "h     float16 (F16)  (4,)    little-endian   C (row-major)  4         8")

	code, out, errs = tensorinfo("-json", "-stats", noext) // recognised by its first bytes
	require.Equal(t, 0, code, errs)
	var got []fileReport
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got, 1)
	assert.Equal(t, "safetensors", got[0].Format)
	require.Len(t, got[0].Arrays, 3)
	for _, a := range got[0].Arrays {
		w := want[a.Name+".npy"]
		require.NotNil(t, a.Stats, a.Name)
		require.True(t, a.Stats.Mean.ok, a.Name)
		assert.InDelta(t, w["mean"].(float64), a.Stats.Mean.v, 1e-6, a.Name)
		assert.Equal(t, int64(w["nan_count"].(float64)), a.Stats.NaN, a.Name)
	}

	// a hostile file: a header length past the end
	bad := filepath.Join(dir, "bad.safetensors")
	require.NoError(t, os.WriteFile(bad, []byte("\xff\x00\x00\x00\x00\x00\x00\x00{}"), 0o644))
	code, _, errs = tensorinfo(bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "safetensorsx:")
}
