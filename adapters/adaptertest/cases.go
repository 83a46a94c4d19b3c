package adaptertest

import (
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/x448/float16"
)

// Case is one generated input: a tensor of some dtype, rank and layout, and a name that says
// which ("float32/3d[2 3 4]/fortran").
type Case struct {
	// Name identifies the case; Run uses it as the subtest name.
	Name string
	// Tensor is the input. Its elements are distinct (except where strides repeat them) and
	// deterministic.
	Tensor *core.Tensor

	// releases counts the calls of the foreign-memory case's release function (core promises
	// exactly one, once the memory is unreachable); nil for the other layouts.
	releases *atomic.Int32
}

// Layouts the kit generates. Each is applied to every dtype and to the ranks it makes sense for.
const (
	layoutC         = "c"          // compact row-major, fresh Go memory
	layoutFortran   = "fortran"    // compact column-major (memory.Clone FortranOrder)
	layoutOffset    = "offset"     // slice of a larger tensor: the first element is not the buffer's
	layoutStep2     = "step2"      // every other element of the last axis
	layoutNegative  = "negative"   // first and last axes reversed (negative strides)
	layoutBroadcast = "broadcast"  // stride 0 along an axis (read-only)
	layoutTranspose = "transposed" // all axes reversed
	layoutPermuted  = "permuted"   // axes rotated
	layoutReadOnly  = "readonly"   // C order, flagged read-only
	layoutForeign   = "foreign"    // core.Wrap over memory with a release function
)

// spec says how to build one case; building is repeatable, so that each check gets a fresh
// tensor that no other check has mutated or released.
type spec struct {
	dtype  core.DLDataType
	shape  []int64
	layout string
}

func (s spec) name() string {
	return fmt.Sprintf("%s/%dd%v/%s", s.dtype, len(s.shape), s.shape, s.layout)
}

// shapes are the ranks the kit covers: 0-d, empty (1-d and 2-d), and 1-d to 5-d with small
// sizes that include dimensions of size 1.
var shapes = [][]int64{
	{},
	{0},
	{3, 0},
	{5},
	{3, 4},
	{2, 3, 4},
	{2, 1, 3, 2},
	{2, 2, 1, 3, 2},
}

func empty(shape []int64) bool {
	for _, d := range shape {
		if d == 0 {
			return true
		}
	}
	return false
}

// layoutsFor returns the layouts that make sense for a shape.
func layoutsFor(shape []int64) []string {
	n := len(shape)
	switch {
	case empty(shape):
		ls := []string{layoutC, layoutReadOnly, layoutForeign}
		if n >= 2 {
			ls = append(ls, layoutFortran, layoutTranspose)
		}
		return ls
	case n == 0:
		return []string{layoutC, layoutOffset, layoutReadOnly, layoutForeign}
	}
	ls := []string{layoutC, layoutOffset, layoutStep2, layoutNegative, layoutBroadcast, layoutReadOnly, layoutForeign}
	if n >= 2 {
		ls = append(ls, layoutFortran, layoutTranspose)
	}
	if n >= 3 {
		ls = append(ls, layoutPermuted)
	}
	return ls
}

func specs(dtypes []core.DLDataType, minNdim, maxNdim int) []spec {
	if maxNdim <= 0 {
		maxNdim = 5
	}
	var out []spec
	for _, dt := range dtypes {
		for _, sh := range shapes {
			if len(sh) < minNdim || len(sh) > maxNdim {
				continue
			}
			for _, l := range layoutsFor(sh) {
				out = append(out, spec{dtype: dt, shape: sh, layout: l})
			}
		}
	}
	return out
}

// Cases returns the inputs the kit generates for the given dtypes and ranks (maxNdim 0 means up
// to 5): every dtype × rank (0-d, empty, 1-d to 5-d) × layout (C and Fortran order, a view at an
// offset, a step-2 slice, negative strides, a zero-stride broadcast, transposed and permuted
// axes, read-only, and foreign memory under core.Wrap). Adapters may reuse them in their own
// tests. Each call builds fresh tensors. It panics if a dtype cannot be allocated, which is a bug
// in the caller's list.
func Cases(dtypes []core.DLDataType, minNdim, maxNdim int) []Case {
	var out []Case
	for _, s := range specs(dtypes, minNdim, maxNdim) {
		out = append(out, s.build())
	}
	return out
}

// build makes the case's tensor.
func (s spec) build() Case {
	c, err := s.tryBuild()
	if err != nil {
		panic(fmt.Sprintf("adaptertest: building case %s: %v", s.name(), err))
	}
	return c
}

func (s spec) tryBuild() (Case, error) {
	c := Case{Name: s.name()}
	sh := s.shape
	n := len(sh)
	var t *core.Tensor
	var err error
	switch s.layout {
	case layoutC:
		t, err = filled(s.dtype, sh)
	case layoutReadOnly:
		if t, err = filled(s.dtype, sh); err == nil {
			t, err = t.AsReadOnly()
		}
	case layoutFortran:
		if t, err = filled(s.dtype, sh); err == nil {
			t, err = memory.Clone(t, memory.FortranOrder)
		}
	case layoutOffset:
		if n == 0 {
			if t, err = filled(s.dtype, []int64{3}); err == nil {
				t, err = t.Index(0, 1)
			}
			break
		}
		b := clone(sh)
		b[0] += 2
		if t, err = filled(s.dtype, b); err == nil {
			t, err = t.Slice(0, 1, 1+sh[0], 1)
		}
	case layoutStep2:
		b := clone(sh)
		b[n-1] *= 2
		if t, err = filled(s.dtype, b); err == nil {
			t, err = t.Slice(n-1, core.Begin, core.End, 2)
		}
	case layoutNegative:
		if t, err = filled(s.dtype, sh); err == nil {
			if t, err = t.Reverse(0); err == nil && n > 1 {
				t, err = t.Reverse(n - 1)
			}
		}
	case layoutBroadcast:
		b := clone(sh)
		ax := 0
		for ax < n-1 && b[ax] == 1 {
			ax++
		}
		b[ax] = 1
		if t, err = filled(s.dtype, b); err == nil {
			t, err = t.BroadcastTo(sh...)
		}
	case layoutTranspose:
		b := clone(sh)
		for i := range b {
			b[i] = sh[n-1-i]
		}
		if t, err = filled(s.dtype, b); err == nil {
			t, err = t.Transpose()
		}
	case layoutPermuted:
		// view axis i is base axis (i+1)%n
		b := make([]int64, n)
		axes := make([]int, n)
		for i := range axes {
			axes[i] = (i + 1) % n
			b[axes[i]] = sh[i]
		}
		if t, err = filled(s.dtype, b); err == nil {
			t, err = t.Permute(axes...)
		}
	case layoutForeign:
		t, c.releases, err = foreign(s.dtype, sh)
	default:
		err = fmt.Errorf("unknown layout %q", s.layout)
	}
	if err != nil {
		return c, err
	}
	c.Tensor = t
	return c, nil
}

func clone(s []int64) []int64 { return append([]int64{}, s...) }

// filled allocates a C-order tensor and gives element k (in C order) the value value(dtype, k).
func filled(dt core.DLDataType, shape []int64) (*core.Tensor, error) {
	t, err := core.New(dt, shape...)
	if err != nil {
		return nil, err
	}
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	fill(b, dt)
	return t, nil
}

// poison is the byte the foreign case's release writes over its memory, so that a read after
// an early release sees garbage rather than the old values.
const poison = 0xA5

// foreign wraps a Go buffer with core.Wrap, as if it came from elsewhere. The release function
// overwrites the memory and counts its calls.
func foreign(dt core.DLDataType, shape []int64) (*core.Tensor, *atomic.Int32, error) {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	size := n * int64(dt.Size())
	words := make([]uint64, (size+7)/8) // 8-byte aligned, like any allocator's memory
	buf := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:size]
	fill(buf, dt)
	releases := new(atomic.Int32)
	d := core.Desc{Device: core.CPUDevice, DType: dt, Shape: shape}
	if size > 0 {
		d.Data = unsafe.Pointer(unsafe.SliceData(words))
	}
	t, err := core.Wrap(d, func() {
		for i := range buf {
			buf[i] = poison
		}
		releases.Add(1)
	})
	return t, releases, err
}

// fill gives every element of a compact buffer of dtype dt a distinct value depending on its
// position k: bools alternate, integers count (with alternating signs, and large magnitudes for
// wide types), floats carry fractions, complex numbers an imaginary part, and float16/bfloat16
// values are exactly representable. Unknown dtypes get a byte pattern.
func fill(b []byte, dt core.DLDataType) {
	size := dt.Size()
	if size == 0 {
		return
	}
	for k := 0; k*size < len(b); k++ {
		putValue(b[k*size:(k+1)*size], dt, k)
	}
}

func putValue(e []byte, dt core.DLDataType, k int) {
	p := unsafe.Pointer(unsafe.SliceData(e))
	sign := int64(1)
	if k%2 == 1 {
		sign = -1
	}
	fk := float64(k)
	switch dt {
	case core.Bool:
		e[0] = byte(k % 2)
	case core.Int8:
		*(*int8)(p) = int8(sign * int64(k%120+1))
	case core.Int16:
		*(*int16)(p) = int16(sign * int64(k*257+1))
	case core.Int32:
		*(*int32)(p) = int32(sign * int64(k*65537+1))
	case core.Int64:
		*(*int64)(p) = sign * (int64(k)<<40 + int64(k) + 1)
	case core.Uint8:
		*(*uint8)(p) = uint8(k%250 + 1)
	case core.Uint16:
		*(*uint16)(p) = uint16(k*257 + 1)
	case core.Uint32:
		*(*uint32)(p) = uint32(k)<<24 + uint32(k) + 1
	case core.Uint64:
		*(*uint64)(p) = uint64(k)<<56 + uint64(k) + 1
	case core.Float16:
		*(*float16.Float16)(p) = float16.Fromfloat32(float32(float64(sign) * (fk*0.5 + 0.25)))
	case core.BFloat16:
		*(*core.BF16)(p) = core.BF16FromFloat32(float32(float64(sign) * (fk*0.5 + 0.25)))
	case core.Float32:
		*(*float32)(p) = float32(float64(sign) * (fk + 0.125))
	case core.Float64:
		*(*float64)(p) = float64(sign) * (fk + 1.0/3)
	case core.Complex64:
		*(*complex64)(p) = complex64(complex(fk+0.5, -fk-0.25))
	case core.Complex128:
		*(*complex128)(p) = complex(fk+0.5, -(fk + math.Pi))
	default:
		for i := range e {
			e[i] = byte(k*31 + i*7 + 1)
		}
	}
}
