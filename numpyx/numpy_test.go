package numpyx_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/pyrun"
	"github.com/dlpack-go/dlpack/internal/refcheck"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/numpyx"
)

// genScript writes, into argv[1], .npy files of every supported dtype × shape × memory order ×
// byte order, versions 2.0 and 3.0, and .npz archives (stored and deflated); next to each array
// the raw C-order native bytes it must read as; and a manifest line per case on stdout.
const genScript = `
import sys, os, json, io
import numpy as np
from numpy.lib import format as fmt
out = sys.argv[1]
dtypes = ['b1','i1','i2','i4','i8','u1','u2','u4','u8','f2','f4','f8','c8','c16']
shapes = [(), (0,), (3, 0, 2), (5,), (2, 3), (2, 3, 4)]

def make(dt, shape, seed):
    n = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    d = np.dtype(dt)
    if d.kind == 'b':
        a = rng.integers(0, 2, n).astype(bool)
    elif d.kind in 'iu':
        info = np.iinfo(d)
        a = rng.integers(info.min, info.max, n, dtype=d, endpoint=True)
    elif d.kind == 'f':
        a = (rng.standard_normal(n) * 100).astype(d)
        for i, v in enumerate([np.nan, np.inf, -0.0, -np.inf]):
            if i < n:
                a[i] = v
    else:
        a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(d)
        if n > 1:
            a[1] = complex(np.nan, np.inf)
    return a.reshape(shape)

def emit(name, a, path, kind):
    raw = os.path.join(out, name + '.raw')
    with open(raw, 'wb') as f:
        f.write(np.ascontiguousarray(a).astype(a.dtype.newbyteorder('=')).tobytes(order='C'))
    print(json.dumps({'name': name, 'path': path, 'kind': kind, 'raw': raw, 'descr': a.dtype.str,
                      'shape': list(a.shape), 'fortran': bool(a.flags.f_contiguous and not a.flags.c_contiguous)}))

seed = 0
for dt in dtypes:
    for shape in shapes:
        for order in 'CF':
            for bo in '<>':
                seed += 1
                a = make(dt, shape, seed)
                a = a.astype(a.dtype.newbyteorder(bo))
                a = np.asfortranarray(a) if order == 'F' else np.ascontiguousarray(a)
                name = '%s_%s_%s_%s' % (dt, 'x'.join(map(str, shape)) or 'scalar', order, 'be' if bo == '>' else 'le')
                path = os.path.join(out, name + '.npy')
                np.save(path, a)
                emit(name, a, path, 'npy')
for ver in [(2, 0), (3, 0)]:
    for dt, order, bo in [('f4', 'C', '<'), ('c16', 'F', '<'), ('i2', 'C', '>'), ('b1', 'F', '|')]:
        seed += 1
        a = make(dt, (3, 4), seed).astype(np.dtype(dt).newbyteorder(bo))
        a = np.asfortranarray(a) if order == 'F' else a
        name = 'v%d_%s_%s' % (ver[0], dt, order)
        path = os.path.join(out, name + '.npy')
        with open(path, 'wb') as f:
            fmt.write_array(f, a, version=ver)
        emit(name, a, path, 'npy')
for comp in [False, True]:
    arrs = {}
    for i, dt in enumerate(dtypes):
        seed += 1
        a = make(dt, [(2, 3), (4,), (), (0, 3), (2, 2, 2)][i % 5], seed)
        if i % 3 == 1:
            a = np.asfortranarray(a)
        if i % 4 == 2:
            a = a.astype(a.dtype.newbyteorder('>'))
        arrs['a_' + dt] = a
    path = os.path.join(out, 'arch_%s.npz' % ('deflated' if comp else 'stored'))
    (np.savez_compressed if comp else np.savez)(path, **arrs)
    for k, a in arrs.items():
        emit(os.path.basename(path) + ':' + k, a, path + ':' + k, 'npz')
`

type genCase struct {
	Name, Path, Kind, Raw, Descr string
	Shape                        []int64
	Fortran                      bool
}

// numpys are the NumPy releases the files are checked against: Debian's 1.24 (the oldest
// supported) and the project's venv's 2.x (scripts/pyvenv.sh), each a subtest named after its
// version, so that the conformance table counts every case of each.
func numpys(t *testing.T) []struct{ name, python string } {
	t.Helper()
	var out []struct{ name, python string }
	for _, py := range []string{pyrun.Interpreter, refcheck.Venv(t)} {
		v := strings.TrimSpace(pyrun.RunWith(t, py, "", "import numpy; print(numpy.__version__)"))
		out = append(out, struct{ name, python string }{"numpy-" + v, py})
	}
	return out
}

func generate(t *testing.T, python string) []genCase {
	t.Helper()
	dir := t.TempDir()
	out := pyrun.RunWith(t, python, "", genScript, dir)
	var cases []genCase
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var c genCase
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		cases = append(cases, c)
	}
	require.Greater(t, len(cases), 300, "the generator made too few cases")
	return cases
}

// contiguousBytes returns t's elements in C order as bytes, through the adapters kernel.
func contiguousBytes(t *testing.T, x *core.Tensor) []byte {
	t.Helper()
	c, err := memory.Contiguous(x)
	require.NoError(t, err)
	b, err := c.ReadOnlyBytes()
	require.NoError(t, err)
	return b
}

// checkCase asserts that x holds what NumPy wrote for c.
func checkCase(t *testing.T, c genCase, x *core.Tensor) {
	t.Helper()
	want, err := os.ReadFile(c.Raw)
	require.NoError(t, err)
	require.Equal(t, c.Shape, x.Shape(), c.Name)
	dt, err := descrDType(c.Descr)
	require.NoError(t, err)
	require.Equal(t, dt, x.DType(), c.Name)
	if c.Fortran && x.Ndim() > 1 && x.Len() > 1 {
		assert.True(t, x.IsFortranContiguous(), "%s: want Fortran strides, got %v", c.Name, x.Strides())
	} else {
		assert.True(t, x.IsContiguous(), "%s: want C strides, got %v", c.Name, x.Strides())
	}
	assert.Equal(t, want, contiguousBytes(t, x), "%s: values differ", c.Name)
}

// descrDType maps the NumPy dtype string the generator reports, for the test's own check.
func descrDType(d string) (core.DLDataType, error) {
	m := map[string]core.DLDataType{"b1": core.Bool, "i1": core.Int8, "i2": core.Int16, "i4": core.Int32,
		"i8": core.Int64, "u1": core.Uint8, "u2": core.Uint16, "u4": core.Uint32, "u8": core.Uint64,
		"f2": core.Float16, "f4": core.Float32, "f8": core.Float64, "c8": core.Complex64, "c16": core.Complex128}
	if dt, ok := m[d[1:]]; ok {
		return dt, nil
	}
	return core.DLDataType{}, fmt.Errorf("unknown descr %q", d)
}

// TestReadNumPy reads every file NumPy wrote, through every reader, and compares the values
// byte for byte with the raw C-order bytes NumPy dumped.
func TestReadNumPy(t *testing.T) {
	for _, np := range numpys(t) {
		t.Run(np.name, func(t *testing.T) { readNumPy(t, generate(t, np.python)) })
	}
}

// readNumPy reads each file of cases through every reader, one subtest a case.
func readNumPy(t *testing.T, cases []genCase) {
	npz := map[string]*numpyx.NPZ{}
	defer func() {
		for _, z := range npz {
			z.Close()
		}
	}()
	var nNpy, nNpz int
	for _, c := range cases {
		if c.Kind == "npz" {
			nNpz++
			t.Run(c.Name, func(t *testing.T) {
				path, key, _ := strings.Cut(c.Path, ":")
				z := npz[path]
				if z == nil {
					var err error
					z, err = numpyx.Open(path)
					require.NoError(t, err)
					npz[path] = z
				}
				x, err := z.Read(key)
				require.NoError(t, err, c.Name)
				checkCase(t, c, x)
				all, err := numpyx.ReadNPZ(path)
				require.NoError(t, err)
				require.Contains(t, all, key)
				checkCase(t, c, all[key])
			})
			continue
		}
		nNpy++
		t.Run(c.Name, func(t *testing.T) { readNPY(t, c) })
	}
	assert.Equal(t, 14*6*2*2+8, nNpy)
	assert.Equal(t, 28, nNpz)
}

// readNPY reads one .npy file NumPy wrote through every reader.
func readNPY(t *testing.T, c genCase) {
	x, err := numpyx.ReadFile(c.Path)
	require.NoError(t, err, c.Name)
	checkCase(t, c, x)

	// io.Reader that cannot tell its size: the chunked path
	raw, err := os.ReadFile(c.Path)
	require.NoError(t, err)
	x, err = numpyx.Read(onlyReader{bytes.NewReader(raw)})
	require.NoError(t, err, c.Name)
	checkCase(t, c, x)

	// memory map: zero-copy unless the bytes must be swapped
	var copied bool
	m, err := numpyx.Map(c.Path, adapters.ReportCopy(&copied))
	require.NoError(t, err, c.Name)
	checkCase(t, c, m)
	h, err := numpyx.ReadHeader(bytes.NewReader(raw))
	require.NoError(t, err)
	assert.Equal(t, h.NeedsSwap() && h.Len() > 0, copied, c.Name)
	assert.Equal(t, int64(0), h.DataOffset%numpyx.Alignment)
	if !copied && h.Len() > 0 {
		assert.True(t, m.ReadOnly())
		assert.True(t, m.Foreign())
	}
	m.Release()
}

// onlyReader hides every method but Read.
type onlyReader struct{ r *bytes.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// verifyScript checks, for each manifest line on stdin, that np.load reads the Go-written file
// as the expected array, and that np.save writes the same bytes for it; it prints a JSON line per
// case with the error, "" where the case passed.
const verifyScript = `
import sys, json, io, zipfile
import numpy as np

def check(c):
    if c['kind'] == 'npz':
        path, key = c['path'].split(':', 1)
        with np.load(path, allow_pickle=False) as z:
            a = z[key]
    else:
        a = np.load(c['path'], allow_pickle=False)
    raw = open(c['raw'], 'rb').read()
    exp = np.frombuffer(raw, dtype=np.dtype(c['descr'])).reshape(c['shape'])
    assert a.dtype.str == c['descr'], ('dtype', a.dtype.str, c['descr'])
    assert list(a.shape) == c['shape'], ('shape', a.shape)
    assert np.array_equal(a, exp, equal_nan=a.dtype.kind in 'fc'), 'values differ'
    assert a.tobytes(order='C') == exp.tobytes(order='C'), 'bytes differ'
    fortran = a.flags.f_contiguous and not a.flags.c_contiguous
    assert fortran == c['fortran'], ('fortran', fortran)
    if c['kind'] == 'npy':
        b = io.BytesIO()
        np.save(b, a)
        assert b.getvalue() == open(c['path'], 'rb').read(), 'bytes differ from np.save'

for line in sys.stdin:
    c = json.loads(line)
    try:
        check(c)
        print(json.dumps({'name': c['name'], 'error': ''}))
    except Exception as e:
        print(json.dumps({'name': c['name'], 'error': repr(e) or 'failed'}))
`

// layouts makes views of a C-order tensor that exercise every path of Write.
var layouts = []struct {
	name    string
	fortran bool
	make    func(x *core.Tensor) (*core.Tensor, error)
}{
	{"c", false, func(x *core.Tensor) (*core.Tensor, error) { return x, nil }},
	{"f", true, func(x *core.Tensor) (*core.Tensor, error) { return memory.Clone(x, memory.FortranOrder) }},
	{"transposed", true, func(x *core.Tensor) (*core.Tensor, error) { return x.Transpose() }},
	{"permuted", false, func(x *core.Tensor) (*core.Tensor, error) { return x.Permute(1, 0, 2) }},
	{"reversed", false, func(x *core.Tensor) (*core.Tensor, error) { return x.Reverse(2) }},
	{"stepped", false, func(x *core.Tensor) (*core.Tensor, error) { return x.Slice(1, 0, core.End, 2) }},
	{"broadcast", false, func(x *core.Tensor) (*core.Tensor, error) {
		v, err := x.Slice(0, 0, 1, 1)
		if err != nil {
			return nil, err
		}
		return v.BroadcastTo(4, x.Dim(1), x.Dim(2))
	}},
}

// goTensor makes a C-order tensor of dt with values every type holds exactly.
func goTensor(t *testing.T, dt core.DLDataType, shape ...int64) *core.Tensor {
	t.Helper()
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = float64((i*7)%19) + float64(i%4)*0.25
		if dt.Code == core.CodeInt && i%3 == 0 {
			v[i] = -v[i]
		}
	}
	src, err := core.FromSlice(v, shape...)
	require.NoError(t, err)
	x, err := memory.Cast(src, dt)
	require.NoError(t, err)
	return x
}

var allDTypes = []core.DLDataType{core.Bool, core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8,
	core.Uint16, core.Uint32, core.Uint64, core.Float16, core.Float32, core.Float64, core.Complex64, core.Complex128}

// TestWriteNumPy writes every dtype in every layout (and 0-d and empty arrays, and .npz archives
// stored and deflated) from Go, and has NumPy check each file with np.load and np.array_equal.
func TestWriteNumPy(t *testing.T) {
	dir := t.TempDir()
	var manifest bytes.Buffer
	add := func(name, path, kind string, x *core.Tensor, fortran bool) {
		raw := filepath.Join(dir, name+".raw")
		require.NoError(t, os.WriteFile(raw, contiguousBytes(t, x), 0o644))
		h, err := numpyx.HeaderOf(x)
		require.NoError(t, err)
		require.Equal(t, fortran, h.Fortran, name)
		line, err := json.Marshal(map[string]any{"name": name, "path": path, "kind": kind, "raw": raw,
			"descr": h.Descr, "shape": x.Shape(), "fortran": fortran})
		require.NoError(t, err)
		manifest.Write(append(line, '\n'))
	}
	n := 0
	for _, dt := range allDTypes {
		base := goTensor(t, dt, 4, 3, 5)
		for _, l := range layouts {
			x, err := l.make(base)
			require.NoError(t, err)
			name := fmt.Sprintf("%s_%s", dt, l.name)
			path := filepath.Join(dir, name+".npy")
			require.NoError(t, numpyx.WriteFile(path, x))
			add(name, path, "npy", x, l.fortran)
			n++
		}
		for _, shape := range [][]int64{{}, {0}, {2, 0, 3}, {7}} {
			x := goTensor(t, dt, shape...)
			name := fmt.Sprintf("%s_%v", dt, shape)
			path := filepath.Join(dir, name+".npy")
			require.NoError(t, numpyx.WriteFile(path, x))
			add(name, path, "npy", x, false)
			n++
		}
	}
	for _, comp := range []bool{false, true} {
		arrays := map[string]*core.Tensor{}
		path := filepath.Join(dir, fmt.Sprintf("go_%v.npz", comp))
		for i, dt := range allDTypes {
			x, err := layouts[i%len(layouts)].make(goTensor(t, dt, 2, 3, 4))
			require.NoError(t, err)
			arrays["x"+dt.String()] = x
		}
		if comp {
			require.NoError(t, numpyx.WriteNPZ(path, arrays, numpyx.Compressed()))
		} else {
			require.NoError(t, numpyx.WriteNPZ(path, arrays))
		}
		for i, dt := range allDTypes {
			k := "x" + dt.String()
			add(fmt.Sprintf("npz%v_%s", comp, k), path+":"+k, "npz", arrays[k], layouts[i%len(layouts)].fortran)
			n++
		}
		// and the archive reads back in Go, member by member
		back, err := numpyx.ReadNPZ(path)
		require.NoError(t, err)
		require.Len(t, back, len(arrays))
		for k, x := range arrays {
			assert.Equal(t, contiguousBytes(t, x), contiguousBytes(t, back[k]), k)
		}
	}
	for _, np := range numpys(t) {
		t.Run(np.name, func(t *testing.T) {
			cmd := exec.Command(np.python, "-c", verifyScript)
			cmd.Stdin = bytes.NewReader(manifest.Bytes())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, "the NumPy check failed:\n%s", stderr.String())
			got := 0
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				var r struct{ Name, Error string }
				require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
				got++
				t.Run(r.Name, func(t *testing.T) {
					if r.Error != "" {
						t.Errorf("NumPy %s refused the file Go wrote: %s", np.name, r.Error)
					}
				})
			}
			assert.Equal(t, n, got, "cases NumPy checked")
		})
	}
}
