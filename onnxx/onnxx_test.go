package onnxx_test

import (
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
	ort "github.com/yalue/onnxruntime_go"
)

var dtypeNames = map[string]core.DLDataType{
	"float32": core.Float32, "float64": core.Float64, "float16": core.Float16, "bfloat16": core.BFloat16,
	"int8": core.Int8, "int16": core.Int16, "int32": core.Int32, "int64": core.Int64,
	"uint8": core.Uint8, "uint16": core.Uint16, "uint32": core.Uint32, "uint64": core.Uint64,
	"bool": core.Bool,
}

// load reads a raw element file that models.py wrote into a new core tensor.
func load(t *testing.T, f tensorFile) *core.Tensor {
	t.Helper()
	dt, ok := dtypeNames[f.DType]
	require.True(t, ok, f.DType)
	x, err := core.New(dt, f.Shape...)
	require.NoError(t, err)
	raw, err := os.ReadFile(f.File)
	require.NoError(t, err)
	b, err := x.Bytes()
	require.NoError(t, err)
	require.Equal(t, len(b), len(raw), f.File)
	copy(b, raw)
	return x
}

// floats reads any float tensor's elements as float64s.
func floats(t *testing.T, x *core.Tensor) []float64 {
	t.Helper()
	out := make([]float64, 0, x.Len())
	switch x.DType() {
	case core.Float32:
		d, err := core.ReadOnlyData[float32](x)
		require.NoError(t, err)
		for _, v := range d {
			out = append(out, float64(v))
		}
	case core.Float64:
		d, err := core.ReadOnlyData[float64](x)
		require.NoError(t, err)
		out = append(out, d...)
	case core.Float16:
		d, err := core.ReadOnlyData[float16.Float16](x)
		require.NoError(t, err)
		for _, v := range d {
			out = append(out, float64(v.Float32()))
		}
	default:
		t.Fatalf("no float view of %s", x.DType())
	}
	return out
}

// equal asserts got holds want's elements (exactly, or within tol for floats).
func equal(t *testing.T, want, got *core.Tensor, tol float64) {
	t.Helper()
	require.Equal(t, want.DType(), got.DType())
	require.Equal(t, want.Shape(), got.Shape())
	if tol == 0 {
		wb, err := want.ReadOnlyBytes()
		require.NoError(t, err)
		gb, err := got.ReadOnlyBytes()
		require.NoError(t, err)
		require.Equal(t, wb, gb)
		return
	}
	w, g := floats(t, want), floats(t, got)
	for i := range w {
		require.InDelta(t, w[i], g[i], tol*math.Max(1, math.Abs(w[i])), "element %d", i)
	}
}

// TestModels runs every case models.py wrote (element-wise ops for every dtype, MatMul, dynamic
// axes with several batch sizes through one session, several inputs and outputs) and compares
// with NumPy's results.
func TestModels(t *testing.T) {
	cases, err := manifest()
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	sessions := map[string]*onnxx.Session{}
	defer func() {
		for _, s := range sessions {
			s.Destroy()
		}
	}()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			s := sessions[c.Model]
			if s == nil {
				s, err = onnxx.NewSession(c.Model, nil, nil, nil)
				require.NoError(t, err)
				sessions[c.Model] = s
			}
			in := map[string]*core.Tensor{}
			for _, f := range c.Inputs {
				in[f.Name] = load(t, f)
			}
			var dst map[string]*core.Tensor
			if strings.HasPrefix(c.Name, "dynamic_float16") {
				// float16 outputs of a dynamic shape: onnxruntime_go cannot allocate them, so the
				// first run at each shape gives destinations, and a second run finds the shape known.
				_, err := s.Run(in)
				require.ErrorIs(t, err, onnxx.ErrModel)
				dst = map[string]*core.Tensor{}
				for _, f := range c.Outputs {
					dst[f.Name] = core.MustNew(dtypeNames[f.DType], f.Shape...)
				}
				out, err := s.RunWith(in, dst)
				require.NoError(t, err)
				for _, f := range c.Outputs {
					assert.Same(t, dst[f.Name], out[f.Name])
					equal(t, load(t, f), out[f.Name], c.Tol)
				}
			}
			out, err := s.Run(in)
			require.NoError(t, err)
			require.Len(t, out, len(c.Outputs))
			for _, f := range c.Outputs {
				require.Contains(t, out, f.Name)
				equal(t, load(t, f), out[f.Name], c.Tol)
			}
		})
	}
}

// dataOf returns the address of an ORT value's elements.
func dataOf(t *testing.T, v ort.Value) unsafe.Pointer {
	t.Helper()
	switch x := v.(type) {
	case *ort.Tensor[float32]:
		return unsafe.Pointer(unsafe.SliceData(x.GetData()))
	case *ort.Tensor[int64]:
		return unsafe.Pointer(unsafe.SliceData(x.GetData()))
	case *ort.Tensor[bool]:
		return unsafe.Pointer(unsafe.SliceData(x.GetData()))
	case *ort.Tensor[uint8]:
		return unsafe.Pointer(unsafe.SliceData(x.GetData()))
	case *ort.CustomDataTensor:
		return unsafe.Pointer(unsafe.SliceData(x.GetData()))
	}
	t.Fatalf("unexpected value %T", v)
	return nil
}

// TestToValueZeroCopy proves inputs share memory: the value's data is the tensor's address, and
// a write to the tensor between two runs of one AdvancedSession changes the result.
func TestToValueZeroCopy(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    *core.Tensor
	}{
		{"float32", core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)},
		{"int64", core.MustFromSlice([]int64{1, 2, 3}, 3)},
		{"bool", core.MustFromSlice([]bool{true, false}, 2)},
		{"uint8", core.MustFromSlice([]uint8{1, 2, 3, 4}, 2, 2)},
		{"float16", core.MustFromSlice([]float16.Float16{float16.Fromfloat32(1), float16.Fromfloat32(2)}, 2)},
		{"bfloat16", core.MustFromSlice([]core.BF16{core.BF16FromFloat32(1), core.BF16FromFloat32(2)}, 1, 2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var copied bool
			v, err := onnxx.ToValue(tc.t, adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied))
			require.NoError(t, err)
			defer v.Destroy()
			assert.False(t, copied)
			assert.Equal(t, tc.t.Data(), dataOf(t, v))
			assert.Equal(t, ort.Shape(tc.t.Shape()), v.GetShape())
			wantType, err := onnxx.ONNXType(tc.t.DType())
			require.NoError(t, err)
			assert.Equal(t, wantType, ort.TensorElementDataType(v.DataType()))
		})
	}
}

func TestInputMutationBetweenRuns(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2, 3}, 1, 3)
	xv, err := onnxx.ToValue(x, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer xv.Destroy()
	y, err := core.New(core.Float32, 1, 3)
	require.NoError(t, err)
	yv, err := onnxx.ToValue(y, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer yv.Destroy()
	sv, err := core.New(core.Float32, 1)
	require.NoError(t, err)
	svv, err := onnxx.ToValue(sv, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer svv.Destroy()
	s, err := ort.NewAdvancedSession(model("dynamic_float32"), []string{"X"}, []string{"Y", "S"},
		[]ort.Value{xv}, []ort.Value{yv, svv}, nil)
	require.NoError(t, err)
	defer s.Destroy()

	require.NoError(t, s.Run())
	got, err := core.ReadOnlyData[float32](y) // ORT wrote into y's own memory
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 5, 7}, got)
	require.NoError(t, core.Set[float32](x, 10, 0, 1)) // write through the core tensor
	require.NoError(t, s.Run())
	assert.Equal(t, []float32{3, 21, 7}, got)
	s0, err := core.At[float32](sv, 0)
	require.NoError(t, err)
	assert.Equal(t, float32(14), s0)
}

// TestToValueCopies covers layouts ORT cannot read in place: they are copied into C order (or
// refused under ZeroCopyOnly), and AlwaysCopy copies even C order.
func TestToValueCopies(t *testing.T) {
	base := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	tr, err := base.Transpose()
	require.NoError(t, err)
	rev, err := base.Reverse(1)
	require.NoError(t, err)
	step, err := base.Slice(1, core.Begin, core.End, 2)
	require.NoError(t, err)
	bc, err := core.MustFromSlice([]float32{7, 8, 9}, 1, 3).BroadcastTo(2, 3)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		t    *core.Tensor
		want []float32
	}{
		{"transpose", tr, []float32{1, 4, 2, 5, 3, 6}},
		{"reversed", rev, []float32{3, 2, 1, 6, 5, 4}},
		{"step", step, []float32{1, 3, 4, 6}},
		{"broadcast", bc, []float32{7, 8, 9, 7, 8, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := onnxx.ToValue(tc.t, adapters.ZeroCopyOnly())
			require.ErrorIs(t, err, adapters.ErrCopyRequired)
			var copied bool
			v, err := onnxx.ToValue(tc.t, adapters.ReportCopy(&copied))
			require.NoError(t, err)
			defer v.Destroy()
			assert.True(t, copied)
			assert.Equal(t, tc.want, v.(*ort.Tensor[float32]).GetData())
			assert.Equal(t, ort.Shape(tc.t.Shape()), v.GetShape())
		})
	}
	v, err := onnxx.ToValue(base, adapters.AlwaysCopy())
	require.NoError(t, err)
	defer v.Destroy()
	assert.NotEqual(t, base.Data(), dataOf(t, v))
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, v.(*ort.Tensor[float32]).GetData())
}

// TestReadOnlyInput: ORT never writes inputs, so read-only tensors are shared.
func TestReadOnlyInput(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2, 3}, 1, 3)
	ro, err := x.AsReadOnly()
	require.NoError(t, err)
	v, err := onnxx.ToValue(ro, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer v.Destroy()
	assert.Equal(t, x.Data(), dataOf(t, v))
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	out, err := s.Run(map[string]*core.Tensor{"X": ro})
	require.NoError(t, err)
	got, err := core.ReadOnlyData[float32](out["Y"])
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 5, 7}, got)
}

func TestToValueErrors(t *testing.T) {
	released := core.MustFromSlice([]float32{1})
	released.Release()
	devMem := make([]float32, 4) // stands in for device memory: never touched
	dev, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&devMem[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float32, Shape: []int64{4}}, nil)
	require.NoError(t, err)
	f8, err := core.New(core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}, 3)
	require.NoError(t, err)
	vec, err := core.New(core.DLDataType{Code: core.CodeFloat, Bits: 32, Lanes: 4}, 3)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		t    *core.Tensor
		err  error
	}{
		{"nil", nil, core.ErrNil},
		{"released", released, core.ErrReleased},
		{"device", dev, onnxx.ErrDevice},
		{"float8", f8, onnxx.ErrDType},
		{"lanes", vec, onnxx.ErrDType},
		{"0-d float16", core.Scalar(float16.Fromfloat32(1)), onnxx.ErrDType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := onnxx.ToValue(tc.t)
			require.ErrorIs(t, err, tc.err)
			assert.Nil(t, v)
			assert.Contains(t, err.Error(), "onnxx")
		})
	}
	assert.ErrorIs(t, onnxx.ErrDevice, adapters.ErrUnsupported)
	assert.ErrorIs(t, onnxx.ErrDType, adapters.ErrUnsupported)
	// a 0-d float32 is copied (onnxruntime_go has no 0-d value over foreign memory)
	_, err = onnxx.ToValue(core.Scalar(float32(1)), adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
}

// settle lets earlier tests' unreachable tensors go, so that LiveForeign counts this test's.
func settle() {
	for range 3 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}

// TestForeignMemory feeds ORT memory Go did not allocate (an anonymous mmap): zero-copy, kept
// alive by the value after the tensor is released, and unmapped exactly once after both are gone.
func TestForeignMemory(t *testing.T) {
	settle()
	before := core.LiveForeign()
	mem, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	f := unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), 3)
	copy(f, []float32{1, 2, 3})
	var unmapped int
	var mu sync.Mutex
	x, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&mem[0]), Device: core.CPUDevice, DType: core.Float32,
		Shape: []int64{1, 3}}, func() {
		mu.Lock()
		unmapped++
		mu.Unlock()
		require.NoError(t, syscall.Munmap(mem))
	})
	require.NoError(t, err)
	runForeign(t, x, unsafe.Pointer(&mem[0]), before)
	assert.Eventually(t, func() bool {
		runtime.GC()
		mu.Lock()
		defer mu.Unlock()
		return unmapped == 1
	}, 5*time.Second, 10*time.Millisecond, "foreign memory still held")
	time.Sleep(20 * time.Millisecond)
	runtime.GC()
	mu.Lock()
	assert.Equal(t, 1, unmapped, "released exactly once")
	mu.Unlock()
}

// runForeign makes an ORT value of x, releases x, and runs a model on the value.
func runForeign(t *testing.T, x *core.Tensor, mem unsafe.Pointer, before int64) {
	v, err := onnxx.ToValue(x, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer v.Destroy()
	assert.Equal(t, mem, dataOf(t, v))
	x.Release() // the value still holds the memory
	assert.Equal(t, before+1, core.LiveForeign())

	s, err := ort.NewDynamicAdvancedSession(model("dynamic_float32"), []string{"X"}, []string{"Y"}, nil)
	require.NoError(t, err)
	defer s.Destroy()
	y := core.MustNew(core.Float32, 1, 3)
	yv, err := onnxx.ToValue(y)
	require.NoError(t, err)
	defer yv.Destroy()
	require.NoError(t, s.Run([]ort.Value{v}, []ort.Value{yv}))
	got, err := core.Data[float32](y)
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 5, 7}, got)
}

// TestFromValue converts values of every type onnxruntime_go makes, without copying, and
// destroys each exactly once when its tensor goes.
func TestFromValue(t *testing.T) {
	settle()
	before := core.LiveForeign()
	f32, err := ort.NewTensor(ort.NewShape(2, 2), []float32{1, 2, 3, 4})
	require.NoError(t, err)
	i8, err := ort.NewTensor(ort.NewShape(3), []int8{-1, 0, 1})
	require.NoError(t, err)
	b, err := ort.NewTensor(ort.NewShape(2), []bool{true, false})
	require.NoError(t, err)
	h := []float16.Float16{float16.Fromfloat32(0.5), float16.Fromfloat32(-2)}
	hb := unsafe.Slice((*byte)(unsafe.Pointer(&h[0])), 4)
	f16, err := ort.NewCustomDataTensor(ort.NewShape(1, 2), hb, ort.TensorElementDataTypeFloat16)
	require.NoError(t, err)
	bf := []core.BF16{core.BF16FromFloat32(1.5)}
	bf16, err := ort.NewCustomDataTensor(ort.NewShape(1), unsafe.Slice((*byte)(unsafe.Pointer(&bf[0])), 2), ort.TensorElementDataTypeBFloat16)
	require.NoError(t, err)
	sc, err := ort.NewScalar(int32(42))
	require.NoError(t, err)

	ft, err := onnxx.FromValue(f32)
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 2}, ft.Shape())
	assert.Equal(t, unsafe.Pointer(&f32.GetData()[0]), ft.Data())
	v, err := core.At[float32](ft, 1, 0)
	require.NoError(t, err)
	assert.Equal(t, float32(3), v)

	it, err := onnxx.FromValue(i8)
	require.NoError(t, err)
	assert.Equal(t, core.Int8, it.DType())
	bt, err := onnxx.FromValue(b)
	require.NoError(t, err)
	bs, err := core.Data[bool](bt)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false}, bs)

	ht, err := onnxx.FromValue(f16)
	require.NoError(t, err)
	assert.Equal(t, core.Float16, ht.DType())
	assert.Equal(t, []int64{1, 2}, ht.Shape())
	assert.Equal(t, unsafe.Pointer(&h[0]), ht.Data())
	hv, err := core.At[float16.Float16](ht, 0, 1)
	require.NoError(t, err)
	assert.Equal(t, float32(-2), hv.Float32())

	bft, err := onnxx.FromValue(bf16)
	require.NoError(t, err)
	assert.Equal(t, core.BFloat16, bft.DType())
	bv, err := core.At[core.BF16](bft, 0)
	require.NoError(t, err)
	assert.Equal(t, float32(1.5), bv.Float32())

	st, err := onnxx.FromValue(sc)
	require.NoError(t, err)
	assert.Equal(t, 0, st.Ndim())
	sv, err := core.At[int32](st)
	require.NoError(t, err)
	assert.Equal(t, int32(42), sv)

	// Each tensor owns its value: the value lives while a tensor over it (a view too) is held,
	// and is destroyed exactly once, by the last Release.
	for _, x := range []*core.Tensor{ft, it, bt, ht, bft} {
		assert.True(t, x.Foreign(), "the tensor owns the ORT value")
	}
	assert.Equal(t, before+5, core.LiveForeign())
	view, err := ft.Transpose()
	require.NoError(t, err)
	ft.Release()
	assert.Equal(t, ort.Shape{2, 2}, f32.GetShape(), "a view still holds the value")
	v, err = core.At[float32](view, 0, 1)
	require.NoError(t, err)
	assert.Equal(t, float32(3), v)
	view.Release()
	assert.Empty(t, f32.GetShape(), "the last Release destroyed the value")
	view.Release() // releasing again does nothing
	for _, x := range []*core.Tensor{it, bt, ht, bft} {
		x.Release()
	}
	assert.Empty(t, i8.GetShape())
	assert.Empty(t, b.GetShape())
	assert.Empty(t, f16.GetShape())
	assert.Empty(t, bf16.GetShape())
	assert.Equal(t, before, core.LiveForeign())
	runtime.KeepAlive(h)
	runtime.KeepAlive(bf)

	// a value that onnxruntime_go cannot describe is refused and left to its owner
	str, err := ort.NewStringTensor(ort.NewShape(1))
	require.NoError(t, err)
	defer str.Destroy()
	_, err = onnxx.FromValue(str)
	require.ErrorIs(t, err, onnxx.ErrValue)
	_, err = onnxx.FromValue(nil)
	require.ErrorIs(t, err, onnxx.ErrValue)
	// a custom-data tensor of a type that also has a Go form converts by its ONNX type
	u8, err := ort.NewCustomDataTensor(ort.NewShape(2), []byte{7, 9}, ort.TensorElementDataTypeUint8)
	require.NoError(t, err)
	ut, err := onnxx.FromValue(u8)
	require.NoError(t, err)
	defer ut.Release()
	assert.Equal(t, core.Uint8, ut.DType())
	uv, err := core.At[uint8](ut, 1)
	require.NoError(t, err)
	assert.Equal(t, uint8(9), uv)
}

// TestRoundTrip: ToValue then FromValue gives a tensor over the same memory.
func TestRoundTrip(t *testing.T) {
	x := core.MustFromSlice([]float16.Float16{1, 2, 3, 4, 5, 6}, 3, 2)
	v, err := onnxx.ToValue(x)
	require.NoError(t, err)
	y, err := onnxx.FromValue(v)
	require.NoError(t, err)
	defer y.Release()
	assert.Equal(t, x.Data(), y.Data())
	assert.Equal(t, x.Shape(), y.Shape())
	assert.Equal(t, x.DType(), y.DType())
}

// TestSessionOutputsInPlace: outputs of a declared shape are Go memory ORT wrote into; RunWith
// writes into the caller's tensors.
func TestSessionOutputsInPlace(t *testing.T) {
	s, err := onnxx.NewSession(model("matmul_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	a := core.MustNew(core.Float32, 8, 16)
	b := core.MustNew(core.Float32, 16, 4)
	ad, _ := core.Data[float32](a)
	bd, _ := core.Data[float32](b)
	for i := range ad {
		ad[i] = 1
	}
	for i := range bd {
		bd[i] = float32(i % 4)
	}
	out, err := s.Run(map[string]*core.Tensor{"A": a, "B": b})
	require.NoError(t, err)
	c := out["C"]
	v, err := core.At[float32](c, 7, 3)
	require.NoError(t, err)
	assert.Equal(t, float32(48), v)

	dst := core.MustNew(core.Float32, 8, 4)
	out, err = s.RunWith(map[string]*core.Tensor{"A": a, "B": b}, map[string]*core.Tensor{"C": dst})
	require.NoError(t, err)
	assert.Same(t, dst, out["C"])
	v, err = core.At[float32](dst, 0, 2)
	require.NoError(t, err)
	assert.Equal(t, float32(32), v)

	wrong := core.MustNew(core.Float32, 4, 8)
	_, err = s.RunWith(map[string]*core.Tensor{"A": a, "B": b}, map[string]*core.Tensor{"C": wrong})
	require.ErrorIs(t, err, onnxx.ErrModel)
	tr, _ := core.MustNew(core.Float32, 4, 8).Transpose()
	_, err = s.RunWith(map[string]*core.Tensor{"A": a, "B": b}, map[string]*core.Tensor{"C": tr})
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	ro, _ := dst.AsReadOnly()
	_, err = s.RunWith(map[string]*core.Tensor{"A": a, "B": b}, map[string]*core.Tensor{"C": ro})
	require.ErrorIs(t, err, core.ErrReadOnly)
}

// TestSessionErrors: inputs and outputs that do not match the model are refused clearly.
func TestSessionErrors(t *testing.T) {
	s, err := onnxx.NewSession(model("matmul_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	a, b := core.MustNew(core.Float32, 8, 16), core.MustNew(core.Float32, 16, 4)
	for _, tc := range []struct {
		name string
		in   map[string]*core.Tensor
	}{
		{"missing", map[string]*core.Tensor{"A": a}},
		{"extra", map[string]*core.Tensor{"A": a, "B": b, "Q": b}},
		{"dtype", map[string]*core.Tensor{"A": a, "B": core.MustNew(core.Float64, 16, 4)}},
		{"shape", map[string]*core.Tensor{"A": a, "B": core.MustNew(core.Float32, 4, 16)}},
		{"rank", map[string]*core.Tensor{"A": a, "B": core.MustNew(core.Float32, 64)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Run(tc.in)
			require.ErrorIs(t, err, onnxx.ErrModel)
		})
	}
	_, err = s.RunWith(map[string]*core.Tensor{"A": a, "B": b}, map[string]*core.Tensor{"nope": a})
	require.ErrorIs(t, err, onnxx.ErrModel)
	_, err = onnxx.NewSession(model("matmul_float32"), []string{"Z"}, nil, nil)
	require.ErrorIs(t, err, onnxx.ErrModel)
	_, err = onnxx.NewSession(model("matmul_float32"), nil, []string{"Z"}, nil)
	require.ErrorIs(t, err, onnxx.ErrModel)
	_, err = onnxx.NewSession(model("no_such_model"), nil, nil, nil)
	require.Error(t, err)
}

// TestRunScalar runs a model with 0-d input and output.
func TestRunScalar(t *testing.T) {
	out, err := onnxx.Run(model("scalar"), map[string]*core.Tensor{"X": core.Scalar(float32(41))}, nil)
	require.NoError(t, err)
	y := out["Y"]
	require.Equal(t, 0, y.Ndim())
	v, err := core.At[float32](y)
	require.NoError(t, err)
	assert.Equal(t, float32(42), v)
}

// TestEmptyTensors: tensors with a 0 in their shape become ORT values and come back.
func TestEmptyTensors(t *testing.T) {
	for _, dt := range []core.DLDataType{core.Float32, core.Float16, core.BFloat16, core.Bool} {
		x := core.MustNew(dt, 0, 3)
		v, err := onnxx.ToValue(x, adapters.ZeroCopyOnly())
		require.NoError(t, err, dt)
		assert.Equal(t, ort.Shape{0, 3}, v.GetShape())
		y, err := onnxx.FromValue(v)
		require.NoError(t, err)
		assert.Equal(t, []int64{0, 3}, y.Shape())
		assert.Equal(t, dt, y.DType())
		y.Release()
	}
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	out, err := s.Run(map[string]*core.Tensor{"X": core.MustNew(core.Float32, 0, 3)})
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 3}, out["Y"].Shape())
	assert.Equal(t, []int64{0}, out["S"].Shape())
}

// TestRunWithScalarDestination: a 0-d destination receives the 0-d output.
func TestRunWithScalarDestination(t *testing.T) {
	s, err := onnxx.NewSession(model("scalar"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	dst := core.MustNew(core.Float32)
	out, err := s.RunWith(map[string]*core.Tensor{"X": core.Scalar(float32(1.5))}, map[string]*core.Tensor{"Y": dst})
	require.NoError(t, err)
	assert.Same(t, dst, out["Y"])
	v, err := core.At[float32](dst)
	require.NoError(t, err)
	assert.Equal(t, float32(2.5), v)
}

// TestDynamicShapeCache: with dynamic axes the first run lets ORT allocate, and later runs with
// the same input shapes write straight into tensors allocated in Go memory.
func TestDynamicShapeCache(t *testing.T) {
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	in := map[string]*core.Tensor{"X": core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)}
	first, err := s.Run(in)
	require.NoError(t, err)
	second, err := s.Run(in)
	require.NoError(t, err)
	for _, out := range []map[string]*core.Tensor{first, second} {
		y, err := core.ReadOnlyData[float32](out["Y"])
		require.NoError(t, err)
		assert.Equal(t, []float32{3, 5, 7, 9, 11, 13}, y)
		sum, err := core.ReadOnlyData[float32](out["S"])
		require.NoError(t, err)
		assert.Equal(t, []float32{6, 15}, sum)
	}
}

// TestConcurrentRuns shares one Session between goroutines (run with -race).
func TestConcurrentRuns(t *testing.T) {
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				n := int64(1 + (g+i)%4)
				x := core.MustNew(core.Float32, n, 3)
				out, err := s.Run(map[string]*core.Tensor{"X": x})
				if err != nil {
					errs <- err
					return
				}
				y, _ := core.ReadOnlyData[float32](out["Y"])
				for _, v := range y {
					if v != 1 {
						errs <- assert.AnError
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestInit(t *testing.T) {
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, onnxx.Init())
		}()
	}
	wg.Wait()
	p, err := onnxx.LibraryPath()
	require.NoError(t, err)
	assert.FileExists(t, p)

	t.Setenv("ONNXRUNTIME_LIB", "/nonexistent/libonnxruntime.so")
	_, err = onnxx.LibraryPath()
	require.ErrorIs(t, err, onnxx.ErrNoRuntime)
	assert.Contains(t, err.Error(), "/nonexistent/libonnxruntime.so")
	t.Setenv("ONNXRUNTIME_LIB", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	_, err = onnxx.LibraryPath()
	require.ErrorIs(t, err, onnxx.ErrNoRuntime)
	assert.Contains(t, err.Error(), "fetch-ort.sh")
	require.NoError(t, onnxx.Init(), "Init after a successful Init does nothing")
}

func TestDTypes(t *testing.T) {
	for name, dt := range dtypeNames {
		ot, err := onnxx.ONNXType(dt)
		require.NoError(t, err, name)
		back, err := onnxx.DType(ot)
		require.NoError(t, err)
		assert.Equal(t, dt, back)
	}
	_, err := onnxx.DType(ort.TensorElementDataTypeString)
	require.ErrorIs(t, err, onnxx.ErrDType)
}

// TestRunInto: positional runs into the caller's tensors reuse the values made for the same
// tensors, see changes of the inputs' elements, and make new values for other tensors.
func TestRunInto(t *testing.T) {
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	xs := []float32{1, 2, 3, 4, 5, 6}
	x := core.MustFromSlice(xs, 2, 3)
	y, sum := core.MustNew(core.Float32, 2, 3), core.MustNew(core.Float32, 2)
	require.NoError(t, s.RunInto([]*core.Tensor{x}, []*core.Tensor{y, sum}))
	got, _ := core.ReadOnlyData[float32](y)
	assert.Equal(t, []float32{3, 5, 7, 9, 11, 13}, got)

	xs[0] = 10 // the same tensor again: ORT reads its current elements
	require.NoError(t, s.RunInto([]*core.Tensor{x}, []*core.Tensor{y, sum}))
	assert.Equal(t, []float32{21, 5, 7, 9, 11, 13}, got)
	sums, _ := core.ReadOnlyData[float32](sum)
	assert.Equal(t, []float32{15, 15}, sums)

	// other tensors, of another shape, with the same session
	x2 := core.MustFromSlice([]float32{0, 0, 0}, 1, 3)
	y2, sum2 := core.MustNew(core.Float32, 1, 3), core.MustNew(core.Float32, 1)
	require.NoError(t, s.RunInto([]*core.Tensor{x2}, []*core.Tensor{y2, sum2}))
	got2, _ := core.ReadOnlyData[float32](y2)
	assert.Equal(t, []float32{1, 1, 1}, got2)

	// a view of the same memory with another shape is a different tensor: no stale value
	flat, err := x.Reshape(1, 6)
	require.NoError(t, err)
	_, err = s.Run(map[string]*core.Tensor{"X": flat})
	require.ErrorIs(t, err, onnxx.ErrModel, "the model wants 3 columns")

	// a released input is refused, not read through the value kept for it
	x.Release()
	err = s.RunInto([]*core.Tensor{x}, []*core.Tensor{y, sum})
	require.ErrorIs(t, err, core.ErrReleased)

	for _, tc := range []struct {
		name    string
		in, out []*core.Tensor
		want    error
	}{
		{"count", []*core.Tensor{x2}, []*core.Tensor{y2}, onnxx.ErrModel},
		{"nil output", []*core.Tensor{x2}, []*core.Tensor{y2, nil}, onnxx.ErrModel},
		{"nil input", []*core.Tensor{nil}, []*core.Tensor{y2, sum2}, onnxx.ErrModel},
		{"wrong shape", []*core.Tensor{x2}, []*core.Tensor{y, sum2}, nil},
		{"read-only", []*core.Tensor{x2}, []*core.Tensor{must(y2.AsReadOnly()), sum2}, core.ErrReadOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.RunInto(tc.in, tc.out)
			require.Error(t, err)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			}
		})
	}
}

func must(t *core.Tensor, err error) *core.Tensor {
	if err != nil {
		panic(err)
	}
	return t
}

// TestRunIntoAllocs: repeated inference on the same tensors allocates nothing in onnxx (the
// allocations left are onnxruntime_go's own, two slices of C pointers per run).
func TestRunIntoAllocs(t *testing.T) {
	s, err := onnxx.NewSession(model("small"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	x, y := core.MustNew(core.Float32, 1, 64), core.MustNew(core.Float32, 1, 64)
	ins, outs := []*core.Tensor{x}, []*core.Tensor{y}
	require.NoError(t, s.RunInto(ins, outs))
	ours := testing.AllocsPerRun(100, func() {
		if err := s.RunInto(ins, outs); err != nil {
			panic(err)
		}
	})
	in, err := ort.NewTensor(ort.NewShape(1, 64), make([]float32, 64))
	require.NoError(t, err)
	defer in.Destroy()
	out, err := ort.NewEmptyTensor[float32](ort.NewShape(1, 64))
	require.NoError(t, err)
	defer out.Destroy()
	plain, err := ort.NewDynamicAdvancedSession(model("small"), []string{"X"}, []string{"Y"}, nil)
	require.NoError(t, err)
	defer plain.Destroy()
	theirs := testing.AllocsPerRun(100, func() {
		if err := plain.Run([]ort.Value{in}, []ort.Value{out}); err != nil {
			panic(err)
		}
	})
	assert.Equal(t, theirs, ours, "RunInto adds no allocation to onnxruntime_go's")
}

// TestRunIntoKeepsNoHold: the values a session keeps for reuse do not hold the caller's memory:
// releasing a wrapped input frees it at once, and the session then refuses the released tensor.
func TestRunIntoKeepsNoHold(t *testing.T) {
	s, err := onnxx.NewSession(model("small"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	mem := make([]float32, 64)
	released := 0
	x, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&mem[0]), Device: core.CPUDevice, DType: core.Float32,
		Shape: []int64{1, 64}}, func() { released++ })
	require.NoError(t, err)
	y := core.MustNew(core.Float32, 1, 64)
	for range 3 {
		require.NoError(t, s.RunInto([]*core.Tensor{x}, []*core.Tensor{y}))
	}
	assert.Equal(t, 0, released)
	x.Release()
	assert.Equal(t, 1, released, "the session does not delay the release")
	err = s.RunInto([]*core.Tensor{x}, []*core.Tensor{y})
	require.ErrorIs(t, err, core.ErrReleased)
	_, err = s.Run(map[string]*core.Tensor{"X": x})
	require.ErrorIs(t, err, core.ErrReleased)
	assert.Equal(t, 1, released)
	runtime.KeepAlive(mem)
}
