package gpu

import (
	"fmt"
	"math/rand"
	"testing"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu/cuda"
	"github.com/dlpack-go/dlpack/internal/copyplan"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file check the copy planning and staging logic for every stride pattern
// on machines without a GPU. In place of the missing device they carry the planned rectangles
// out in host memory (hostMemcpy), over tensors whose descriptors say kDLCUDA but whose memory
// is Go memory. What only a GPU can verify (the driver calls themselves) is in gpu_test.go and
// the device check.

// addr turns an address back into a pointer for the host copy.
func addr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// hostMemcpy is cuda.Memcpy's contract carried out with memmove in host memory, checking the
// arguments the way the driver does.
func hostMemcpy(_ int, c cuda.Copy2D, _ cuda.Stream, async bool) error {
	if async {
		return fmt.Errorf("host copies are synchronous")
	}
	if c.Width <= 0 || c.Height <= 0 || c.Dst == 0 || c.Src == 0 {
		return fmt.Errorf("bad copy %+v", c)
	}
	if c.Height > 1 && (c.DstPitch < c.Width || c.SrcPitch < c.Width) {
		return fmt.Errorf("pitch shorter than width %+v", c)
	}
	// the driver's copies do not promise memmove semantics (cuMemcpy2D: "the memory areas
	// may not overlap"): refuse what Go's copy would silently get right
	dEnd, sEnd := c.Dst+uintptr((c.Height-1)*c.DstPitch+c.Width), c.Src+uintptr((c.Height-1)*c.SrcPitch+c.Width)
	if c.Dst < sEnd && c.Src < dEnd {
		return fmt.Errorf("overlapping source and destination %+v", c)
	}
	for r := int64(0); r < c.Height; r++ {
		d := unsafe.Slice((*byte)(addr(c.Dst+uintptr(r*c.DstPitch))), c.Width)
		s := unsafe.Slice((*byte)(addr(c.Src+uintptr(r*c.SrcPitch))), c.Width)
		copy(d, s)
	}
	return nil
}

// withHostCopies runs f with rectangle copies done in host memory.
func withHostCopies(t *testing.T, f func()) {
	old, oldSync := memcpy, syncLegacy
	syncLegacy = func(int) error { return nil }
	defer func() { syncLegacy = oldSync }()
	var calls int
	memcpy = func(dev int, c cuda.Copy2D, s cuda.Stream, async bool) error {
		calls++
		return hostMemcpy(dev, c, s, async)
	}
	defer func() { memcpy = old }()
	f()
	t.Logf("%d rectangle copies", calls)
}

// arena is Go memory posing as device memory: a tensor over it with device dev.
func arena(t *testing.T, n int64, dev core.DLDevice, fill func(i int64) float32) (*core.Tensor, []float32) {
	buf := make([]float32, n)
	for i := range buf {
		buf[i] = fill(int64(i))
	}
	tt, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: dev, DType: core.Float32, Shape: []int64{n}}, buf)
	require.NoError(t, err)
	return tt, buf
}

var fakeCUDA = core.DLDevice{DeviceType: core.CUDA}

// layout is a recipe for a strided view: reshape a buffer, then permute, slice and reverse.
type layout struct {
	shape  []int64
	perm   []int
	slices [][3]int64 // per axis: start, stop, step (0 step: whole axis)
	rev    []int
}

func (l layout) apply(base *core.Tensor) (*core.Tensor, error) {
	v, err := base.Reshape(l.shape...)
	if err != nil {
		return nil, err
	}
	if l.perm != nil {
		if v, err = v.Permute(l.perm...); err != nil {
			return nil, err
		}
	}
	for ax, s := range l.slices {
		if s[2] != 0 {
			if v, err = v.Slice(ax, s[0], s[1], s[2]); err != nil {
				return nil, err
			}
		}
	}
	for _, ax := range l.rev {
		if v, err = v.Reverse(ax); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (l layout) size() int64 {
	n := int64(1)
	for _, d := range l.shape {
		n *= d
	}
	return n
}

// randomLayout draws a layout whose final shape is want (a random permutation of a bigger
// buffer, sliced with random steps, some axes reversed).
func randomLayout(r *rand.Rand, want []int64) layout {
	nd := len(want)
	perm := r.Perm(nd)
	l := layout{shape: make([]int64, nd), perm: perm, slices: make([][3]int64, nd)}
	// base axis perm[i] becomes view axis i
	for i := 0; i < nd; i++ {
		n := want[i]
		step := int64(1 + r.Intn(3))
		if r.Intn(4) == 0 {
			step = -step
		}
		start := int64(r.Intn(2))
		var base int64
		if n == 0 {
			base = start + 1
			l.slices[i] = [3]int64{start, start, 1}
		} else if step > 0 {
			base = start + (n-1)*step + 1 + int64(r.Intn(2))
			l.slices[i] = [3]int64{start, start + (n-1)*step + 1, step}
		} else {
			base = start + (n-1)*(-step) + 1
			hi := base - 1 - start
			l.slices[i] = [3]int64{hi, hi + (n-1)*step - 1, step}
			if hi+(n-1)*step-1 < 0 {
				l.slices[i][1] = core.Begin
			}
		}
		l.shape[perm[i]] = base
	}
	if r.Intn(3) == 0 && nd > 0 {
		l.rev = []int{r.Intn(nd)}
	}
	return l
}

func randomShape(r *rand.Rand) []int64 {
	nd := r.Intn(5)
	s := make([]int64, nd)
	for i := range s {
		s[i] = int64(r.Intn(5))
		if r.Intn(8) != 0 && s[i] == 0 {
			s[i] = 1 + int64(r.Intn(4))
		}
	}
	return s
}

// mirror is the same view over the same memory, but on the host, to compute expected values.
func mirror(t *testing.T, l layout, buf []float32) *core.Tensor {
	h, err := core.FromSlice(buf, int64(len(buf)))
	require.NoError(t, err)
	v, err := l.apply(h)
	require.NoError(t, err)
	return v
}

func values(t *testing.T, v *core.Tensor) []float32 {
	c, err := memory.Contiguous(v)
	require.NoError(t, err)
	d, err := core.Elements[float32](c)
	require.NoError(t, err)
	return d
}

func TestCopyPlansAllLayouts(t *testing.T) {
	for _, slack := range []int64{spanSlack, 0} {
		t.Run(fmt.Sprintf("slack=%d", slack), func(t *testing.T) {
			old := spanSlack
			spanSlack = slack
			defer func() { spanSlack = old }()
			copyAllLayouts(t)
		})
	}
}

func copyAllLayouts(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	withHostCopies(t, func() {
		for iter := 0; iter < 400; iter++ {
			shape := randomShape(r)
			ls, ld := randomLayout(r, shape), randomLayout(r, shape)
			name := fmt.Sprintf("%d:%v", iter, shape)
			// device -> host
			srcBase, srcBuf := arena(t, ls.size(), fakeCUDA, func(i int64) float32 { return float32(i) + 0.5 })
			src, err := ls.apply(srcBase)
			require.NoError(t, err, name)
			want := values(t, mirror(t, ls, srcBuf))
			hostDst, err := core.New(core.Float32, shape...)
			require.NoError(t, err)
			require.NoError(t, Copy(hostDst, src), name)
			assert.Equal(t, want, values(t, hostDst), "%s D2H src strides %v", name, src.Strides())

			// host -> device, into a strided destination: only its elements change
			dstBase, dstBuf := arena(t, ld.size(), fakeCUDA, func(int64) float32 { return -1 })
			dst, err := ld.apply(dstBase)
			require.NoError(t, err, name)
			hostSrc := mirror(t, ls, srcBuf)
			require.NoError(t, Copy(dst, hostSrc), name)
			got := mirror(t, ld, dstBuf)
			assert.Equal(t, want, values(t, got), "%s H2D dst strides %v", name, dst.Strides())
			touched := 0
			for _, x := range dstBuf {
				if x != -1 {
					touched++
				}
			}
			assert.Equal(t, int(dst.Len()), touched, "%s H2D wrote outside the destination's elements", name)

			// device -> device
			dstBase2, dstBuf2 := arena(t, ld.size(), fakeCUDA, func(int64) float32 { return -1 })
			dst2, err := ld.apply(dstBase2)
			require.NoError(t, err)
			require.NoError(t, Copy(dst2, src), name)
			assert.Equal(t, want, values(t, mirror(t, ld, dstBuf2)), "%s D2D", name)
		}
	})
}

func TestCopyBroadcastAndSparseSources(t *testing.T) {
	withHostCopies(t, func() {
		// A broadcast device source (stride 0) copies to the host as repeated rows.
		base, _ := arena(t, 4, fakeCUDA, func(i int64) float32 { return float32(i) })
		b, err := base.BroadcastTo(3, 4)
		require.NoError(t, err)
		h, err := core.New(core.Float32, 3, 4)
		require.NoError(t, err)
		require.NoError(t, Copy(h, b))
		assert.Equal(t, []float32{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}, values(t, h))

		// A sparse view (every 1000th element of a large buffer) is gathered element by
		// element rather than through its whole span, and broadcast again on the host.
		big, _ := arena(t, 1<<20, fakeCUDA, func(i int64) float32 { return float32(i) })
		sp, err := big.Slice(0, 0, core.End, 100000)
		require.NoError(t, err)
		sp2, err := sp.Reshape(1, sp.Len())
		require.NoError(t, err)
		bb, err := sp2.BroadcastTo(2, sp.Len())
		require.NoError(t, err)
		h2, err := core.New(core.Float32, bb.Shape()...)
		require.NoError(t, err)
		require.NoError(t, Copy(h2, bb))
		got := values(t, h2)
		for i := int64(0); i < sp.Len(); i++ {
			assert.Equal(t, float32(i*100000), got[i])
			assert.Equal(t, float32(i*100000), got[sp.Len()+i])
		}

		// A broadcast destination on the device is refused.
		_, err = big.BroadcastTo(2, 1<<20)
		require.NoError(t, err)
		dst, err := core.WrapKeep(core.Desc{Data: big.Data(), Device: fakeCUDA, DType: core.Float32, Shape: []int64{2, 3}, Strides: []int64{0, 1}}, big)
		require.NoError(t, err)
		src, err := core.New(core.Float32, 2, 3)
		require.NoError(t, err)
		require.ErrorIs(t, Copy(dst, src), ErrOverlap)
	})
}

func TestCopyCastsThroughHost(t *testing.T) {
	withHostCopies(t, func() {
		d, _ := arena(t, 6, fakeCUDA, func(i int64) float32 { return float32(i) * 1.5 })
		d2, err := d.Reshape(2, 3)
		require.NoError(t, err)
		dt, err := d2.Transpose()
		require.NoError(t, err)
		h, err := core.New(core.Float64, 3, 2)
		require.NoError(t, err)
		require.NoError(t, Copy(h, dt))
		got, err := core.Elements[float64](h)
		require.NoError(t, err)
		assert.Equal(t, []float64{0, 4.5, 1.5, 6, 3, 7.5}, got)

		// float64 host -> float32 device, and device float32 -> device int32 through the host: casts that
		// can change values, so asked for
		back, buf := arena(t, 6, fakeCUDA, func(int64) float32 { return 0 })
		b2, err := back.Reshape(3, 2)
		require.NoError(t, err)
		require.NoError(t, Copy(b2, h, adapters.AllowCast()))
		assert.Equal(t, []float32{0, 4.5, 1.5, 6, 3, 7.5}, buf)
		ibuf := make([]int32, 6)
		it, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&ibuf[0]), Device: fakeCUDA, DType: core.Int32, Shape: []int64{3, 2}}, ibuf)
		require.NoError(t, err)
		require.NoError(t, Copy(it, b2, adapters.AllowCast()))
		assert.Equal(t, []int32{0, 4, 1, 6, 3, 7}, ibuf)
	})
}

func TestPlanRectsShapes(t *testing.T) {
	cases := []struct {
		name           string
		shape, ds, ss  []int64
		ok             bool
		width, height  int64
		rects          int64
		dpitch, spitch int64
	}{
		{"contiguous", []int64{4, 5}, []int64{5, 1}, []int64{5, 1}, true, 80, 1, 1, 80, 80},
		{"padded rows", []int64{4, 5}, []int64{5, 1}, []int64{8, 1}, true, 20, 4, 1, 20, 32},
		{"column", []int64{4}, []int64{1}, []int64{7}, true, 4, 4, 1, 4, 28},
		{"3-d outer", []int64{2, 3, 5}, []int64{15, 5, 1}, []int64{40, 8, 1}, true, 20, 3, 2, 20, 32},
		{"both reversed", []int64{3}, []int64{-1}, []int64{-1}, true, 12, 1, 1, 12, 12},
		{"mixed signs", []int64{3}, []int64{1}, []int64{-1}, false, 0, 0, 0, 0, 0},
		{"zero stride", []int64{3}, []int64{1}, []int64{0}, false, 0, 0, 0, 0, 0},
		{"empty", []int64{3, 0}, []int64{1, 1}, []int64{1, 1}, true, 4, 0, 0, 0, 0},
		{"scalar", []int64{}, []int64{}, []int64{}, true, 4, 1, 1, 4, 4},
		{"overlapping source rows", []int64{3, 4}, []int64{4, 1}, []int64{1, 1}, false, 0, 0, 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, ok := planRects(c.shape, c.ds, c.ss, 4)
			require.Equal(t, c.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, c.width, p.width, "width")
			assert.Equal(t, c.height, p.height, "height")
			assert.Equal(t, c.rects, p.rects(), "rects")
			if p.height > 0 {
				assert.Equal(t, c.dpitch, p.dpitch, "dpitch")
				assert.Equal(t, c.spitch, p.spitch, "spitch")
			}
		})
	}
}

func TestPlanElements(t *testing.T) {
	// overlapping source rows: no rectangles of whole rows, but rows of single elements
	p, ok := planElements([]int64{3, 4}, []int64{4, 1}, []int64{1, 1}, 4)
	require.True(t, ok)
	assert.Equal(t, [4]int64{4, 4, 4, 4}, [4]int64{p.width, p.height, p.dpitch, p.spitch})
	assert.Equal(t, int64(3), p.rects())
	_, ok = planElements([]int64{3}, []int64{1}, []int64{-1}, 4)
	assert.False(t, ok, "mixed signs")
	_, ok = planElements([]int64{3}, []int64{1}, []int64{0}, 4)
	assert.False(t, ok, "zero stride")
}

func TestLayoutHelpers(t *testing.T) {
	assert.True(t, dense([]int64{2, 3}, []int64{3, 1}))
	assert.True(t, dense([]int64{2, 3}, []int64{1, 2}))
	assert.True(t, dense([]int64{2, 3}, []int64{-3, 1}))
	assert.True(t, dense([]int64{2, 1, 3}, []int64{3, 99, 1}))
	assert.True(t, dense([]int64{2, 0}, []int64{5, 5}))
	assert.False(t, dense([]int64{2, 3}, []int64{4, 1}))
	assert.False(t, dense([]int64{2, 3}, []int64{0, 1}))
	assert.Equal(t, []int64{3, 1}, compactLike([]int64{2, 3}, []int64{8, 2}))
	assert.Equal(t, []int64{1, -2}, compactLike([]int64{2, 3}, []int64{5, -10}))
	// zero strides sort first (they only occur in sources, whose broadcast dims are read once)
	assert.Equal(t, []int64{2, 1, 4}, compactLike([]int64{2, 2, 3}, []int64{0, 0, 1}))
	lo, hi := copyplan.Extent([]int64{2, 3}, []int64{-3, 1})
	assert.Equal(t, [2]int64{-3, 2}, [2]int64{lo, hi})
}

func TestCopyRefusesSelfOverlappingHostDestination(t *testing.T) {
	withHostCopies(t, func() {
		// A host destination whose rows of 4 elements, 5 apart, overlap the next block's (8
		// apart): element offsets 5..8 and 8..11 meet at 8. The device source lines up with it
		// as rectangles, so the copy would go straight into it; it is refused as memory.Copy
		// refuses it.
		src, _ := arena(t, 16, fakeCUDA, func(i int64) float32 { return float32(i) })
		s, err := src.Reshape(2, 2, 4)
		require.NoError(t, err)
		buf := make([]float32, 24)
		dst, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.CPUDevice, DType: core.Float32,
			Shape: []int64{2, 2, 4}, Strides: []int64{5, 8, 1}}, buf)
		require.NoError(t, err)
		require.ErrorIs(t, dst.CheckNoSelfOverlap(), ErrOverlap)
		require.ErrorIs(t, Copy(dst, s), ErrOverlap)
		assert.Equal(t, make([]float32, 24), buf, "nothing written")
		pin, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: Pinned, DType: core.Float32,
			Shape: []int64{2, 2, 4}, Strides: []int64{5, 8, 1}}, buf)
		require.NoError(t, err)
		require.ErrorIs(t, Copy(pin, s), ErrOverlap)
		assert.Equal(t, make([]float32, 24), buf, "nothing written")
	})
}

func TestCopyDeviceToOverlappingDevice(t *testing.T) {
	withHostCopies(t, func() {
		// dst and src are views of one device buffer: rows 1..3 <- rows 0..2, of the first two
		// columns (rectangles), of all columns (one 1-D copy), and reversed. The result is as
		// if src were read whole before dst is written.
		for _, c := range []struct {
			name   string
			cols   int64
			revDst bool
		}{{"rectangles", 2, false}, {"one run", 3, false}, {"reversed", 3, true}, {"reversed rectangles", 2, true}} {
			base, buf := arena(t, 12, fakeCUDA, func(i int64) float32 { return float32(i) })
			want := append([]float32{}, buf...)
			m, err := base.Reshape(4, 3)
			require.NoError(t, err)
			src, err := m.Slice(0, 0, 3, 1)
			require.NoError(t, err)
			src, err = src.Slice(1, 0, c.cols, 1)
			require.NoError(t, err)
			dst, err := m.Slice(0, 1, 4, 1)
			require.NoError(t, err)
			dst, err = dst.Slice(1, 0, c.cols, 1)
			require.NoError(t, err)
			if c.revDst {
				if src, err = src.Reverse(0); err != nil {
					require.NoError(t, err)
				}
				if dst, err = dst.Reverse(0); err != nil {
					require.NoError(t, err)
				}
			}
			require.NoError(t, Copy(dst, src), c.name)
			for r := 3; r >= 1; r-- {
				for k := int64(0); k < c.cols; k++ {
					want[r*3+int(k)] = want[(r-1)*3+int(k)]
				}
			}
			assert.Equal(t, want, buf, c.name)
		}
	})
}

func TestCopyOverlapAcrossDeviceTypesAndSubByte(t *testing.T) {
	withHostCopies(t, func() {
		// A pinned tensor and a CPU view of the same memory: an in-place transpose. memory.Copy
		// looks for overlap only between tensors of one device.
		buf := []float32{0, 1, 2, 3, 4, 5, 6, 7, 8}
		pin, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: Pinned, DType: core.Float32, Shape: []int64{3, 3}}, buf)
		require.NoError(t, err)
		cpu, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.CPUDevice, DType: core.Float32, Shape: []int64{3, 3}, Strides: []int64{1, 3}}, buf)
		require.NoError(t, err)
		require.NoError(t, Copy(pin, cpu))
		assert.Equal(t, []float32{0, 3, 6, 1, 4, 7, 2, 5, 8}, buf)

		// Sub-byte tensors are copied as bytes: shifted by one byte on the device.
		raw := []byte{0x10, 0x32, 0x54, 0x76}
		i4 := core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}
		src, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&raw[0]), Device: fakeCUDA, DType: i4, Shape: []int64{6}}, raw)
		require.NoError(t, err)
		dst, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&raw[1]), Device: fakeCUDA, DType: i4, Shape: []int64{6}}, raw)
		require.NoError(t, err)
		require.NoError(t, Copy(dst, src))
		assert.Equal(t, []byte{0x10, 0x10, 0x32, 0x54}, raw)
	})
}

func TestCopySelfOverlappingSparseSource(t *testing.T) {
	// A sliding-window source (torch.as_strided): rows of 4 elements, 1 apart, so that rows
	// overlap, and blocks far apart, so that its span is much more than its elements: it is
	// gathered by rectangles, not as a whole span.
	old := spanSlack
	spanSlack = 0
	defer func() { spanSlack = old }()
	withHostCopies(t, func() {
		base, buf := arena(t, 1000, fakeCUDA, func(i int64) float32 { return float32(i) })
		src, err := core.WrapKeep(core.Desc{Data: base.Data(), Device: fakeCUDA, DType: core.Float32,
			Shape: []int64{2, 3, 4}, Strides: []int64{900, 1, 1}}, buf)
		require.NoError(t, err)
		want := []float32{0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 900, 901, 902, 903, 901, 902, 903, 904, 902, 903, 904, 905}
		h := core.MustNew(core.Float32, 2, 3, 4)
		require.NoError(t, Copy(h, src))
		assert.Equal(t, want, values(t, h))
		// device to device goes through the host the same way
		dbase, dbuf := arena(t, 24, fakeCUDA, func(int64) float32 { return -1 })
		d, err := dbase.Reshape(2, 3, 4)
		require.NoError(t, err)
		d, err = d.Permute(2, 1, 0)
		require.NoError(t, err)
		sp, err := src.Permute(2, 1, 0)
		require.NoError(t, err)
		require.NoError(t, Copy(d, sp))
		assert.Equal(t, want, dbuf)
	})
}

// TestCopyNeverGuesses: a copy between dtypes follows package adapters' cast rule.
func TestCopyNeverGuesses(t *testing.T) {
	src := core.MustFromSlice([]float64{0.1, 2})
	dst := core.MustNew(core.Float32, 2)
	err := Copy(dst, src)
	require.ErrorIs(t, err, adapters.ErrCast)
	assert.ErrorContains(t, err, "float64")
	assert.Equal(t, []float32{0, 0}, elems[float32](t, dst), "nothing written")
	require.NoError(t, Copy(dst, src, adapters.AllowCast()))
	assert.Equal(t, []float32{0.1, 2}, elems[float32](t, dst))

	wide := core.MustNew(core.Float64, 2)
	require.NoError(t, Copy(wide, core.MustFromSlice([]float32{0.5, -3})), "float32 → float64 keeps every value")
	assert.Equal(t, []float64{0.5, -3}, elems[float64](t, wide))
}

func elems[T core.Element](t *testing.T, x *core.Tensor) []T {
	t.Helper()
	e, err := core.Elements[T](x)
	require.NoError(t, err)
	return e
}
