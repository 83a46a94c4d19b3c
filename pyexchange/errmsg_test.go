package pyexchange

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
)

// TestErrorMessages provokes pyexchange's refusals (unknown handles, nil and released tensors,
// exports that need a copy under ZeroCopyOnly, imports of nil or other-version managed tensors,
// the exchange API's allocator, functions Register refuses, stream arguments) and holds each
// message to the module's rule: what was wrong first, each package prefix once, errors.Is still
// matching the sentinel. These are the messages Python reads in the exceptions they raise.
func TestErrorMessages(t *testing.T) {
	released := core.MustFromSlice([]float32{1, 2})
	released.Release()
	base := core.MustFromSlice([]float32{1, 2, 3})
	readOnly, err := base.AsReadOnly()
	require.NoError(t, err)
	reversed, err := base.Reverse(0)
	require.NoError(t, err)
	f64 := core.DLDataType{Code: core.CodeFloat, Bits: 64, Lanes: 1}
	cpu := core.DLDevice{DeviceType: core.CPU}
	allocate := func(dev core.DLDevice, shape ...int64) func() error {
		return func() error {
			m, err := ExchangeAllocate(f64, dev, shape)
			if err == nil {
				cdlpack.DeleteVersioned(m)
			}
			return err
		}
	}
	register := func(name string, fn any) func() error {
		return func() error { _, err := describeFunc(name, fn, ""); return err }
	}
	twice := fmt.Sprintf("errmsg_twice_%d", len(Functions()))
	require.NoError(t, Register(twice, func() error { return nil }, ""))
	mem := make([]float32, 4)
	onCUDA, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&mem[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float32, Shape: []int64{4}}, mem)
	require.NoError(t, err)
	cases := []errstest.Case{
		{Name: "Lookup of an unknown handle", Want: ErrHandle, Err: func() error { _, err := Lookup(Handle(1 << 60)); return err }},
		{Name: "Release of an unknown handle", Want: ErrHandle, Err: func() error { return Release(Handle(1 << 60)) }},
		{Name: "NewHandle of nil", Want: core.ErrNil, Err: func() error { _, err := NewHandle(nil); return err }},
		{Name: "NewHandle of a released tensor", Want: core.ErrReleased, Err: func() error { _, err := NewHandle(released); return err }},
		{Name: "export of nil", Want: core.ErrNil, Err: func() error { _, err := ExportVersioned(nil); return err }},
		{Name: "export of a released tensor", Want: core.ErrReleased, Err: func() error { _, err := ExportVersioned(released); return err }},
		{Name: "legacy export of a read-only tensor under ZeroCopyOnly", Want: adapters.ErrCopyRequired, Err: func() error {
			_, err := ExportLegacy(readOnly, adapters.ZeroCopyOnly())
			return err
		}},
		{Name: "export of negative strides under ZeroCopyOnly", Want: adapters.ErrCopyRequired, Err: func() error {
			_, err := ExportVersioned(reversed, adapters.ZeroCopyOnly())
			return err
		}},
		{Name: "import of nil", Want: core.ErrNil, Err: func() error { _, err := ImportVersioned(nil); return err }},
		{Name: "legacy import of nil", Want: core.ErrNil, Err: func() error { _, err := ImportLegacy(nil); return err }},
		{Name: "import of another major version", Want: core.ErrVersion, Err: func() error {
			m, err := ExportVersioned(base)
			require.NoError(t, err)
			m.Version.Major = 2
			_, err = ImportVersioned(m)
			return err
		}},
		{Name: "allocate on CUDA", Want: ErrAllocate, Err: allocate(core.DLDevice{DeviceType: core.CUDA}, 2)},
		{Name: "allocate a negative dimension", Want: ErrAllocate, Err: allocate(cpu, 2, -1)},
		{Name: "allocate 65 dimensions", Want: ErrAllocate, Err: allocate(cpu, make([]int64, 65)...)},
		{Name: "allocate 1025 dimensions", Want: ErrAllocate, Err: allocate(cpu, make([]int64, 1025)...)},
		{Name: "register twice", Want: ErrRegister, Err: func() error { return Register(twice, func() error { return nil }, "") }},
		{Name: "register a bad name", Want: ErrRegister, Err: register("_private", func() error { return nil })},
		{Name: "register nil", Want: ErrRegister, Err: register("f", nil)},
		{Name: "register a variadic func", Want: ErrRegister, Err: register("f", func(xs ...int) error { return nil })},
		{Name: "register without an error result", Want: ErrRegister, Err: register("f", func(x *core.Tensor) {})},
		{Name: "register a slice parameter", Want: ErrRegister, Err: register("f", func(xs []float64) error { return nil })},
		{Name: "stream on the CPU", Want: ErrStream, Err: func() error { return syncForConsumer(base, 0, true) }},
		{Name: "stream without a StreamSync", Want: ErrStream, Err: func() error { return syncForConsumer(onCUDA, 7, true) }},
	}
	errstest.Run(t, `^pyexchange: `, cases, ErrHandle, ErrNotAttached, ErrOutOfMemory, ErrArgument, ErrAllocate, ErrRegister, ErrStream)
}
