package cuda

import (
	"errors"
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireGPU skips t, with the reason, where CUDA cannot be used; with DLPACK_REQUIRE_GPU=1 in
// the environment (the device check sets it) it fails instead, so that a GPU test never passes
// by skipping on a machine that should have run it.
func requireGPU(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		require.ErrorIs(t, err, ErrNoDevice)
		if os.Getenv("DLPACK_REQUIRE_GPU") == "1" {
			t.Fatalf("DLPACK_REQUIRE_GPU=1 but %v", err)
		}
		t.Skipf("no CUDA device: %v", err)
	}
}

func TestNoDeviceErrors(t *testing.T) {
	if Available() == nil {
		t.Skip("a CUDA device is present: the no-device paths cannot be observed here")
	}
	// Every entry point answers with the same clear ErrNoDevice error, and nothing panics.
	_, err := DeviceCount()
	require.ErrorIs(t, err, ErrNoDevice)
	assert.Regexp(t, `^cuda: (no CUDA driver|cuInit|cuDeviceGetCount|the driver reports 0 devices)`, err.Error(), "the cause first")
	calls := map[string]func() error{
		"DriverVersion":   func() error { _, err := DriverVersion(); return err },
		"DeviceName":      func() error { _, err := DeviceName(0); return err },
		"TotalMem":        func() error { _, err := TotalMem(0); return err },
		"MemAlloc":        func() error { _, err := MemAlloc(0, 16); return err },
		"MemFree":         func() error { return MemFree(0, 0x1000) },
		"MemAllocHost":    func() error { _, err := MemAllocHost(16); return err },
		"MemAllocManaged": func() error { _, err := MemAllocManaged(0, 16); return err },
		"NewStream":       func() error { _, err := NewStream(0, StreamNonBlocking); return err },
		"StreamSync":      func() error { return StreamSynchronize(0, StreamLegacy) },
		"NewEvent":        func() error { _, err := NewEvent(0, EventDefault); return err },
		"Pointer":         func() error { _, err := Pointer(0x1000); return err },
		"Synchronize":     func() error { return Synchronize(0) },
		"Memset":          func() error { return Memset(0, 0x1000, 0, 16, StreamLegacy, false) },
		"Memcpy": func() error {
			return Memcpy(0, Copy2D{Dst: 0x1000, DstKind: Device, Src: 0x2000, SrcKind: Device, Width: 8, Height: 1}, StreamLegacy, false)
		},
	}
	for name, f := range calls {
		t.Run(name, func(t *testing.T) {
			err := f()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrNoDevice)
		})
	}
}

func TestErrorFormatting(t *testing.T) {
	e := newError("cuMemAlloc_v2", ErrorOutOfMemory)
	assert.ErrorIs(t, e, ErrCUDA)
	assert.NotErrorIs(t, e, ErrNoDevice)
	assert.Contains(t, e.Error(), "cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)")
	var ce *Error
	require.True(t, errors.As(error(e), &ce))
	assert.Equal(t, ErrorOutOfMemory, ce.Code)

	for _, code := range []Result{ErrorNoDevice, ErrorInvalidDevice} {
		e := newError("cuDeviceGet", code)
		assert.ErrorIs(t, e, ErrNoDevice, "code %d", code)
		assert.ErrorIs(t, e, ErrCUDA)
	}
	assert.Contains(t, newError("cuX", Result(12345)).Error(), "CUresult(12345)")
	assert.NoError(t, check("cuX", Success))
}

func TestCopyValidation(t *testing.T) {
	cases := []struct {
		name string
		c    Copy2D
	}{
		{"negative width", Copy2D{Dst: 1, Src: 1, DstKind: Device, SrcKind: Host, Width: -1, Height: 1}},
		{"negative height", Copy2D{Dst: 1, Src: 1, DstKind: Device, SrcKind: Host, Width: 1, Height: -1}},
		{"null dst", Copy2D{Src: 1, DstKind: Device, SrcKind: Host, Width: 4, Height: 1}},
		{"short pitch", Copy2D{Dst: 1, Src: 1, DstKind: Device, SrcKind: Host, Width: 8, Height: 2, DstPitch: 4, SrcPitch: 8}},
		{"bad kind", Copy2D{Dst: 1, Src: 1, DstKind: 9, SrcKind: Host, Width: 8, Height: 1}},
		{"host to host", Copy2D{Dst: 1, Src: 1, DstKind: Host, SrcKind: Host, Width: 8, Height: 1}},
		// sizes whose product wraps around int64 (2^40 rows of 2^30 bytes: 0 bytes once wrapped)
		{"rows overflow", Copy2D{Dst: 1 << 20, Src: 1 << 20, DstKind: Device, SrcKind: Device, Width: 1 << 30, Height: 1 << 40, DstPitch: 1 << 30, SrcPitch: 1 << 30}},
		{"pitch overflow", Copy2D{Dst: 1 << 20, Src: 1 << 20, DstKind: Device, SrcKind: Device, Width: 8, Height: 3, DstPitch: 1 << 62, SrcPitch: 8}},
		{"wraps the address space", Copy2D{Dst: ^uintptr(0) - 15, Src: 1 << 20, DstKind: Device, SrcKind: Host, Width: 32, Height: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Memcpy(0, c.c, StreamLegacy, false)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrArgument)
		})
	}
	// Empty copies are no-ops, even without a driver.
	assert.NoError(t, Memcpy(0, Copy2D{DstKind: Device, SrcKind: Host, Width: 0, Height: 3}, StreamLegacy, false))
	assert.Equal(t, "device", Device.String())
	assert.Equal(t, "host", Host.String())
	assert.Equal(t, "unified", Unified.String())
	assert.Equal(t, "Kind(7)", Kind(7).String())
	assert.Equal(t, uintptr(128), unsafe.Sizeof(memcpy2D{}), "CUDA_MEMCPY2D is 128 bytes")
}

func TestArgumentErrors(t *testing.T) {
	_, err := MemAlloc(0, -1)
	assert.ErrorIs(t, err, ErrArgument)
	_, err = MemAlloc(0, 0)
	assert.ErrorIs(t, err, ErrArgument)
	_, err = MemAllocHost(-5)
	assert.ErrorIs(t, err, ErrArgument)
	_, err = MemAllocManaged(0, 0)
	assert.ErrorIs(t, err, ErrArgument)
	assert.ErrorIs(t, DestroyStream(0, StreamLegacy), ErrArgument)
	assert.ErrorIs(t, DestroyStream(0, 0), ErrArgument)
}
