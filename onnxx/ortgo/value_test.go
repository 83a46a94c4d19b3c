package ortgo_test

import (
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/ortgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
	ort "github.com/yalue/onnxruntime_go"
)

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
			v, err := ortgo.ToValue(tc.t, adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied))
			require.NoError(t, err)
			defer v.Destroy()
			assert.False(t, copied)
			assert.Equal(t, tc.t.Data(), dataOf(t, v))
			assert.Equal(t, ort.Shape(tc.t.Shape()), v.GetShape())
			wantType, err := ortgo.ToDType(tc.t.DType())
			require.NoError(t, err)
			assert.Equal(t, wantType, ort.TensorElementDataType(v.DataType()))
		})
	}
}

func TestInputMutationBetweenRuns(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2, 3}, 1, 3)
	xv, err := ortgo.ToValue(x, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer xv.Destroy()
	y, err := core.New(core.Float32, 1, 3)
	require.NoError(t, err)
	yv, err := ortgo.ToValue(y, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer yv.Destroy()
	sv, err := core.New(core.Float32, 1)
	require.NoError(t, err)
	svv, err := ortgo.ToValue(sv, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer svv.Destroy()
	s, err := ort.NewAdvancedSession(model("dynamic_float32"), []string{"X"}, []string{"Y", "S"},
		[]ort.Value{xv}, []ort.Value{yv, svv}, nil)
	require.NoError(t, err)
	defer s.Destroy()

	require.NoError(t, s.Run())
	got, err := core.ReadOnlyElements[float32](y) // ORT wrote into y's own memory
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 5, 7}, got)
	require.NoError(t, core.Set[float32](x, 10, 0, 1)) // write through the core tensor
	require.NoError(t, s.Run())
	assert.Equal(t, []float32{3, 21, 7}, got)
	s0, err := core.At[float32](sv, 0)
	require.NoError(t, err)
	assert.Equal(t, float32(14), s0)
}

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
			_, err := ortgo.ToValue(tc.t, adapters.ZeroCopyOnly())
			require.ErrorIs(t, err, adapters.ErrCopyRequired)
			var copied bool
			v, err := ortgo.ToValue(tc.t, adapters.ReportCopy(&copied))
			require.NoError(t, err)
			defer v.Destroy()
			assert.True(t, copied)
			assert.Equal(t, tc.want, v.(*ort.Tensor[float32]).GetData())
			assert.Equal(t, ort.Shape(tc.t.Shape()), v.GetShape())
		})
	}
	v, err := ortgo.ToValue(base, adapters.AlwaysCopy())
	require.NoError(t, err)
	defer v.Destroy()
	assert.NotEqual(t, base.Data(), dataOf(t, v))
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, v.(*ort.Tensor[float32]).GetData())
}

func TestReadOnlyInput(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2, 3}, 1, 3)
	ro, err := x.AsReadOnly()
	require.NoError(t, err)
	v, err := ortgo.ToValue(ro, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer v.Destroy()
	assert.Equal(t, x.Data(), dataOf(t, v))
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	out, err := s.Run(map[string]*core.Tensor{"X": ro})
	require.NoError(t, err)
	got, err := core.ReadOnlyElements[float32](out["Y"])
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
		{"device", dev, onnxx.ErrUnsupportedDevice},
		{"float8", f8, onnxx.ErrDType},
		{"lanes", vec, onnxx.ErrDType},
		{"0-d float16", core.Scalar(float16.Fromfloat32(1)), onnxx.ErrDType}, // refused after the copy decision
		{"0-d bfloat16", core.Scalar(core.BF16FromFloat32(1)), onnxx.ErrDType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, sentinel := range []bool{false, true} { // a failure leaves ReportCopy's flag as it was
				copied := sentinel
				v, err := ortgo.ToValue(tc.t, adapters.ReportCopy(&copied))
				require.ErrorIs(t, err, tc.err)
				assert.Nil(t, v)
				assert.Regexp(t, `^(ortgo|onnxx): `, err.Error())
				assert.Equal(t, sentinel, copied, "ReportCopy was set by a conversion that failed")
			}
		})
	}
	assert.ErrorIs(t, onnxx.ErrUnsupportedDevice, adapters.ErrUnsupported)
	assert.ErrorIs(t, onnxx.ErrDType, adapters.ErrUnsupported)
	// a 0-d float32 is copied (onnxruntime_go has no 0-d value over foreign memory)
	_, err = ortgo.ToValue(core.Scalar(float32(1)), adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
}

func settle() {
	for range 3 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}

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

func runForeign(t *testing.T, x *core.Tensor, mem unsafe.Pointer, before int64) {
	v, err := ortgo.ToValue(x, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer v.Destroy()
	assert.Equal(t, mem, dataOf(t, v))
	x.Release() // the value still holds the memory
	assert.Equal(t, before+1, core.LiveForeign())

	s, err := ort.NewDynamicAdvancedSession(model("dynamic_float32"), []string{"X"}, []string{"Y"}, nil)
	require.NoError(t, err)
	defer s.Destroy()
	y := core.MustNew(core.Float32, 1, 3)
	yv, err := ortgo.ToValue(y)
	require.NoError(t, err)
	defer yv.Destroy()
	require.NoError(t, s.Run([]ort.Value{v}, []ort.Value{yv}))
	got, err := core.Elements[float32](y)
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 5, 7}, got)
}

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

	ft, err := ortgo.FromValue(f32)
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 2}, ft.Shape())
	assert.Equal(t, unsafe.Pointer(&f32.GetData()[0]), ft.Data())
	v, err := core.At[float32](ft, 1, 0)
	require.NoError(t, err)
	assert.Equal(t, float32(3), v)

	it, err := ortgo.FromValue(i8)
	require.NoError(t, err)
	assert.Equal(t, core.Int8, it.DType())
	bt, err := ortgo.FromValue(b)
	require.NoError(t, err)
	bs, err := core.Elements[bool](bt)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false}, bs)

	ht, err := ortgo.FromValue(f16)
	require.NoError(t, err)
	assert.Equal(t, core.Float16, ht.DType())
	assert.Equal(t, []int64{1, 2}, ht.Shape())
	assert.Equal(t, unsafe.Pointer(&h[0]), ht.Data())
	hv, err := core.At[float16.Float16](ht, 0, 1)
	require.NoError(t, err)
	assert.Equal(t, float32(-2), hv.Float32())

	bft, err := ortgo.FromValue(bf16)
	require.NoError(t, err)
	assert.Equal(t, core.BFloat16, bft.DType())
	bv, err := core.At[core.BF16](bft, 0)
	require.NoError(t, err)
	assert.Equal(t, float32(1.5), bv.Float32())

	st, err := ortgo.FromValue(sc)
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
	_, err = ortgo.FromValue(str)
	require.ErrorIs(t, err, onnxx.ErrValue)
	_, err = ortgo.FromValue(nil)
	require.ErrorIs(t, err, onnxx.ErrValue)
	// a custom-data tensor of a type that also has a Go form converts by its ONNX type
	u8, err := ort.NewCustomDataTensor(ort.NewShape(2), []byte{7, 9}, ort.TensorElementDataTypeUint8)
	require.NoError(t, err)
	ut, err := ortgo.FromValue(u8)
	require.NoError(t, err)
	defer ut.Release()
	assert.Equal(t, core.Uint8, ut.DType())
	uv, err := core.At[uint8](ut, 1)
	require.NoError(t, err)
	assert.Equal(t, uint8(9), uv)
}

func TestRoundTrip(t *testing.T) {
	x := core.MustFromSlice([]float16.Float16{1, 2, 3, 4, 5, 6}, 3, 2)
	v, err := ortgo.ToValue(x)
	require.NoError(t, err)
	y, err := ortgo.FromValue(v)
	require.NoError(t, err)
	defer y.Release()
	assert.Equal(t, x.Data(), y.Data())
	assert.Equal(t, x.Shape(), y.Shape())
	assert.Equal(t, x.DType(), y.DType())
}

func TestEmptyTensors(t *testing.T) {
	for _, dt := range []core.DLDataType{core.Float32, core.Float16, core.BFloat16, core.Bool} {
		x := core.MustNew(dt, 0, 3)
		v, err := ortgo.ToValue(x, adapters.ZeroCopyOnly())
		require.NoError(t, err, dt)
		assert.Equal(t, ort.Shape{0, 3}, v.GetShape())
		y, err := ortgo.FromValue(v)
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
	assert.LessOrEqual(t, ours, theirs, "RunInto allocates no more than onnxruntime_go's Run")
}
