package gomlxx_test

import (
	"context"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	gfloat16 "github.com/gomlx/compute/dtypes/float16"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gomlxx"
	"github.com/dlpack-go/dlpack/memory"
)

// storable are the GoMLX dtypes with host storage in v0.28, with their DLPack types.
var storable = []struct {
	g dtypes.DType
	d core.DLDataType
}{
	{dtypes.Bool, core.Bool},
	{dtypes.Int8, core.Int8}, {dtypes.Int16, core.Int16}, {dtypes.Int32, core.Int32}, {dtypes.Int64, core.Int64},
	{dtypes.Uint8, core.Uint8}, {dtypes.Uint16, core.Uint16}, {dtypes.Uint32, core.Uint32}, {dtypes.Uint64, core.Uint64},
	{dtypes.Float16, core.Float16}, {dtypes.BFloat16, core.BFloat16},
	{dtypes.Float32, core.Float32}, {dtypes.Float64, core.Float64},
	{dtypes.Complex64, core.Complex64}, {dtypes.Complex128, core.Complex128},
}

func TestDTypes(t *testing.T) {
	for _, p := range storable {
		d, err := gomlxx.FromDType(p.g)
		require.NoError(t, err, p.g)
		assert.Equal(t, p.d, d, p.g)
		g, err := gomlxx.ToDType(p.d)
		require.NoError(t, err, p.d)
		assert.Equal(t, p.g, g, p.d)
		assert.Equal(t, int(p.g.GoType().Size()), p.d.Size(), "element size of %s", p.g)
	}
	// the names GoMLX has without host storage map both ways, but conversions refuse them
	for _, tc := range []struct {
		g dtypes.DType
		d core.DLDataType
	}{
		{dtypes.F8E5M2, core.DLDataType{Code: core.CodeFloat8E5M2, Bits: 8, Lanes: 1}},
		{dtypes.F8E4M3FN, core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}},
		{dtypes.F8E4M3B11FNUZ, core.DLDataType{Code: core.CodeFloat8E4M3B11FNUZ, Bits: 8, Lanes: 1}},
		{dtypes.F8E5M2FNUZ, core.DLDataType{Code: core.CodeFloat8E5M2FNUZ, Bits: 8, Lanes: 1}},
		{dtypes.F8E4M3FNUZ, core.DLDataType{Code: core.CodeFloat8E4M3FNUZ, Bits: 8, Lanes: 1}},
		{dtypes.F8E4M3, core.DLDataType{Code: core.CodeFloat8E4M3, Bits: 8, Lanes: 1}},
		{dtypes.F8E3M4, core.DLDataType{Code: core.CodeFloat8E3M4, Bits: 8, Lanes: 1}},
		{dtypes.F8E8M0FNU, core.DLDataType{Code: core.CodeFloat8E8M0FNU, Bits: 8, Lanes: 1}},
		{dtypes.F4E2M1FN, core.DLDataType{Code: core.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}},
		{dtypes.S4, core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}},
		{dtypes.U4, core.DLDataType{Code: core.CodeUInt, Bits: 4, Lanes: 1}},
	} {
		d, err := gomlxx.FromDType(tc.g)
		require.NoError(t, err, tc.g)
		assert.Equal(t, tc.d, d, tc.g)
		g, err := gomlxx.ToDType(tc.d)
		require.NoError(t, err, tc.d)
		assert.Equal(t, tc.g, g)
	}
	for _, g := range []dtypes.DType{dtypes.InvalidDType, dtypes.TOKEN, dtypes.S2, dtypes.U2, dtypes.DType(99)} {
		_, err := gomlxx.FromDType(g)
		require.ErrorIs(t, err, adapters.ErrUnsupported, g)
		assert.Contains(t, err.Error(), g.String())
	}
	for _, d := range []core.DLDataType{
		{Code: core.CodeFloat6E2M3FN, Bits: 6, Lanes: 1}, {Code: core.CodeComplex, Bits: 32, Lanes: 1},
		{Code: core.CodeOpaqueHandle, Bits: 64, Lanes: 1}, {Code: core.CodeFloat, Bits: 32, Lanes: 4},
		{Code: core.CodeInt, Bits: 1, Lanes: 1},
	} {
		_, err := gomlxx.ToDType(d)
		require.ErrorIs(t, err, adapters.ErrUnsupported, d)
		assert.Contains(t, err.Error(), d.String())
	}
	for _, d := range []core.DLDataType{{Code: 99, Bits: 8, Lanes: 1}, {Code: core.CodeFloat, Bits: 8, Lanes: 1}, {Code: core.CodeInt, Bits: 32}} {
		_, err := gomlxx.ToDType(d)
		require.ErrorIs(t, err, core.ErrDType, d)
	}
}

// flatAddr returns the address of the first element of g's data, read without a transfer.
func flatAddr(t *testing.T, g *tensors.Tensor) unsafe.Pointer {
	t.Helper()
	var p unsafe.Pointer
	require.NoError(t, g.ConstFlatData(func(f any) { p = reflect.ValueOf(f).UnsafePointer() }))
	return p
}

// pattern fills g's bytes with distinct values that are valid for every dtype (bool: 0 or 1).
func pattern(t *testing.T, g *tensors.Tensor) {
	t.Helper()
	bool_ := g.DType() == dtypes.Bool
	require.NoError(t, g.MutableBytes(func(b []byte) {
		for i := range b {
			if bool_ {
				b[i] = byte(i % 2)
			} else {
				b[i] = byte(i*7 + 3)
			}
		}
	}))
}

// gomlxBytes copies g's data as bytes.
func gomlxBytes(t *testing.T, g *tensors.Tensor) []byte {
	t.Helper()
	var out []byte
	require.NoError(t, g.ConstBytes(func(b []byte) { out = append([]byte{}, b...) }))
	return out
}

// coreBytes copies c's elements in C order as bytes.
func coreBytes(t *testing.T, c *core.Tensor) []byte {
	t.Helper()
	cc, err := memory.Contiguous(c)
	require.NoError(t, err)
	b, err := cc.ReadOnlyBytes()
	require.NoError(t, err)
	return append([]byte{}, b...)
}

func TestFromTensorSharesEveryDtype(t *testing.T) {
	for _, p := range storable {
		t.Run(p.g.String(), func(t *testing.T) {
			g := tensors.FromShape(shapes.Make(p.g, 2, 3))
			pattern(t, g)
			ok, why := gomlxx.ShareableFromTensor(g)
			require.True(t, ok, why)
			var copied bool
			c, err := gomlxx.FromTensor(g, adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied))
			require.NoError(t, err)
			assert.False(t, copied)
			assert.Equal(t, p.d, c.DType())
			assert.Equal(t, []int64{2, 3}, c.Shape())
			assert.False(t, c.ReadOnly())
			assert.Equal(t, flatAddr(t, g), c.Data(), "pointer identity")
			assert.Equal(t, gomlxBytes(t, g), coreBytes(t, c))
			assert.True(t, gomlxx.Aliases(g, c))

			// a write through the view is what GoMLX reads, and the other way round
			b, err := c.Bytes()
			require.NoError(t, err)
			b[len(b)-1] ^= 1
			assert.Equal(t, b[len(b)-1], gomlxBytes(t, g)[len(b)-1])
			require.NoError(t, g.MutableBytes(func(gb []byte) { gb[0] ^= 1 }))
			assert.Equal(t, gomlxBytes(t, g)[0], coreBytes(t, c)[0])

			// and the view goes back as the same GoMLX tensor
			ok, why = gomlxx.Shareable(c)
			require.True(t, ok, why)
			back, err := gomlxx.ToTensor(c, adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied))
			require.NoError(t, err)
			assert.Same(t, g, back)
			assert.False(t, copied)
		})
	}
}

func TestToTensorCopiesEveryDtype(t *testing.T) {
	for _, p := range storable {
		t.Run(p.g.String(), func(t *testing.T) {
			src := core.MustNew(p.d, 3, 4)
			b, err := src.Bytes()
			require.NoError(t, err)
			for i := range b {
				b[i] = byte(i % 2)
			}
			// a transposed view: ToTensor copies it in C order of the view
			tr, err := src.Transpose()
			require.NoError(t, err)
			ok, why := gomlxx.Shareable(tr)
			assert.False(t, ok)
			assert.Contains(t, why, "no tensor constructor over caller memory")
			_, err = gomlxx.ToTensor(tr, adapters.ZeroCopyOnly())
			require.ErrorIs(t, err, adapters.ErrCopyRequired)
			copied := false
			g, err := gomlxx.ToTensor(tr, adapters.ReportCopy(&copied))
			require.NoError(t, err)
			assert.True(t, copied)
			assert.Equal(t, p.g, g.DType())
			assert.Equal(t, []int{4, 3}, g.Shape().Dimensions)
			assert.Equal(t, coreBytes(t, tr), gomlxBytes(t, g))
			b[0] ^= 1
			assert.NotEqual(t, coreBytes(t, tr)[0], gomlxBytes(t, g)[0], "the copy is independent")
		})
	}
}

// square builds an Exec that squares its input on the pure-Go backend.
func square(t testing.TB) *graph.Exec {
	t.Helper()
	e, err := graph.NewExec(gobackend.GetBackend(), func(x *graph.Node) *graph.Node { return graph.Mul(x, x) })
	require.NoError(t, err)
	return e
}

func TestComputationResultIsCopiedOrTaken(t *testing.T) {
	in := tensors.FromFlatDataAndDimensions([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	want := []float32{1, 4, 9, 16, 25, 36}
	out := square(t).MustExec1(in)
	require.False(t, out.HasLocal(), "the Go backend keeps results in its buffers")

	ok, why := gomlxx.ShareableFromTensor(out)
	assert.False(t, ok)
	assert.Contains(t, why, "Take moves the pure-Go backend's buffers")
	_, err := gomlxx.FromTensor(out, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)

	copied := false
	c, err := gomlxx.FromTensor(out, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.True(t, copied)
	assert.NotZero(t, c.Flags()&core.FlagIsCopied)
	assert.False(t, gomlxx.Aliases(out, c))
	got, err := core.ReadOnlyElements[float32](c)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	require.True(t, out.Ok(), "FromTensor leaves the tensor to GoMLX")

	// Take moves the buffer: no copy, and the GoMLX tensor is gone
	addr := flatAddr(t, out)
	taken, err := gomlxx.Take(out, adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.False(t, copied)
	assert.False(t, out.Ok())
	assert.Equal(t, addr, taken.Data(), "the result's own buffer")
	got, err = core.ReadOnlyElements[float32](taken)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = gomlxx.FromTensor(out)
	require.ErrorIs(t, err, core.ErrReleased)
	_, err = gomlxx.Take(out)
	require.ErrorIs(t, err, core.ErrReleased)
	taken.Release()
}

func TestTakeLocalAndAlwaysCopy(t *testing.T) {
	g := tensors.FromFlatDataAndDimensions([]int32{1, 2, 3}, 3)
	addr := flatAddr(t, g)
	c, err := gomlxx.Take(g, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	assert.Equal(t, addr, c.Data())
	assert.False(t, g.Ok())
	got, err := core.Elements[int32](c)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2, 3}, got)

	g = tensors.FromFlatDataAndDimensions([]int32{4, 5}, 2)
	addr = flatAddr(t, g)
	copied := false
	c, err = gomlxx.Take(g, adapters.AlwaysCopy(), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.True(t, copied)
	assert.NotEqual(t, addr, c.Data())
	assert.False(t, g.Ok())
	got, err = core.Elements[int32](c)
	require.NoError(t, err)
	assert.Equal(t, []int32{4, 5}, got)
}

// An input of a computation leaves local storage: GoMLX copies it into a backend buffer and
// drops the slice. A view made before keeps valid memory and its values, but no longer aliases.
func TestViewDetachesWhenGoMLXMovesTheData(t *testing.T) {
	g := tensors.FromFlatDataAndDimensions([]float64{1, 2, 3}, 3)
	v, err := gomlxx.FromTensor(g, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	require.True(t, gomlxx.Aliases(g, v))

	sq := square(t).MustExec1(g)
	assert.True(t, g.IsShared(), "the Go backend moved the input into a shared buffer")
	assert.False(t, gomlxx.Aliases(g, v), "the view is detached")
	got, err := core.Elements[float64](v)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3}, got, "the view keeps its memory and values")
	got[0] = 100 // writable memory of its own; GoMLX does not see it any more
	assert.Equal(t, []float64{1, 2, 3}, g.Value())
	ok, why := gomlxx.Shareable(v)
	assert.False(t, ok)
	assert.Contains(t, why, "finalized or moved")
	back, err := gomlxx.ToTensor(v)
	require.NoError(t, err)
	assert.NotSame(t, g, back)
	assert.Equal(t, []float64{100, 2, 3}, back.Value())

	// g's data is now a shared buffer of the Go backend: copied by FromTensor, moved by Take
	_, err = gomlxx.FromTensor(g, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	addr := flatAddr(t, g)
	taken, err := gomlxx.Take(g, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	assert.Equal(t, addr, taken.Data())
	assert.Equal(t, []float64{1, 4, 9}, sq.Value())
}

// collect runs the garbage collector until stop is closed.
func collect(ctx context.Context, wg *sync.WaitGroup) {
	defer wg.Done()
	for ctx.Err() == nil {
		runtime.GC()
	}
}

// FinalizeAll on the GoMLX tensor while a view lives: GoMLX drops its reference to its local
// slice, the view keeps the memory valid, with its values, for as long as it lives.
func TestFinalizeAllUnderAView(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go collect(ctx, &wg)
	defer func() { cancel(); wg.Wait() }()

	const n = 1 << 16
	data := make([]float64, n)
	for i := range data {
		data[i] = float64(i)
	}
	g := tensors.FromFlatDataAndDimensions(data, n)
	v, err := gomlxx.FromTensor(g, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	require.NoError(t, g.FinalizeAll())
	assert.False(t, gomlxx.Aliases(g, v))
	g = nil //nolint:ineffassign // the view is now the memory's only holder
	// allocate and collect while reading: freed memory would show as changed values
	for round := range 20 {
		junk := make([]float64, n)
		for i := range junk {
			junk[i] = -1
		}
		runtime.GC()
		h, err := core.Hold(v)
		require.NoError(t, err)
		got, err := core.Elements[float64](v)
		require.NoError(t, err)
		for i, x := range got {
			if x != float64(i)+float64(round) {
				h.Release()
				t.Fatalf("round %d: element %d = %v after FinalizeAll", round, i, x)
			}
			got[i]++ // and the memory stays writable
		}
		h.Release()
		runtime.KeepAlive(junk)
	}
	ok, _ := gomlxx.Shareable(v)
	assert.False(t, ok, "the finalized tensor cannot take it back")
}

// Take makes the core tensor the only holder of a Go backend buffer: it stays valid while
// collections run, and goes back to the backend exactly once when the tensor is let go.
func TestTakenBufferOnlyHolder(t *testing.T) {
	base := leakcheck.Settle()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go collect(ctx, &wg)

	const n = 1 << 14
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(i % 1000)
	}
	e := square(t)
	c, err := gomlxx.Take(e.MustExec1(tensors.FromFlatDataAndDimensions(data, n)), adapters.ZeroCopyOnly())
	require.NoError(t, err)
	assert.Equal(t, base+1, core.LiveForeign(), "the buffer is held through the core tensor")
	for range 20 {
		// other computations on the same backend must not get the buffer while it is held
		other := e.MustExec1(tensors.FromScalarAndDimensions(float32(-1), n))
		runtime.GC()
		got, err := core.ReadOnlyElements[float32](c)
		require.NoError(t, err)
		for i, x := range got {
			if w := float32(i%1000) * float32(i%1000); x != w {
				t.Fatalf("element %d = %v, want %v", i, x, w)
			}
		}
		require.NoError(t, other.FinalizeAll()) // back into the Go backend's pool
	}
	c = nil //nolint:ineffassign // dropped: the cleanup gives the buffer back
	cancel()
	wg.Wait()
	assert.Equal(t, base, leakcheck.Settle(), "the buffer went back to the backend")
}

func TestErrors(t *testing.T) {
	_, err := gomlxx.FromTensor(nil)
	require.ErrorIs(t, err, core.ErrNil)
	_, err = gomlxx.Take(nil)
	require.ErrorIs(t, err, core.ErrNil)
	ok, why := gomlxx.ShareableFromTensor(nil)
	assert.False(t, ok)
	assert.Contains(t, why, "nil")
	_, err = gomlxx.ToTensor(nil)
	require.ErrorIs(t, err, core.ErrNil)
	ok, _ = gomlxx.Shareable(nil)
	assert.False(t, ok)

	g := tensors.FromScalar(float32(1))
	require.NoError(t, g.FinalizeAll())
	_, err = gomlxx.FromTensor(g)
	require.ErrorIs(t, err, core.ErrReleased)
	assert.False(t, gomlxx.Aliases(g, core.Scalar(float32(1))))

	x := core.MustNew(core.Float32, 2)
	x.Release()
	_, err = gomlxx.ToTensor(x)
	require.ErrorIs(t, err, core.ErrReleased)
	ok, _ = gomlxx.Shareable(x)
	assert.False(t, ok)

	f8, err := core.New(core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}, 4)
	require.NoError(t, err)
	_, err = gomlxx.ToTensor(f8)
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	assert.Contains(t, err.Error(), "F8E4M3FN")
	f6, err := core.New(core.DLDataType{Code: core.CodeFloat6E2M3FN, Bits: 6, Lanes: 1}, 0)
	require.NoError(t, err)
	_, err = gomlxx.ToTensor(f6)
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	bc := core.MustNew(core.BComplex32, 2) // DLPack's kDLBcomplex, after v1.3: GoMLX has no such dtype
	_, err = gomlxx.ToTensor(bc)
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	assert.Contains(t, err.Error(), "DLPack dtype bcomplex32 has no GoMLX dtype")

	var fake [4]float64
	dev, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&fake[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float64, Shape: []int64{4}}, nil)
	require.NoError(t, err)
	ok, why = gomlxx.Shareable(dev)
	assert.False(t, ok)
	assert.Contains(t, why, "not host memory")
	_, err = gomlxx.ToTensor(dev)
	require.ErrorIs(t, err, core.ErrNotHost)
	_, err = gomlxx.ToTensor(dev, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)

	// a read-only view of GoMLX memory never goes back writable
	g = tensors.FromFlatDataAndDimensions([]float32{1, 2}, 2)
	v, err := gomlxx.FromTensor(g)
	require.NoError(t, err)
	ro, err := v.AsReadOnly()
	require.NoError(t, err)
	_, err = gomlxx.ToTensor(ro, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	back, err := gomlxx.ToTensor(ro)
	require.NoError(t, err)
	assert.NotSame(t, g, back)
	// nor does a part of it
	part, err := v.Slice(0, 1, 2, 1)
	require.NoError(t, err)
	ok, why = gomlxx.Shareable(part)
	assert.False(t, ok, why)
}

func TestEmptyAndScalar(t *testing.T) {
	for _, dims := range [][]int{{}, {0}, {3, 0, 2}} {
		g := tensors.FromShape(shapes.Make(dtypes.Float32, dims...))
		c, err := gomlxx.FromTensor(g, adapters.ZeroCopyOnly())
		require.NoError(t, err, dims)
		assert.Equal(t, len(dims), c.Ndim())
		back, err := gomlxx.ToTensor(c)
		require.NoError(t, err, dims)
		assert.Equal(t, dims, back.Shape().Dimensions)
	}
}

// roundTrip is core → GoMLX → core, with one copy policy for both directions and one report.
func roundTrip(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
	o := adapters.Apply(opts...)
	policy := adapters.WithCopy(o.Policy)
	var c1, c2 bool
	g, err := gomlxx.ToTensor(t, policy, adapters.ReportCopy(&c1))
	if err != nil {
		return nil, err
	}
	back, err := gomlxx.FromTensor(g, policy, adapters.ReportCopy(&c2))
	if err != nil {
		return nil, err
	}
	o.Report(c1 || c2)
	return back, nil
}

func TestConformance(t *testing.T) {
	dts := make([]core.DLDataType, len(storable))
	for i, p := range storable {
		dts[i] = p.d
	}
	adaptertest.Run(t, adaptertest.Adapter{
		Name:      "gomlx",
		DTypes:    dts,
		RoundTrip: roundTrip,
		// GoMLX v0.28 has no constructor over caller memory: the kit's tensors are always copied
		Shareable: nil,
	})
}

// A backend finalized under a GoMLX tensor: GoMLX calls the tensor invalid (ErrGoMLX); a buffer
// taken from it before stays valid, and giving it back after is harmless.
func TestFinalizedBackend(t *testing.T) {
	b, err := gobackend.New("")
	require.NoError(t, err)
	e, err := graph.NewExec(b, func(x *graph.Node) *graph.Node { return graph.Neg(x) })
	require.NoError(t, err)
	outs, err := e.Exec(tensors.FromFlatDataAndDimensions([]int64{1, 2, 3}, 3))
	require.NoError(t, err)
	more, err := e.Exec1(tensors.FromFlatDataAndDimensions([]int64{4, 5}, 2))
	require.NoError(t, err)
	taken, err := gomlxx.Take(outs[0], adapters.ZeroCopyOnly())
	require.NoError(t, err)
	b.Finalize()

	_, err = gomlxx.FromTensor(more)
	require.ErrorIs(t, err, gomlxx.ErrGoMLX)
	assert.Contains(t, err.Error(), "finalized backend")
	_, err = gomlxx.Take(more)
	require.ErrorIs(t, err, gomlxx.ErrGoMLX)

	runtime.GC()
	got, err := core.Elements[int64](taken)
	require.NoError(t, err)
	assert.Equal(t, []int64{-1, -2, -3}, got)
	taken.Release() // Buffer.Finalize on a finalized backend: refused by the Go backend, ignored here
}

// ToTensor decides to copy device memory, then finds that it cannot: the caller's ReportCopy
// flag is left as it was, whatever was in it.
func TestToTensorFailedCopyLeavesReport(t *testing.T) {
	var fake [4]float64
	dev, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&fake[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float64, Shape: []int64{4}}, nil)
	require.NoError(t, err)
	for _, policy := range []adapters.Option{nil, adapters.AlwaysCopy()} {
		for _, sentinel := range []bool{false, true} {
			copied := sentinel
			_, err := gomlxx.ToTensor(dev, policy, adapters.ReportCopy(&copied))
			require.ErrorIs(t, err, core.ErrNotHost)
			assert.Equal(t, sentinel, copied, "AlwaysCopy: %v: ReportCopy was set by a conversion that failed", policy != nil)
		}
	}
}

// Half-precision values mean the same on both sides: GoMLX's bfloat16.BFloat16 and
// float16.Float16 (github.com/gomlx/compute/dtypes, since v0.28 no longer x448/float16's type)
// have core.BF16's and core.Float16's bits. GoMLX v0.28's pure-Go backend computes in both.
func TestHalfPrecisionComputation(t *testing.T) {
	bf := []core.BF16{core.BF16FromFloat32(1.5), core.BF16FromFloat32(-2), core.BF16FromFloat32(0.25)}
	f16 := []float16.Float16{float16.Fromfloat32(1.5), float16.Fromfloat32(-2), float16.Fromfloat32(0.25)}
	for _, tc := range []struct {
		name    string
		in      *core.Tensor
		compute bool
		want    func(c *core.Tensor) []float32
	}{
		{"bfloat16", core.MustFromSlice(bf, 3), true, func(c *core.Tensor) []float32 {
			got, err := core.ReadOnlyElements[core.BF16](c)
			require.NoError(t, err)
			out := make([]float32, len(got))
			for i, v := range got {
				out[i] = v.Float32()
			}
			return out
		}},
		{"float16", core.MustFromSlice(f16, 3), true, func(c *core.Tensor) []float32 {
			got, err := core.ReadOnlyElements[float16.Float16](c)
			require.NoError(t, err)
			out := make([]float32, len(got))
			for i, v := range got {
				out[i] = v.Float32()
			}
			return out
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := gomlxx.ToTensor(tc.in)
			require.NoError(t, err)
			switch v := g.Value().(type) {
			case []bfloat16.BFloat16:
				assert.Equal(t, []float32{1.5, -2, 0.25}, []float32{v[0].Float32(), v[1].Float32(), v[2].Float32()})
			case []gfloat16.Float16:
				assert.Equal(t, []float32{1.5, -2, 0.25}, []float32{v[0].Float32(), v[1].Float32(), v[2].Float32()})
			default:
				t.Fatalf("GoMLX holds %T", v)
			}
			// x + x on the pure-Go backend, in the half type
			e, err := graph.NewExec(gobackend.GetBackend(), func(x *graph.Node) *graph.Node { return graph.Add(x, x) })
			require.NoError(t, err)
			out, err := e.Exec1(g)
			if !tc.compute {
				require.ErrorContains(t, err, "not supported", "the Go backend learnt float16: make this test compute")
				// the refused computation still moved g into a Go backend buffer: Take it
				back, err := gomlxx.Take(g, adapters.ZeroCopyOnly())
				require.NoError(t, err)
				assert.Equal(t, []float32{1.5, -2, 0.25}, tc.want(back))
				return
			}
			require.NoError(t, err)
			c, err := gomlxx.Take(out, adapters.ZeroCopyOnly())
			require.NoError(t, err)
			assert.Equal(t, tc.in.DType(), c.DType())
			assert.Equal(t, []float32{3, -4, 0.5}, tc.want(c))
		})
	}
}

// A tensor with both local storage and a device copy: FromTensor drops the device copy, so that
// what is written through the view is what GoMLX computes on next.
func TestViewWritesReachTheNextComputation(t *testing.T) {
	g := tensors.FromFlatDataAndDimensions([]float32{1, 2, 3}, 3)
	require.NoError(t, g.MaterializeOnDevice(gobackend.GetBackend(), false, 0))
	require.True(t, g.HasLocal() && g.IsOnAnyDevice() && !g.IsShared())
	v, err := gomlxx.FromTensor(g, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	assert.False(t, g.IsOnAnyDevice(), "the stale device copy is gone")
	require.NoError(t, core.Set[float32](v, 10, 0))
	out, err := square(t).Exec1(g)
	require.NoError(t, err)
	assert.Equal(t, []float32{100, 4, 9}, out.Value())
}

// ToTensor of a view drops a device copy made after the view, so a write through the view
// reaches the next computation.
func TestHandBackDropsStaleDeviceCopy(t *testing.T) {
	g := tensors.FromFlatDataAndDimensions([]float32{1, 2, 3}, 3)
	v, err := gomlxx.FromTensor(g, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	require.NoError(t, g.MaterializeOnDevice(gobackend.GetBackend(), false, 0)) // a device copy of [1 2 3]
	require.NoError(t, core.Set[float32](v, 10, 0))
	back, err := gomlxx.ToTensor(v, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	require.Same(t, g, back)
	assert.False(t, g.IsOnAnyDevice())
	out, err := square(t).Exec1(back)
	require.NoError(t, err)
	assert.Equal(t, []float32{100, 4, 9}, out.Value())
}

// TestToTensorPastMemory: a copy that no machine here could hold fails with core.ErrTooLarge
// before GoMLX allocates; GoMLX's allocation of a float64 broadcast to [2^20, 2^20] (8 TiB) ended
// the process ("fatal error: runtime: out of memory").
func TestToTensorPastMemory(t *testing.T) {
	b, err := core.MustFromSlice([]float64{1}, 1, 1).BroadcastTo(1<<20, 1<<20)
	require.NoError(t, err)
	_, err = gomlxx.ToTensor(b)
	require.ErrorIs(t, err, core.ErrTooLarge)
}
