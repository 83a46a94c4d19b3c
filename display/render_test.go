package display_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/display"
	"github.com/dlpack-go/dlpack/internal/pyrun"
)

// renderPython runs script with Debian's python3 and NumPy and returns what it prints. A missing
// interpreter or NumPy fails the test: CI installs python3-numpy.
func renderPython(t *testing.T, dir, script string) []byte {
	t.Helper()
	cmd := exec.Command(pyrun.Interpreter, "-c", script)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "python3 with NumPy is required (apt-get install python3-numpy): %s", stderr.String())
	return out
}

// renderCase is a tensor built from C-order data, then viewed, and the same in NumPy.
type renderCase struct {
	name  string
	data  any    // a []T of C-order elements
	dtype string // NumPy dtype of data
	shape []int64
	view  func(*core.Tensor) (*core.Tensor, error) // nil: the tensor itself
	numpy string                                   // view of a in NumPy; "" for a itself
}

// bytesOf returns the raw bytes of a slice of fixed-size elements.
func bytesOf(t *testing.T, data any) []byte {
	var buf bytes.Buffer
	require.NoError(t, binary.Write(&buf, binary.NativeEndian, data))
	return buf.Bytes()
}

func tensorOf(t *testing.T, data any, shape []int64) *core.Tensor {
	t.Helper()
	var x *core.Tensor
	var err error
	switch d := data.(type) {
	case []bool:
		x, err = core.FromBools(d, shape...)
	case []int8:
		x, err = core.FromInt8s(d, shape...)
	case []int16:
		x, err = core.FromInt16s(d, shape...)
	case []int32:
		x, err = core.FromInt32s(d, shape...)
	case []int64:
		x, err = core.FromInt64s(d, shape...)
	case []uint8:
		x, err = core.FromUint8s(d, shape...)
	case []uint16:
		x, err = core.FromUint16s(d, shape...)
	case []uint32:
		x, err = core.FromUint32s(d, shape...)
	case []uint64:
		x, err = core.FromUint64s(d, shape...)
	case []float16.Float16:
		x, err = core.FromFloat16s(d, shape...)
	case []float32:
		x, err = core.FromFloat32s(d, shape...)
	case []float64:
		x, err = core.FromFloat64s(d, shape...)
	case []complex64:
		x, err = core.FromComplex64s(d, shape...)
	case []complex128:
		x, err = core.FromComplex128s(d, shape...)
	default:
		t.Fatalf("no tensor of %T", data)
	}
	require.NoError(t, err)
	if len(shape) == 0 {
		x, err = x.Reshape()
		require.NoError(t, err)
	}
	return x
}

func seq(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func f32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func f16s(v ...float64) []float16.Float16 {
	out := make([]float16.Float16, len(v))
	for i, x := range v {
		out[i] = float16.Fromfloat32(float32(x))
	}
	return out
}

func renderCases() []renderCase {
	inf, nan := math.Inf(1), math.NaN()
	return []renderCase{
		{name: "float64 matrix", data: []float64{1, 2, 3, 4}, dtype: "float64", shape: []int64{2, 2}},
		{name: "float32 matrix", data: []float32{1, 2, 3, 4}, dtype: "float32", shape: []int64{2, 2}},
		{name: "uneven fractions", data: []float64{1, 2.5, -0.125}, dtype: "float64", shape: []int64{3}},
		{name: "wrapped row", data: seq(30, func(i int) float64 { return float64(i) }), dtype: "float64", shape: []int64{30}},
		{name: "summarised exp", data: seq(2000, func(i int) float64 { return float64(i) }), dtype: "float64", shape: []int64{40, 50}},
		{name: "summarised ints", data: func() []int64 {
			v := make([]int64, 3000)
			for i := range v {
				v[i] = int64(i)
			}
			return v
		}(), dtype: "int64", shape: []int64{10, 300}},
		{name: "non-finite", data: []float64{1e-5, 1.5, nan, -inf}, dtype: "float64", shape: []int64{4}},
		{name: "only nan", data: []float64{nan, inf}, dtype: "float64", shape: []int64{2}},
		{name: "wide exponents", data: []float64{1e100, 1e-5, -3}, dtype: "float64", shape: []int64{3}},
		{name: "negative zero", data: []float64{math.Copysign(0, -1), 1}, dtype: "float64", shape: []int64{2}},
		{name: "third float32", data: []float32{1.0 / 3, 2.0 / 3, 100}, dtype: "float32", shape: []int64{3}},
		{name: "round half even", data: []float64{0.001953125, 0.1 + 0.2}, dtype: "float64", shape: []int64{2}},
		{name: "large positional", data: []float64{12345678.5, 1}, dtype: "float64", shape: []int64{2}},
		{name: "float16", data: f16s(0.1, 0.2, 1.0/3, 65504, -2.5), dtype: "float16", shape: []int64{5}},
		{name: "float16 tiny", data: f16s(6e-8, 1, 1000), dtype: "float16", shape: []int64{3}},
		{name: "complex64", data: []complex64{1 + 2i, complex(float32(nan), -1), 0.5 - 0.25i}, dtype: "complex64", shape: []int64{3}},
		{name: "complex128 exp", data: []complex128{1e-7 + 1i, complex(inf, 3)}, dtype: "complex128", shape: []int64{2}},
		{name: "int8", data: []int8{1, -128, 3, 4}, dtype: "int8", shape: []int64{2, 2}},
		{name: "int16", data: []int16{-5, 300}, dtype: "int16", shape: []int64{2}},
		{name: "int32", data: []int32{1, 2}, dtype: "int32", shape: []int64{2}},
		{name: "uint8", data: []uint8{0, 255, 7}, dtype: "uint8", shape: []int64{3}},
		{name: "uint16", data: []uint16{65535}, dtype: "uint16", shape: []int64{1}},
		{name: "uint32", data: []uint32{4000000000, 1}, dtype: "uint32", shape: []int64{2}},
		{name: "uint64 max", data: []uint64{math.MaxUint64}, dtype: "uint64", shape: []int64{1}},
		{name: "bools", data: []bool{true, false, true, true}, dtype: "bool", shape: []int64{2, 2}},
		{name: "all true", data: []bool{true, true}, dtype: "bool", shape: []int64{2}},
		{name: "0-d bool", data: []bool{true}, dtype: "bool", shape: []int64{}},
		{name: "0-d float64", data: []float64{1.5}, dtype: "float64", shape: []int64{}},
		{name: "0-d float32", data: []float32{-2}, dtype: "float32", shape: []int64{}},
		{name: "0-d complex64", data: []complex64{1 - 1i}, dtype: "complex64", shape: []int64{}},
		{name: "empty (0,)", data: []float64{}, dtype: "float64", shape: []int64{0}},
		{name: "empty (0, 3)", data: []float32{}, dtype: "float32", shape: []int64{0, 3}},
		{name: "empty (2, 0)", data: []float64{}, dtype: "float64", shape: []int64{2, 0}},
		{name: "empty int64", data: []int64{}, dtype: "int64", shape: []int64{0}},
		{name: "3-D", data: func() []int32 {
			v := make([]int32, 24)
			for i := range v {
				v[i] = int32(i)
			}
			return v
		}(), dtype: "int32", shape: []int64{2, 3, 4}},
		{name: "4-D summarised", data: seq(4*5*7*11, func(i int) float64 { return float64(i) / 8 }), dtype: "float64", shape: []int64{4, 5, 7, 11}},
		{name: "transpose", data: seq(6, func(i int) float64 { return float64(i) * 1.5 }), dtype: "float64", shape: []int64{2, 3},
			view: (*core.Tensor).Transpose, numpy: "a.T"},
		{name: "reversed slice", data: f32s(seq(12, func(i int) float64 { return float64(i) - 5.25 })), dtype: "float32", shape: []int64{3, 4},
			view: func(x *core.Tensor) (*core.Tensor, error) {
				v, err := x.Slice(1, core.End, core.Begin, -2)
				if err != nil {
					return nil, err
				}
				return v.Reverse(0)
			}, numpy: "a[::-1, ::-2]"},
		{name: "index", data: []int64{1, -20, 300, 4, 5, 6}, dtype: "int64", shape: []int64{2, 3},
			view: func(x *core.Tensor) (*core.Tensor, error) { return x.Index(1, 1) }, numpy: "a[:, 1]"},
	}
}

// TestReprMatchesNumPy compares Repr with NumPy's repr of the same values and view.
func TestReprMatchesNumPy(t *testing.T) {
	cases := renderCases()
	dir := t.TempDir()
	var script strings.Builder
	script.WriteString("import numpy as np, json\nout = []\n")
	got := make([]string, len(cases))
	for i, c := range cases {
		x := tensorOf(t, c.data, c.shape)
		if c.view != nil {
			var err error
			x, err = c.view(x)
			require.NoError(t, err, c.name)
		}
		got[i] = display.Repr(x)
		file := strconv.Itoa(i) + ".bin"
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), bytesOf(t, c.data), 0o600))
		shape := make([]string, len(c.shape))
		for k, d := range c.shape {
			shape[k] = strconv.FormatInt(d, 10)
		}
		view := c.numpy
		if view == "" {
			view = "a"
		}
		tuple := "()"
		if len(shape) > 0 {
			tuple = "(" + strings.Join(shape, ",") + ",)"
		}
		fmt.Fprintf(&script, "a = np.fromfile(%q, dtype=%q).reshape(%s)\nout.append(repr(%s))\n",
			file, c.dtype, tuple, view)
	}
	script.WriteString("print(json.dumps(out))\n")
	var want []string
	require.NoError(t, json.Unmarshal(renderPython(t, dir, script.String()), &want))
	require.Len(t, want, len(cases))
	for i, c := range cases {
		assert.Equal(t, want[i], got[i], c.name)
	}
}

// TestReprFloat16Values compares Repr of a third of all finite float16 values (every third bit
// pattern: every exponent, both signs, subnormals) with NumPy's: the shortest digits of each
// value and the choice of notation.
func TestReprFloat16Values(t *testing.T) {
	dir := t.TempDir()
	var vals []float16.Float16
	for b := 0; b < 1<<16; b += 3 {
		if v := float16.Frombits(uint16(b)); !v.IsNaN() && !v.IsInf(0) {
			vals = append(vals, v)
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f16.bin"), bytesOf(t, vals), 0o600))
	out := renderPython(t, dir, `import numpy as np
for x in np.fromfile("f16.bin", dtype=np.float16):
    print(repr(np.array(x)))`)
	want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, want, len(vals))
	bad := 0
	for i, v := range vals {
		got := display.Repr(core.Scalar(v))
		if got != want[i] && bad < 10 {
			bad++
			t.Errorf("float16 %#04x: got %s, NumPy %s", v.Bits(), got, want[i])
		}
	}
}

// TestReprFloat32Sample compares Repr of random float32 bit patterns, alone and in pairs (which
// share a format), with NumPy's.
func TestReprFloat32Sample(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]float32, 0, 4000)
	for len(vals) < cap(vals) {
		v := math.Float32frombits(rng.Uint32())
		if len(vals)%2 == 1 {
			v = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(9)-4)))
		}
		if !math.IsNaN(float64(v)) {
			vals = append(vals, v)
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f32.bin"), bytesOf(t, vals), 0o600))
	out := renderPython(t, dir, `import numpy as np
a = np.fromfile("f32.bin", dtype=np.float32)
for x in a:
    print(repr(np.array(x)))
for i in range(0, len(a), 2):
    print(repr(a[i:i+2]).replace("\n", "|"))`)
	want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, want, len(vals)+len(vals)/2)
	bad := 0
	check := func(got, want, what string) {
		if got != want && bad < 10 {
			bad++
			t.Errorf("%s: got %s, NumPy %s", what, got, want)
		}
	}
	for i, v := range vals {
		check(display.Repr(core.Scalar(v)), want[i], fmt.Sprint(v))
	}
	for i := 0; i < len(vals); i += 2 {
		pair := core.MustFromSlice(vals[i : i+2])
		check(strings.ReplaceAll(display.Repr(pair), "\n", "|"), want[len(vals)+i/2], fmt.Sprint(vals[i:i+2]))
	}
}

// TestReprBFloat16RoundTrip checks that the digits Repr writes for every finite bfloat16 read
// back as the same bfloat16, and that one digit fewer would not (NumPy has no bfloat16 to
// compare with).
func TestReprBFloat16RoundTrip(t *testing.T) {
	for b := 0; b < 1<<16; b++ {
		v := core.BF16(b)
		f := v.Float32()
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			continue
		}
		s := display.Repr(core.Scalar(v))
		num := strings.TrimSuffix(strings.TrimPrefix(s, "array("), ", dtype=bfloat16)")
		d, err := strconv.ParseFloat(strings.Replace(num, ".e", "e", 1), 64)
		require.NoError(t, err, s)
		if core.BF16FromFloat32(float32(d)) != v && !(f == 0 && d == 0) {
			t.Fatalf("bfloat16 %#04x: %s reads back as %v", b, s, core.BF16FromFloat32(float32(d)))
		}
		// one significant digit fewer no longer identifies v (unless v is 0 or one digit long,
		// or an integer written positionally: NumPy writes all of its digits)
		if !strings.Contains(num, "e") && float64(f) == math.Trunc(float64(f)) {
			require.Equal(t, strconv.FormatFloat(float64(f), 'f', 0, 64)+".", num)
			continue
		}
		mant := strings.TrimLeft(strings.SplitN(num, "e", 2)[0], "-")
		digits := strings.TrimLeft(strings.ReplaceAll(mant, ".", ""), "0")
		if n := len(strings.TrimRight(digits, "0")); n > 1 {
			short, _ := strconv.ParseFloat(strconv.FormatFloat(d, 'e', n-2, 64), 64)
			require.NotEqual(t, v, core.BF16FromFloat32(float32(short)), "bfloat16 %#04x: %s is not shortest", b, s)
		}
	}
}

func TestReprExact(t *testing.T) {
	buf := make([]float32, 6)
	cudaDesc := core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float32, Shape: []int64{2, 3}}
	cuda, err := core.Wrap(cudaDesc, nil)
	require.NoError(t, err)
	hostDesc := cudaDesc
	hostDesc.Device = core.DLDevice{DeviceType: core.CUDAHost, DeviceID: 1}
	pinned, err := core.Wrap(hostDesc, nil)
	require.NoError(t, err)
	roDesc := cudaDesc
	roDesc.Flags = core.FlagReadOnly
	cudaRO, err := core.Wrap(roDesc, nil)
	require.NoError(t, err)
	released := core.MustFromSlice([]float64{1, 2})
	released.Release()
	readOnly, err := core.MustFromSlice([]float64{1, 2}).AsReadOnly()
	require.NoError(t, err)
	broadcast, err := core.MustFromSlice([]int32{7, 8, 9}).BroadcastTo(2, 3)
	require.NoError(t, err)
	f8, err := core.New(core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}, 4)
	require.NoError(t, err)
	lanes, err := core.New(core.DLDataType{Code: core.CodeFloat, Bits: 32, Lanes: 4}, 2)
	require.NoError(t, err)
	bf := core.MustFromSlice([]core.BF16{core.BF16FromFloat32(0.1), core.BF16FromFloat32(3), core.BF16FromFloat32(-1e10)})
	c32, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&f16s(1.5, -2)[0]), Device: core.CPUDevice,
		DType: core.DLDataType{Code: core.CodeComplex, Bits: 32, Lanes: 1}, Shape: []int64{1}}, nil)
	require.NoError(t, err)

	for _, c := range []struct {
		name string
		x    *core.Tensor
		want string
	}{
		{"cuda", cuda, "<cuda:0 tensor, shape=(2, 3), dtype=float32>"},
		{"cuda read-only", cudaRO, "<cuda:0 tensor, shape=(2, 3), dtype=float32, readonly=True>"},
		{"pinned host", pinned, "array([[0., 0., 0.],\n       [0., 0., 0.]], dtype=float32, device='cuda_host:1')"},
		{"released", released, "<released tensor, shape=(2,), dtype=float64>"},
		{"read-only", readOnly, "array([1., 2.], readonly=True)"},
		{"broadcast", broadcast, "array([[7, 8, 9],\n       [7, 8, 9]], dtype=int32, readonly=True)"},
		{"float8", f8, "<cpu:0 tensor, shape=(4,), dtype=float8_e4m3fn>"},
		{"lanes", lanes, "<cpu:0 tensor, shape=(2,), dtype=float32x4>"},
		{"bfloat16", bf, "array([ 1.e-01,  3.e+00, -1.e+10], dtype=bfloat16)"},
		{"bfloat16 positional", core.MustFromSlice([]core.BF16{core.BF16FromFloat32(0.1), core.BF16FromFloat32(3)}),
			"array([0.1, 3. ], dtype=bfloat16)"},
		{"complex32", c32, "array([1.5-2.j], dtype=complex32)"},
		{"float16 scalar", core.Scalar(float16.Fromfloat32(0.1)), "array(0.1, dtype=float16)"},
		{"int 0-d", core.Scalar(int64(-3)), "array(-3)"},
		{"dtype on its own line", core.MustFromSlice(f32s(seq(13, func(i int) float64 { return float64(i) + 0.5 }))),
			"array([ 0.5,  1.5,  2.5,  3.5,  4.5,  5.5,  6.5,  7.5,  8.5,  9.5, 10.5,\n       11.5, 12.5], dtype=float32)"},
		{"dtype wrapped", core.MustFromSlice(f32s(seq(11, func(i int) float64 { return float64(i) + 0.5 }))),
			"array([ 0.5,  1.5,  2.5,  3.5,  4.5,  5.5,  6.5,  7.5,  8.5,  9.5, 10.5],\n      dtype=float32)"},
	} {
		assert.Equal(t, c.want, display.Repr(c.x), c.name)
	}
}

func TestRenderHugeViews(t *testing.T) {
	// broadcast views cost no memory, whatever their shape
	one := core.MustFromSlice([]float32{1})
	many, err := one.BroadcastTo(6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6)
	require.NoError(t, err)
	assert.Equal(t, "<cpu:0 tensor, shape=(6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6), dtype=float32, readonly=True>", display.Repr(many))
	html := display.HTML(many)
	assert.Contains(t, html, "<p>showing 4 of 101559956668416 2-D slices</p>")
	assert.Equal(t, 4, strings.Count(html, "<table"))

	wide, err := one.BroadcastTo(1<<20, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, "array([[1., 1., 1., ..., 1., 1., 1.],\n"+
		"       [1., 1., 1., ..., 1., 1., 1.],\n"+
		"       [1., 1., 1., ..., 1., 1., 1.],\n"+
		"       ...,\n"+
		"       [1., 1., 1., ..., 1., 1., 1.],\n"+
		"       [1., 1., 1., ..., 1., 1., 1.],\n"+
		"       [1., 1., 1., ..., 1., 1., 1.]], dtype=float32, readonly=True)", display.Repr(wide))
	_, err = display.Image(wide)
	assert.ErrorIs(t, err, display.ErrNotImage)
	assert.NotContains(t, wide.SimpleRender(), "image/png")
}

func TestReprReleasedDuringUse(t *testing.T) {
	buf := []float64{1, 2, 3}
	released := 0
	x, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.CPUDevice, DType: core.Float64,
		Shape: []int64{3}}, func() { released++ })
	require.NoError(t, err)
	v, err := x.View()
	require.NoError(t, err)
	x.Release()
	assert.Equal(t, "array([1., 2., 3.])", display.Repr(v), "a view keeps the memory")
	assert.Equal(t, "<released tensor, shape=(3,), dtype=float64>", display.Repr(x))
	v.Release()
	assert.Equal(t, 1, released)
	assert.Equal(t, "<released tensor, shape=(3,), dtype=float64>", display.Repr(v))
}

// wellFormed parses an HTML fragment as XML: it checks that tags nest and text is escaped.
func wellFormed(t *testing.T, s string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = true
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		require.NoError(t, err, s)
	}
}

func TestHTML(t *testing.T) {
	m := core.MustFromSlice([]float32{1, 2.5, -3, 4}, 2, 2)
	got := display.HTML(m)
	want := `<div class="dlpack-tensor"><div class="dlpack-caption" style="font-family:monospace">float32 · shape (2, 2) · cpu:0 · strides (2, 1) · C-contiguous</div>
<div class="dlpack-table" style="overflow-x:auto;width:0;min-width:100%">
<table style="font-family:monospace">
<thead><tr><th></th><th>0</th><th>1</th></tr></thead>
<tbody>
<tr><th>0</th><td>1.</td><td>2.5</td></tr>
<tr><th>1</th><td>-3.</td><td>4.</td></tr>
</tbody>
</table>
</div>
</div>`
	assert.Equal(t, want, got)
	wellFormed(t, got)

	vec := core.MustFromSlice([]bool{true, false})
	assert.Contains(t, display.HTML(vec), "<tr><th></th><td>True</td><td>False</td></tr>")
	assert.Contains(t, display.HTML(vec), "bool · shape (2,) · cpu:0 · strides (1,) · C- and F-contiguous")

	scalar := core.Scalar(complex(1, -2))
	assert.Contains(t, display.HTML(scalar), "<code>1.-2.j</code>")
	assert.Contains(t, display.HTML(scalar), "complex128 · shape () · cpu:0 · strides ()")

	empty := core.MustNew(core.Float32, 0, 3)
	assert.Contains(t, display.HTML(empty), "<code>[]</code>")

	tr, err := core.MustFromSlice([]int64{1, 2, 3, 4, 5, 6}, 2, 3).Transpose()
	require.NoError(t, err)
	ro, err := tr.AsReadOnly()
	require.NoError(t, err)
	assert.Contains(t, display.HTML(ro), "int64 · shape (3, 2) · cpu:0 · strides (1, 3) · F-contiguous · read-only")

	buf := make([]float32, 6)
	cuda, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.CUDA, DeviceID: 2},
		DType: core.Float32, Shape: []int64{2, 3}}, nil)
	require.NoError(t, err)
	assert.Contains(t, display.HTML(cuda), "<p>values on cuda:2 are not read</p>")
	assert.NotContains(t, display.HTML(cuda), "<table")
	wellFormed(t, display.HTML(cuda))
}

func TestHTMLElision(t *testing.T) {
	big := core.MustFromSlice(seq(30*25, func(i int) float64 { return float64(i) }), 30, 25)
	got := display.HTML(big)
	wellFormed(t, got)
	assert.Equal(t, 1+20+1, strings.Count(got, "<tr>"), "header, 20 rows and an elided row")
	header := got[strings.Index(got, "<thead>"):strings.Index(got, "</thead>")]
	assert.Equal(t, 1+20+1, strings.Count(header, "<th>"), "corner, 20 columns and an elision")
	assert.Contains(t, header, "<th>9</th><th>…</th><th>15</th>")
	assert.Contains(t, got, "<tr><th>9</th>")
	assert.Contains(t, got, "<tr><th>…</th><td>…</td>")
	assert.Contains(t, got, "<tr><th>20</th>")
	assert.NotContains(t, got, "<tr><th>10</th>")
	assert.Contains(t, got, "<td>749.</td></tr>", "last element")
	assert.Contains(t, got, "<td>9.</td><td>…</td><td>15.</td>")
	assert.Contains(t, got, "<img ", "a 30×25 matrix is shown as a picture too")

	cube := core.MustFromSlice(seq(3*2*2*2, func(i int) float64 { return float64(i) }), 3, 2, 2, 2)
	got = display.HTML(cube)
	wellFormed(t, got)
	assert.Contains(t, got, "<p>showing 4 of 6 2-D slices</p>")
	assert.Contains(t, got, "<p><code>[0, 0, :, :]</code></p>")
	assert.Contains(t, got, "<p><code>[1, 1, :, :]</code></p>")
	assert.NotContains(t, got, "<code>[2, 0, :, :]</code>")
	assert.Equal(t, 4, strings.Count(got, "<table"))
	// slice [1, 0] holds 8..11; all slices share one format
	assert.Contains(t, got, "<tr><th>0</th><td>8.</td><td>9.</td></tr>")
}

func TestImageGray(t *testing.T) {
	x := core.MustFromSlice([]float64{-1, 0, 1, math.NaN(), math.Inf(1), math.Inf(-1)}, 2, 3)
	img, err := display.Image(x)
	require.NoError(t, err)
	g, ok := img.(*image.Gray)
	require.True(t, ok)
	assert.Equal(t, image.Rect(0, 0, 3, 2), g.Bounds())
	assert.Equal(t, []uint8{0, 128, 255, 0, 255, 0}, []uint8{g.GrayAt(0, 0).Y, g.GrayAt(1, 0).Y, g.GrayAt(2, 0).Y,
		g.GrayAt(0, 1).Y, g.GrayAt(1, 1).Y, g.GrayAt(2, 1).Y})

	// strided: the transpose's row y is the original's column y
	tr, err := core.MustFromSlice([]int16{0, 10, 20, 30, 40, 50}, 2, 3).Transpose()
	require.NoError(t, err)
	img, err = display.Image(tr)
	require.NoError(t, err)
	assert.Equal(t, image.Rect(0, 0, 2, 3), img.Bounds())
	assert.Equal(t, color.Gray{Y: 153}, img.At(1, 0), "30 of 0..50")
	assert.Equal(t, color.Gray{Y: 51}, img.At(0, 1), "10 of 0..50")

	bools, err := core.MustFromSlice([]bool{true, false, true, true}, 2, 1, 2).Reshape(2, 2)
	require.NoError(t, err)
	img, err = display.Image(bools)
	require.NoError(t, err)
	assert.Equal(t, color.Gray{Y: 255}, img.At(0, 0))
	assert.Equal(t, color.Gray{Y: 0}, img.At(1, 0))

	// values across ±MaxFloat64 (hi - lo overflows) and within a few subnormals
	wide, err := display.Image(core.MustFromSlice([]float64{-math.MaxFloat64, 0, math.MaxFloat64}, 1, 3))
	require.NoError(t, err)
	assert.Equal(t, []color.Color{color.Gray{Y: 0}, color.Gray{Y: 128}, color.Gray{Y: 255}},
		[]color.Color{wide.At(0, 0), wide.At(1, 0), wide.At(2, 0)})
	tiny, err := display.Image(core.MustFromSlice([]float64{0, 5e-324, 1e-323}, 1, 3))
	require.NoError(t, err)
	assert.Equal(t, []color.Color{color.Gray{Y: 0}, color.Gray{Y: 128}, color.Gray{Y: 255}},
		[]color.Color{tiny.At(0, 0), tiny.At(1, 0), tiny.At(2, 0)})

	constant, err := display.Image(core.MustFromSlice([]float32{7, 7}, 1, 2, 1))
	require.NoError(t, err)
	assert.Equal(t, color.Gray{Y: 0}, constant.At(1, 0))
}

func TestImageColor(t *testing.T) {
	rgb := core.MustFromSlice([]uint8{255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30}, 2, 2, 3)
	img, err := display.Image(rgb)
	require.NoError(t, err)
	assert.Equal(t, color.NRGBA{255, 0, 0, 255}, img.At(0, 0))
	assert.Equal(t, color.NRGBA{0, 255, 0, 255}, img.At(1, 0))
	assert.Equal(t, color.NRGBA{10, 20, 30, 255}, img.At(1, 1))

	rgba := core.MustFromSlice([]float32{0, 0.5, 1, 0.25, 2, -1, float32(math.NaN()), 1}, 1, 2, 4)
	img, err = display.Image(rgba)
	require.NoError(t, err)
	assert.Equal(t, color.NRGBA{0, 128, 255, 64}, img.At(0, 0))
	assert.Equal(t, color.NRGBA{255, 0, 0, 255}, img.At(1, 0), "clipped, NaN is 0")

	// channels last but strided (a reversed width)
	rev, err := rgb.Reverse(1)
	require.NoError(t, err)
	img, err = display.Image(rev)
	require.NoError(t, err)
	assert.Equal(t, color.NRGBA{0, 255, 0, 255}, img.At(0, 0))
}

func TestImageErrors(t *testing.T) {
	buf := make([]float32, 4)
	cuda, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float32, Shape: []int64{2, 2}}, nil)
	require.NoError(t, err)
	released := core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2)
	released.Release()
	f8, err := core.New(core.DLDataType{Code: core.CodeFloat8E5M2, Bits: 8, Lanes: 1}, 2, 2)
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		x    *core.Tensor
		want error
	}{
		{"1-D", core.MustFromSlice([]float32{1, 2}), display.ErrNotImage},
		{"4-D", core.MustNew(core.Float32, 1, 1, 1, 1), display.ErrNotImage},
		{"5 channels", core.MustNew(core.Uint8, 2, 2, 5), display.ErrNotImage},
		{"int16 color", core.MustNew(core.Int16, 2, 2, 3), display.ErrNotImage},
		{"complex", core.MustNew(core.Complex64, 2, 2), display.ErrNotImage},
		{"empty", core.MustNew(core.Float32, 0, 2), display.ErrNotImage},
		{"float8", f8, display.ErrNotImage},
		{"device", cuda, core.ErrNotHost},
		{"released", released, core.ErrReleased},
	} {
		img, err := display.Image(c.x)
		assert.ErrorIs(t, err, c.want, c.name)
		assert.Nil(t, img, c.name)
	}
}

func TestSimpleRender(t *testing.T) {
	pic := core.MustFromSlice(seq(8*10, func(i int) float64 { return float64(i % 10) }), 8, 10)
	m := pic.SimpleRender()
	assert.Equal(t, display.MIME(pic), m, "core's SimpleRender delegates to display once it is imported")
	assert.Equal(t, display.Repr(pic), m["text/plain"])
	assert.Equal(t, display.HTML(pic), m["text/html"])
	raw, ok := m["image/png"].([]byte)
	require.True(t, ok, "image/png is []byte, as gophernotes' own image renderer sends it")
	decoded, err := png.Decode(bytes.NewReader(raw))
	require.NoError(t, err)
	want, err := display.Image(pic)
	require.NoError(t, err)
	require.Equal(t, want.Bounds(), decoded.Bounds())
	for y := 0; y < 8; y++ {
		for x := 0; x < 10; x++ {
			r1, _, _, _ := want.At(x, y).RGBA()
			r2, _, _, _ := decoded.At(x, y).RGBA()
			require.Equal(t, r1, r2)
		}
	}
	assert.Contains(t, m["text/html"], `<img alt="10×8 image" width="250" height="200" style="image-rendering:pixelated" src="data:image/png;base64,`)
	wellFormed(t, m["text/html"].(string))

	// what the kernel sends: JSON, where the PNG becomes base64 text
	js, err := json.Marshal(m)
	require.NoError(t, err)
	var back map[string]string
	require.NoError(t, json.Unmarshal(js, &back))
	assert.True(t, strings.HasPrefix(back["image/png"], "iVBORw0KGgo"), "base64 of the PNG signature")

	small := core.MustFromSlice([]float64{1, 2, 3, 4}, 2, 2).SimpleRender()
	assert.NotContains(t, small, "image/png", "a 2×2 matrix reads better as numbers")
	assert.NotContains(t, small["text/html"], "<img")
	assert.Len(t, core.MustFromSlice([]uint8{1, 2, 3}, 1, 1, 3).SimpleRender(), 3, "a color pixel is a picture")
	assert.Len(t, core.MustNew(core.Float32, 3000, 8).SimpleRender(), 2, "too tall for a picture")
}

func ExampleRepr() {
	m := core.MustFromSlice([]float32{1, 2, 3, 4.5}, 2, 2)
	fmt.Println(display.Repr(m))
	col, _ := m.Index(1, 1)
	fmt.Println(display.Repr(col))
	fmt.Println(display.Repr(core.Scalar(true)))
	fmt.Println(display.Repr(core.MustNew(core.Int32, 0, 3)))
	// Output:
	// array([[1. , 2. ],
	//        [3. , 4.5]], dtype=float32)
	// array([2. , 4.5], dtype=float32)
	// array(True)
	// array([], shape=(0, 3), dtype=int32)
}

func ExampleRepr_summarised() {
	data := make([]int64, 2000)
	for i := range data {
		data[i] = int64(i)
	}
	fmt.Println(display.Repr(core.MustFromSlice(data, 2, 1000)))
	// Output:
	// array([[   0,    1,    2, ...,  997,  998,  999],
	//        [1000, 1001, 1002, ..., 1997, 1998, 1999]])
}

func ExampleImage() {
	x := core.MustFromSlice([]float64{0, 1, 2, 3}, 2, 2)
	img, _ := display.Image(x)
	fmt.Println(img.Bounds(), img.At(1, 0), img.At(1, 1))
	// Output:
	// (0,0)-(2,2) {85} {255}
}

func BenchmarkRender(b *testing.B) {
	small := core.MustFromSlice(f32s(seq(30*30, func(i int) float64 { return math.Sin(float64(i)) })), 30, 30)
	big := core.MustFromSlice(f32s(seq(1000*1000, func(i int) float64 { return math.Sin(float64(i)) })), 1000, 1000)
	for _, c := range []struct {
		name string
		x    *core.Tensor
	}{{"30x30", small}, {"1000x1000", big}} {
		b.Run("Repr/"+c.name, func(b *testing.B) {
			for b.Loop() {
				_ = display.Repr(c.x)
			}
		})
		b.Run("HTML/"+c.name, func(b *testing.B) {
			for b.Loop() {
				_ = display.HTML(c.x)
			}
		})
		b.Run("SimpleRender/"+c.name, func(b *testing.B) {
			for b.Loop() {
				_ = c.x.SimpleRender()
			}
		})
	}
}
