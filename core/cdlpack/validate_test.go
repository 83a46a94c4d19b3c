//go:build cgo

package cdlpack_test

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack/internal/ctest"
)

// le packs int64 values little-endian, for fuzz seeds.
func le(v ...int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

// FuzzValidateInC holds dlpack_validate.h's C port to core.ValidateDLTensor: on any descriptor
// both accept, or both refuse. (Shape and strides arrays hold at most 64 entries whatever ndim
// says: both must refuse ndim > 64 before reading them. The data address is never dereferenced.)
func FuzzValidateInC(f *testing.F) {
	for _, s := range []struct {
		ndim           int32
		code, bits     uint8
		lanes          uint16
		devType, devID int32
		shape, strides []byte
		noStrides      bool
		off            uint64
		nullData       bool
	}{
		{2, 2, 32, 1, 1, 0, le(2, 3), le(3, 1), false, 0, false},
		{2, 2, 64, 1, 1, 0, le(2, 3), le(1, -2), false, 64, false},
		{0, 0, 8, 1, 1, 0, nil, nil, true, 0, false},
		{3, 2, 16, 1, 2, 1, le(4, 0, 5), le(0, 0, 0), false, 0, true},
		{65, 2, 32, 1, 1, 0, le(1), le(1), false, 0, false},
		{-1, 2, 32, 1, 1, 0, le(1), le(1), false, 0, false},
		{2, 2, 32, 1, 1, 0, le(1<<62, 4), le(1, 1), false, 0, false},
		{1, 2, 32, 1, 1, 0, le(3), le(-1 << 61), false, 0, false},
		{1, 1, 4, 1, 1, 0, le(3), le(1), true, 0, false},
		{2, 17, 4, 1, 1, 0, le(2, 3), le(1, 2), false, 0, false},
		{1, 99, 32, 0, 6, -1, le(3), le(1), false, 0, false},
		{1, 2, 32, 1, 4, 0, le(3), le(1), false, ^uint64(0) - 3, false},
		{1, 2, 32, 1, 1, 0, le(3), le(1), false, ^uint64(0) - 3, false},
		{1, 1, 4, 1, 1, 0, le(3), le(1), false, ^uint64(0) - 0x10000, false},
		{1, 2, 32, 1, 4, 0, le(3), le(-1), false, 0, false},
		{1, 2, 32, 1, 4, 0, le(3), le(-1), false, 8, false},
		{1, 2, 32, 1, 1, 0, le(-9223372036854775808), le(1), false, 0, false},
		{2, 5, 128, 2, 1, 0, le(3, 3), le(-4611686018427387904, 1), false, 0, false},
	} {
		f.Add(s.ndim, s.code, s.bits, s.lanes, s.devType, s.devID, s.shape, s.strides, s.noStrides, s.off, s.nullData)
	}
	f.Fuzz(func(t *testing.T, ndim int32, code, bits uint8, lanes uint16, devType, devID int32,
		shapeB, stridesB []byte, noStrides bool, off uint64, nullData bool) {
		n := int(min(max(ndim, 0), core.MaxNdim))
		arrays := make([]int64, 2*(n+1))
		shape, strides := arrays[:n+1], arrays[n+1:]
		for i := range shape {
			if len(shapeB) >= 8*(i+1) {
				shape[i] = int64(binary.LittleEndian.Uint64(shapeB[8*i:]))
			}
			if len(stridesB) >= 8*(i+1) {
				strides[i] = int64(binary.LittleEndian.Uint64(stridesB[8*i:]))
			}
		}
		dl := &core.DLTensor{Ndim: ndim, Device: core.DLDevice{DeviceType: core.DeviceType(devType), DeviceID: devID},
			Dtype: core.DLDataType{Code: core.DataTypeCode(code), Bits: bits, Lanes: lanes}, ByteOffset: off & 0xFFFFFFFF,
			Shape: &shape[0]}
		if off >= 1<<40 {
			dl.ByteOffset = off // wrap-around cases, kept
		}
		if !noStrides {
			dl.Strides = &strides[0]
		}
		if !nullData {
			addr := uintptr(0x10000)
			dl.Data = *(*unsafe.Pointer)(unsafe.Pointer(&addr)) // never dereferenced, not Go memory
		}
		if ndim == 0 {
			dl.Shape, dl.Strides = nil, nil // NULL arrays for 0-d, as producers send them
		}
		_, goErr := core.ValidateDLTensor(dl)
		cMsg := ctest.Validate(dl)
		require.Equal(t, goErr == nil, cMsg == "", "Go: %v; C: %q", goErr, cMsg)
	})
}

// Packed sub-byte elements are the only ones read: a versioned tensor of int4 that says its
// elements are padded to a byte each is refused by core and by the C port alike, before the
// deleter runs once; the flag means nothing to whole-byte dtypes, which both accept.
func TestPaddedSubByteRefused(t *testing.T) {
	data := make([]byte, 8)
	shape := []int64{8}
	for _, c := range []struct {
		dtype  core.DLDataType
		flags  core.Flags
		refuse bool
	}{
		{core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}, core.FlagIsSubbyteTypePadded, true},
		{core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}, 0, false},
		{core.DLDataType{Code: core.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}, core.FlagIsSubbyteTypePadded | core.FlagReadOnly, true},
		{core.Int8, core.FlagIsSubbyteTypePadded, false},
	} {
		m := &core.DLManagedTensorVersioned{Version: core.Version, Flags: c.flags,
			DLTensor: core.DLTensor{Data: unsafe.Pointer(&data[0]), Device: core.CPUDevice, Ndim: 1,
				Dtype: c.dtype, Shape: &shape[0]}}
		msg := ctest.ValidateVersioned(m)
		calls := 0
		x, err := core.ImportVersioned(m, func() { calls++ })
		if c.refuse {
			require.ErrorIs(t, err, core.ErrSubByte, c.dtype.String())
			require.Contains(t, msg, "padded")
			require.Equal(t, 1, calls, "the deleter runs once on refusal")
			continue
		}
		require.NoError(t, err, c.dtype.String())
		require.Empty(t, msg)
		x.Release()
		require.Equal(t, 1, calls)
	}
}
