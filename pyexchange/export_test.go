package pyexchange_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/pyexchange"
)

// eventually polls cond, collecting garbage between tries (cleanups run asynchronously).
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for range 300 {
		runtime.GC()
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal(msg)
}

func iota64(shape ...int64) *core.Tensor {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i)
	}
	return core.MustFromSlice(s, shape...)
}

func must(t *testing.T) func(*core.Tensor, error) *core.Tensor {
	return func(x *core.Tensor, err error) *core.Tensor {
		t.Helper()
		require.NoError(t, err)
		return x
	}
}

// exported reads what a consumer sees in a DLTensor: shape, strides and elements (float64) in C
// order, walking the strides the descriptor carries.
func exported(dl *core.DLTensor) (shape, strides []int64, vals []float64) {
	nd := int(dl.Ndim)
	if nd > 0 {
		shape = append([]int64{}, unsafe.Slice(dl.Shape, nd)...)
		strides = append([]int64{}, unsafe.Slice(dl.Strides, nd)...)
	}
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	idx := make([]int64, nd)
	for range n {
		off := int64(0)
		for i := range idx {
			off += idx[i] * strides[i]
		}
		p := unsafe.Add(dl.Data, uintptr(dl.ByteOffset)+uintptr(off*8))
		vals = append(vals, *(*float64)(p))
		for i := nd - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return shape, strides, vals
}

func cOrder(t *testing.T, x *core.Tensor) []float64 {
	c, err := memory.Contiguous(x)
	require.NoError(t, err)
	v, err := core.Elements[float64](c)
	require.NoError(t, err)
	return append([]float64{}, v...)
}

func TestExportPolicy(t *testing.T) {
	m := must(t)
	base := iota64(3, 4)
	cases := []struct {
		name     string
		tensor   func() *core.Tensor
		legacyCp bool // a legacy consumer gets a copy
		versCp   bool // a versioned consumer gets a copy
	}{
		{"c-order", func() *core.Tensor { return base }, false, false},
		{"transposed", func() *core.Tensor { return m(base.Transpose()) }, false, false},
		{"step2", func() *core.Tensor { return m(base.Slice(1, 0, core.End, 2)) }, false, false},
		{"offset", func() *core.Tensor { return m(base.Slice(0, 1, core.End, 1)) }, false, false},
		{"broadcast", func() *core.Tensor { return m(m(base.Index(0, 1)).BroadcastTo(2, 4)) }, true, true},
		{"read-only", func() *core.Tensor { return m(base.AsReadOnly()) }, true, true},
		{"reversed", func() *core.Tensor { return m(base.Reverse(0)) }, true, true},
		{"reversed-both", func() *core.Tensor { return m(m(base.Reverse(0)).Reverse(1)) }, true, true},
		{"reversed-size-1", func() *core.Tensor { return m(m(base.Slice(0, 0, 1, 1)).Reverse(0)) }, false, false},
		{"empty-reversed", func() *core.Tensor { return m(m(base.Slice(1, 0, 0, 1)).Reverse(0)) }, false, false},
		{"0-d", func() *core.Tensor { return core.Scalar(7.5) }, false, false},
		{"empty", func() *core.Tensor { return iota64(0, 3) }, false, false},
	}
	for _, c := range cases {
		for _, legacy := range []bool{false, true} {
			wantCopy := c.versCp
			kind := "versioned"
			if legacy {
				wantCopy, kind = c.legacyCp, "legacy"
			}
			t.Run(c.name+"/"+kind, func(t *testing.T) {
				in := c.tensor()
				live := pyexchange.LiveExports()
				var copied bool
				var dl *core.DLTensor
				var flags core.Flags
				var del func()
				if legacy {
					mt, err := pyexchange.ExportLegacy(in, adapters.ReportCopy(&copied))
					require.NoError(t, err)
					dl, del = &mt.DLTensor, func() { cdlpack.DeleteLegacy(mt) }
				} else {
					mt, err := pyexchange.ExportVersioned(in, adapters.ReportCopy(&copied))
					require.NoError(t, err)
					dl, flags, del = &mt.DLTensor, mt.Flags, func() { cdlpack.DeleteVersioned(mt) }
					assert.Equal(t, core.Version, mt.Version)
				}
				assert.Equal(t, wantCopy, copied, "copied")
				assert.Equal(t, live+1, pyexchange.LiveExports())
				shape, strides, vals := exported(dl)
				assert.Equal(t, in.Shape(), append([]int64{}, shape...), "shape")
				assert.Equal(t, cOrder(t, in), append([]float64{}, vals...), "elements")
				assert.NotNil(t, dl.Data, "data is never NULL, even when empty (PyTorch 1.13)")
				assert.Zero(t, dl.ByteOffset, "byte_offset is folded into data")
				for i, s := range strides {
					assert.GreaterOrEqual(t, s, int64(0), "stride %d of %v", i, strides)
				}
				if in.Len() > 0 {
					assert.Equal(t, wantCopy, dl.Data != in.Data(), "data pointer identity")
				}
				if !legacy {
					assert.Equal(t, wantCopy, flags&core.FlagIsCopied != 0, "IS_COPIED")
					assert.Equal(t, in.ReadOnly() && !wantCopy, flags&core.FlagReadOnly != 0, "READ_ONLY")
				}
				// ZeroCopyOnly: a copy is refused, a share is the same share
				var err error
				if legacy {
					var mt *core.DLManagedTensor
					mt, err = pyexchange.ExportLegacy(in, adapters.ZeroCopyOnly())
					cdlpack.DeleteLegacy(mt)
				} else {
					var mt *core.DLManagedTensorVersioned
					mt, err = pyexchange.ExportVersioned(in, adapters.ZeroCopyOnly())
					cdlpack.DeleteVersioned(mt)
				}
				if wantCopy {
					require.ErrorIs(t, err, adapters.ErrCopyRequired)
					assert.Contains(t, err.Error(), "pyexchange: export")
				} else {
					require.NoError(t, err)
				}
				del()
				assert.Equal(t, live, pyexchange.LiveExports())
			})
		}
	}
}

func TestExportAlwaysCopy(t *testing.T) {
	in := iota64(2, 3)
	var copied bool
	mt, err := pyexchange.ExportVersioned(in, adapters.AlwaysCopy(), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	defer cdlpack.DeleteVersioned(mt)
	assert.True(t, copied)
	assert.NotEqual(t, in.Data(), mt.DLTensor.Data)
	assert.Equal(t, core.FlagIsCopied, mt.Flags)
	_, _, vals := exported(&mt.DLTensor)
	assert.Equal(t, cOrder(t, in), vals)
}

// A tensor that is itself a copy (FlagIsCopied) but is shared with the consumer is not a copy
// the consumer owns alone: the flag must not travel.
func TestExportSharedCopyClearsIsCopied(t *testing.T) {
	in, err := memory.Contiguous(iota64(4))
	require.NoError(t, err)
	require.NotZero(t, in.Flags()&core.FlagIsCopied)
	mt, err := pyexchange.ExportVersioned(in)
	require.NoError(t, err)
	defer cdlpack.DeleteVersioned(mt)
	assert.Equal(t, in.Data(), mt.DLTensor.Data)
	assert.Zero(t, mt.Flags&core.FlagIsCopied)
}

func TestExportRefusals(t *testing.T) {
	_, err := pyexchange.ExportVersioned(nil)
	require.ErrorIs(t, err, core.ErrNil)
	_, err = pyexchange.ExportLegacy(nil)
	require.ErrorIs(t, err, core.ErrNil)
	r := iota64(3)
	r.Release()
	_, err = pyexchange.ExportVersioned(r)
	require.ErrorIs(t, err, core.ErrReleased)
	_, err = pyexchange.ExportLegacy(r)
	require.ErrorIs(t, err, core.ErrReleased)
}

// An export that decides to copy device memory, which the CPU cannot copy, fails after the
// decision: the caller's ReportCopy flag is left as it was, whatever was in it.
func TestExportFailedCopyLeavesReport(t *testing.T) {
	buf := make([]float64, 4) // stands in for device memory: never touched
	dev, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float64, Shape: []int64{4}}, buf)
	require.NoError(t, err)
	reversed, err := dev.Reverse(0) // negative strides: never exported as they are
	require.NoError(t, err)
	readOnly, err := dev.AsReadOnly()
	require.NoError(t, err)
	export := map[string]func(*core.Tensor, ...adapters.Option) error{
		"versioned": func(x *core.Tensor, o ...adapters.Option) error {
			_, err := pyexchange.ExportVersioned(x, o...)
			return err
		},
		"legacy": func(x *core.Tensor, o ...adapters.Option) error {
			_, err := pyexchange.ExportLegacy(x, o...)
			return err
		},
	}
	for _, c := range []struct {
		name   string
		in     *core.Tensor
		policy adapters.Option
	}{
		{"negative strides", reversed, nil},
		{"read-only", readOnly, nil},
		{"AlwaysCopy", dev, adapters.AlwaysCopy()},
	} {
		for kind, f := range export {
			for _, sentinel := range []bool{false, true} {
				copied := sentinel
				require.ErrorIs(t, f(c.in, c.policy, adapters.ReportCopy(&copied)), core.ErrNotHost, "%s, %s", c.name, kind)
				assert.Equal(t, sentinel, copied, "%s, %s: ReportCopy was set by an export that failed", c.name, kind)
			}
		}
	}
}

// The export keeps Go memory valid and in place after every Go reference to it is gone.
func TestExportOutlivesProducer(t *testing.T) {
	live := pyexchange.LiveExports()
	mt := func() *core.DLManagedTensorVersioned {
		in := iota64(64)
		h, err := pyexchange.NewHandle(in)
		require.NoError(t, err)
		in.Release()
		src, err := pyexchange.Lookup(h)
		require.NoError(t, err)
		mt, err := pyexchange.ExportVersioned(src)
		require.NoError(t, err)
		require.NoError(t, pyexchange.Release(h))
		return mt
	}()
	for range 3 {
		runtime.GC()
		junk := make([]float64, 1<<16)
		for i := range junk {
			junk[i] = -1
		}
		runtime.KeepAlive(junk)
	}
	_, _, vals := exported(&mt.DLTensor)
	for i, v := range vals {
		require.Equal(t, float64(i), v)
	}
	cdlpack.DeleteVersioned(mt)
	assert.Equal(t, live, pyexchange.LiveExports())
}

func TestHandles(t *testing.T) {
	base := pyexchange.LiveHandles()
	in := iota64(3)
	h, err := pyexchange.NewHandle(in)
	require.NoError(t, err)
	assert.NotZero(t, h)
	assert.Equal(t, base+1, pyexchange.LiveHandles())
	got, err := pyexchange.Lookup(h)
	require.NoError(t, err)
	assert.Equal(t, in.Data(), got.Data())
	in.Release() // the handle holds a view of its own
	assert.False(t, got.Released())

	h2, err := pyexchange.NewHandle(in)
	require.ErrorIs(t, err, core.ErrReleased, "a released tensor gets no handle")
	assert.Zero(t, h2)
	_, err = pyexchange.NewHandle(nil)
	require.ErrorIs(t, err, core.ErrNil)

	require.NoError(t, pyexchange.Release(h))
	assert.True(t, got.Released())
	assert.Equal(t, base, pyexchange.LiveHandles())
	for _, bad := range []pyexchange.Handle{h, 0, 1 << 60} {
		_, err = pyexchange.Lookup(bad)
		require.ErrorIs(t, err, pyexchange.ErrHandle)
		require.ErrorIs(t, pyexchange.Release(bad), pyexchange.ErrHandle)
	}
}

// Foreign memory exported and held by a consumer stays valid after every Go holder let go, and
// is released once the consumer calls the deleter.
func TestExportForeignLifetime(t *testing.T) {
	foreign := leakcheck.Settle()
	buf := []float64{1, 2, 3}
	released := false
	in, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.CPUDevice,
		DType: core.Float64, Shape: []int64{3}}, func() { released = true })
	require.NoError(t, err)
	mt, err := pyexchange.ExportLegacy(in)
	require.NoError(t, err)
	in.Release()
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	assert.False(t, released, "released under a live export")
	cdlpack.DeleteLegacy(mt)
	eventually(t, func() bool { return released && core.LiveForeign() == foreign }, "foreign memory never released")
	runtime.KeepAlive(buf)
}

// The copy an export makes (of a read-only tensor, of negative strides, or asked for with
// AlwaysCopy) belongs to that export alone: it is released exactly once, when the consumer calls
// the deleter, not later by the garbage collector, and never while the export lives. Mapped
// memory (memory.NewUninit) makes the copy foreign memory that core.LiveForeign counts.
func TestExportCopyReleasedByDeleter(t *testing.T) {
	prev := memory.SetAllocation(memory.Allocation{MappedMin: 1, CacheBytes: 0})
	defer memory.SetAllocation(prev)
	src := iota64(64, 8)
	ro, err := src.AsReadOnly()
	require.NoError(t, err)
	rev, err := src.Reverse(0)
	require.NoError(t, err)
	for _, c := range []struct {
		name   string
		in     *core.Tensor
		legacy bool
		opts   []adapters.Option
	}{
		{"read-only versioned", ro, false, nil},
		{"read-only legacy", ro, true, nil},
		{"reversed versioned", rev, false, nil},
		{"always-copy legacy", src, true, []adapters.Option{adapters.AlwaysCopy()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := cOrder(t, c.in) // a mapped copy too, that Settle lets the collector take
			export := func() (*core.DLTensor, func()) {
				if c.legacy {
					m, err := pyexchange.ExportLegacy(c.in, c.opts...)
					require.NoError(t, err)
					return &m.DLTensor, func() { cdlpack.DeleteLegacy(m) }
				}
				m, err := pyexchange.ExportVersioned(c.in, c.opts...)
				require.NoError(t, err)
				require.Equal(t, core.FlagIsCopied, m.Flags)
				return &m.DLTensor, func() { cdlpack.DeleteVersioned(m) }
			}
			foreign := leakcheck.Settle()
			// at once: the deleter releases the copy, not a later collection
			dl, del := export()
			require.NotEqual(t, src.Data(), dl.Data, "a copy")
			assert.Equal(t, foreign+1, core.LiveForeign(), "one mapped copy")
			del()
			assert.Equal(t, foreign, core.LiveForeign(), "the copy outlived its export's deleter")
			// and never before: collections while the export lives leave it alone
			dl, del = export()
			assert.Equal(t, foreign+1, leakcheck.Settle(), "the copy released under its export")
			_, _, vals := exported(dl)
			assert.Equal(t, want, vals)
			del()
			assert.Equal(t, foreign, core.LiveForeign(), "the copy outlived its export's deleter")
			assert.Equal(t, foreign, leakcheck.Settle(), "released exactly once")
		})
	}
}

// Without a Python interpreter attached, imports go straight to core/cdlpack.
func TestImportWithoutPython(t *testing.T) {
	live, foreign := pyexchange.LiveExports(), core.LiveForeign()
	in := iota64(2, 3)
	mt, err := pyexchange.ExportVersioned(in)
	require.NoError(t, err)
	back, err := pyexchange.ImportVersioned(mt)
	require.NoError(t, err)
	assert.Equal(t, in.Data(), back.Data())
	assert.Equal(t, cOrder(t, in), cOrder(t, back))
	back.Release()
	eventually(t, func() bool { return pyexchange.LiveExports() == live && core.LiveForeign() == foreign },
		"import never released the export")

	lm, err := pyexchange.ExportLegacy(in)
	require.NoError(t, err)
	lb, err := pyexchange.ImportLegacy(lm)
	require.NoError(t, err)
	assert.Equal(t, in.Data(), lb.Data())
	lb.Release()
	eventually(t, func() bool { return pyexchange.LiveExports() == live }, "legacy import never released")

	_, err = pyexchange.ImportVersioned(nil)
	require.ErrorIs(t, err, core.ErrNil)
	_, err = pyexchange.ImportLegacy(nil)
	require.ErrorIs(t, err, core.ErrNil)

	// a major version this package does not speak: refused, and the deleter still runs
	bad, err := pyexchange.ExportVersioned(in)
	require.NoError(t, err)
	bad.Version.Major = 2
	_, err = pyexchange.ImportVersioned(bad)
	require.ErrorIs(t, err, core.ErrVersion)
	assert.Contains(t, err.Error(), "pyexchange: ")
	assert.Equal(t, live, pyexchange.LiveExports(), "the refused tensor's deleter ran")
}

func allDTypes() []core.DLDataType {
	return []core.DLDataType{core.Bool, core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8,
		core.Uint16, core.Uint32, core.Uint64, core.Float16, core.BFloat16, core.Float32,
		core.Float64, core.Complex64, core.Complex128}
}

// The Go half of the exchange, Go to consumer to Go, through the conformance kit: a versioned
// consumer shares everything but negative strides.
func TestConformanceVersioned(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{
		Name:   "pyexchange-versioned",
		DTypes: allDTypes(),
		RoundTrip: func(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
			mt, err := pyexchange.ExportVersioned(x, opts...)
			if err != nil {
				return nil, err
			}
			return pyexchange.ImportVersioned(mt)
		},
		Shareable: func(x *core.Tensor) (bool, string) { return pyexchange.Shareable(x, false) },
	})
}

// A legacy consumer also gets a copy of read-only tensors.
func TestConformanceLegacy(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{
		Name:   "pyexchange-legacy",
		DTypes: []core.DLDataType{core.Float32, core.Int64, core.Complex128},
		RoundTrip: func(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
			mt, err := pyexchange.ExportLegacy(x, opts...)
			if err != nil {
				return nil, err
			}
			return pyexchange.ImportLegacy(mt)
		},
		Shareable: func(x *core.Tensor) (bool, string) { return pyexchange.Shareable(x, true) },
	})
}

func ExampleShareable() {
	t := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	r, _ := t.Reverse(1)
	ro, _ := t.AsReadOnly()
	for _, c := range []struct {
		name   string
		t      *core.Tensor
		legacy bool
	}{{"c-order", t, true}, {"reversed", r, false}, {"read-only, legacy", ro, true}, {"read-only, versioned", ro, false}} {
		if ok, why := pyexchange.Shareable(c.t, c.legacy); ok {
			fmt.Printf("%s: shared\n", c.name)
		} else {
			fmt.Printf("%s: copied, %s\n", c.name, why)
		}
	}
	// Output:
	// c-order: shared
	// reversed: copied, strides [3 -1] are negative
	// read-only, legacy: copied, the tensor is read-only and a legacy capsule cannot say so
	// read-only, versioned: copied, the tensor is read-only and consumers such as PyTorch ignore DLPack's READ_ONLY flag
}
