package memory_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// TestKernelErrorMessages provokes the refusals of the copy and cast kernels and holds each message to the
// module's rule: what was wrong first, each package prefix once, errors.Is still matching.
func TestKernelErrorMessages(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	released := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	released.Release()
	ro, err := x.AsReadOnly()
	require.NoError(t, err)
	buf := make([]float32, 6)
	dev, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float32, Shape: []int64{2, 3}}, nil)
	require.NoError(t, err)
	i4 := core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}
	fp8 := core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}
	bc, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.CPUDevice, DType: core.Float32,
		Shape: []int64{2, 3}, Strides: []int64{0, 1}}, nil)
	require.NoError(t, err)
	cases := []errstest.Case{
		{Name: "released source", Want: core.ErrReleased, Err: func() error { return memory.Copy(core.MustNew(core.Float32, 2, 3), released) }},
		{Name: "released destination", Want: core.ErrReleased, Err: func() error { return memory.Copy(released, x) }},
		{Name: "device source", Want: core.ErrNotHost, Err: func() error { return memory.Copy(core.MustNew(core.Float32, 2, 3), dev) }},
		{Name: "device destination", Want: core.ErrNotHost, Err: func() error { return memory.Copy(dev, x) }},
		{Name: "read-only destination", Want: core.ErrReadOnly, Err: func() error { return memory.Copy(ro, x) }},
		{Name: "shapes differ", Want: core.ErrShape, Err: func() error { return memory.Copy(core.MustNew(core.Float32, 3, 2), x) }},
		{Name: "sub-byte source", Want: memory.ErrUnsupported, Err: func() error { return memory.Copy(core.MustNew(core.Int8, 4), core.MustNew(i4, 4)) }},
		{Name: "sub-byte cast", Want: memory.ErrUnsupported, Err: func() error { _, err := memory.Cast(x, i4); return err }},
		{Name: "no cast to fp8", Want: memory.ErrUnsupported, Err: func() error { _, err := memory.Cast(x, fp8); return err }},
		{Name: "no cast from fp8", Want: memory.ErrUnsupported, Err: func() error { _, err := memory.Cast(core.MustNew(fp8, 2), core.Float32); return err }},
		{Name: "cast to an unknown dtype", Want: core.ErrDType, Err: func() error {
			_, err := memory.Cast(x, core.DLDataType{Code: 99, Bits: 8, Lanes: 1})
			return err
		}},
		{Name: "clone released", Want: core.ErrReleased, Err: func() error { _, err := memory.Contiguous(released); return err }},
		{Name: "clone device", Want: core.ErrNotHost, Err: func() error { _, err := memory.Clone(dev, memory.FortranOrder); return err }},
		{Name: "overlapping destination", Want: core.ErrOverlap, Err: func() error { return memory.Copy(bc, x) }},
		{Name: "At: index count", Want: core.ErrArgument, Err: func() error { _, err := memory.At(x, 1); return err }},
		{Name: "At: index range", Want: core.ErrArgument, Err: func() error { _, err := memory.At(x, 2, 0); return err }},
		{Name: "SetAt: index count", Want: core.ErrArgument, Err: func() error { return memory.SetAt(x, 1, 0, 0, 0) }},
		{Name: "SetAt: read-only", Want: core.ErrReadOnly, Err: func() error { return memory.SetAt(ro, 1, 0, 0) }},
		{Name: "At: released", Want: core.ErrReleased, Err: func() error { _, err := memory.At(released, 0, 0); return err }},
	}
	errstest.Run(t, `^(memory|core): `, cases)
}
