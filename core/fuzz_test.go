package core_test

import (
	"encoding/binary"
	"errors"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

// fakeBase is the data address of fuzzed descriptors. It is never dereferenced, and offsets are
// kept away from the Go heap (see fuzzOffset), so the collector never sees a pointer into it.
const fakeBase = 0x10000

// fuzzOffset keeps small byte offsets under 4 GiB; large ones (2^40 and up) are kept as they are,
// to exercise wrap-around.
func fuzzOffset(off uint64) uint64 {
	if off < 1<<40 {
		return off & 0xFFFFFFFF
	}
	return off
}

// int64s decodes up to n little-endian int64 values from b, zero-padded.
func int64s(b []byte, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		var w [8]byte
		if len(b) > 0 {
			copy(w[:], b)
			if len(b) >= 8 {
				b = b[8:]
			} else {
				b = nil
			}
		}
		out[i] = int64(binary.LittleEndian.Uint64(w[:]))
	}
	return out
}

// fuzzDLTensor builds a DLTensor in Go memory from fuzz input. Shape and strides arrays have at
// most 64 entries whatever ndim says: validation must refuse ndim > 64 before reading them.
func fuzzDLTensor(ndim int32, code, bits uint8, lanes uint16, devType, devID int32,
	shapeB, stridesB []byte, noStrides bool, off uint64, nullData bool) (*core.DLTensor, []int64, []int64) {
	n := int(min(max(ndim, 0), core.MaxNdim))
	shape := int64s(shapeB, n+1)[:n]
	strides := int64s(stridesB, n+1)[:n]
	dl := &core.DLTensor{Device: core.DLDevice{DeviceType: core.DeviceType(devType), DeviceID: devID},
		Ndim: ndim, Dtype: core.DLDataType{Code: core.DataTypeCode(code), Bits: bits, Lanes: lanes},
		ByteOffset: fuzzOffset(off)}
	if !nullData {
		dl.Data = fakeAddr(fakeBase)
	}
	if len(shape) > 0 {
		dl.Shape = &shape[:cap(shape)][0]
		if !noStrides {
			dl.Strides = &strides[:cap(strides)][0]
		}
	}
	if noStrides {
		strides = nil
	}
	return dl, shape, strides
}

func addFuzzSeeds(f *testing.F) {
	le := func(v ...int64) []byte {
		b := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
		}
		return b
	}
	f.Add(int32(2), uint8(2), uint8(32), uint16(1), int32(1), int32(0), le(2, 3), le(3, 1), false, uint64(0), false)
	f.Add(int32(2), uint8(2), uint8(64), uint16(1), int32(1), int32(0), le(2, 3), le(1, -2), false, uint64(64), false)
	f.Add(int32(0), uint8(0), uint8(8), uint16(1), int32(1), int32(0), []byte{}, []byte{}, true, uint64(0), false)
	f.Add(int32(3), uint8(2), uint8(16), uint16(1), int32(2), int32(1), le(4, 0, 5), le(0, 0, 0), false, uint64(0), true)
	f.Add(int32(65), uint8(2), uint8(32), uint16(1), int32(1), int32(0), le(1), le(1), false, uint64(0), false)
	f.Add(int32(-1), uint8(2), uint8(32), uint16(1), int32(1), int32(0), le(1), le(1), false, uint64(0), false)
	f.Add(int32(2), uint8(2), uint8(32), uint16(1), int32(1), int32(0), le(1<<62, 4), le(1, 1), false, uint64(0), false)
	f.Add(int32(1), uint8(2), uint8(32), uint16(1), int32(1), int32(0), le(3), le(-1<<61), false, uint64(0), false)
	f.Add(int32(1), uint8(1), uint8(4), uint16(1), int32(1), int32(0), le(3), le(1), true, uint64(0), false)
	f.Add(int32(1), uint8(99), uint8(32), uint16(0), int32(6), int32(-1), le(3), le(1), false, uint64(0), false)
	f.Add(int32(1), uint8(2), uint8(32), uint16(1), int32(4), int32(0), le(3), le(1), false, ^uint64(0)-3, false)
	f.Add(int32(1), uint8(2), uint8(32), uint16(1), int32(1), int32(0), le(3), le(1), false, ^uint64(0)-3, false)
	// TPU pinned host memory is an address: its byte_offset is folded like the CPU's.
	f.Add(int32(1), uint8(2), uint8(32), uint16(1), int32(core.TPUHost), int32(0), le(3), le(1), false, uint64(46), false)
}

// FuzzValidateDLTensor feeds arbitrary descriptors to ValidateDLTensor: it must not panic, and
// whatever it accepts must describe elements whose byte extent fits in int64 and, on addressable
// devices, in the address space.
func FuzzValidateDLTensor(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, ndim int32, code, bits uint8, lanes uint16, devType, devID int32,
		shapeB, stridesB []byte, noStrides bool, off uint64, nullData bool) {
		dl, shape, strides := fuzzDLTensor(ndim, code, bits, lanes, devType, devID, shapeB, stridesB, noStrides, off, nullData)
		d, err := core.ValidateDLTensor(dl)
		if err != nil {
			require.ErrorIs(t, err, core.ErrInvalid)
			return
		}
		require.GreaterOrEqual(t, ndim, int32(0))
		require.LessOrEqual(t, ndim, int32(core.MaxNdim))
		require.Equal(t, shape, d.Shape)
		require.Len(t, d.Strides, int(ndim))
		if strides != nil {
			require.Equal(t, strides, d.Strides)
		}
		require.NoError(t, d.DType.Validate())
		require.True(t, d.Device.DeviceType.Known())

		n := big.NewInt(1)
		for _, s := range shape {
			require.GreaterOrEqual(t, s, int64(0))
			n.Mul(n, big.NewInt(s))
		}
		require.True(t, n.IsInt64(), "element count %s fits int64", n)
		if n.Sign() == 0 {
			return
		}
		require.NotNil(t, d.Data)
		if d.DType.SubByte() {
			return
		}
		lo, hi := new(big.Int), new(big.Int)
		for i, s := range shape {
			span := new(big.Int).Mul(big.NewInt(s-1), big.NewInt(d.Strides[i]))
			if span.Sign() < 0 {
				lo.Add(lo, span)
			} else {
				hi.Add(hi, span)
			}
		}
		size := big.NewInt(int64(d.DType.Size()))
		blo := new(big.Int).Mul(lo, size)
		bhi := new(big.Int).Add(new(big.Int).Mul(hi, size), size)
		require.True(t, blo.IsInt64() && bhi.IsInt64(), "byte extent [%s, %s) fits int64", blo, bhi)
		switch d.Device.DeviceType {
		case core.CPU, core.CUDA, core.CUDAHost, core.CUDAManaged, core.ROCM, core.ROCMHost, core.OneAPI, core.TPUHost:
			first := new(big.Int).Add(big.NewInt(fakeBase), new(big.Int).SetUint64(dl.ByteOffset))
			require.Equal(t, first.Uint64(), uint64(uintptr(d.Data)), "byte_offset folded into data")
			require.Zero(t, d.ByteOffset)
			require.GreaterOrEqual(t, new(big.Int).Add(first, blo).Sign(), 0, "no element below address 0")
			end := new(big.Int).Add(first, bhi)
			require.True(t, end.Cmp(new(big.Int).Lsh(big.NewInt(1), 64)) <= 0, "no element beyond the address space")
		default:
			require.Equal(t, dl.ByteOffset, d.ByteOffset)
		}
	})
}

// FuzzImportVersioned imports arbitrary managed tensors: whatever the input, the deleter runs
// exactly once (before the error, or on Release).
func FuzzImportVersioned(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, ndim int32, code, bits uint8, lanes uint16, devType, devID int32,
		shapeB, stridesB []byte, noStrides bool, off uint64, nullData bool) {
		dl, _, _ := fuzzDLTensor(ndim, code, bits, lanes, devType, devID, shapeB, stridesB, noStrides, off, nullData)
		m := &core.DLManagedTensorVersioned{Version: core.DLPackVersion{Major: uint32(lanes % 3), Minor: uint32(bits)},
			Flags: core.Flags(code % 8), DLTensor: *dl}
		calls := 0
		x, err := core.ImportVersioned(m, func() { calls++ })
		if err != nil {
			if m.Flags&core.FlagIsSubbyteTypePadded != 0 && dl.Dtype.SubByte() && !errors.Is(err, core.ErrInvalid) {
				// valid DLPack, but a layout no reader here handles
				require.ErrorIs(t, err, core.ErrSubByte)
			} else {
				require.ErrorIs(t, err, core.ErrInvalid)
			}
			require.Nil(t, x)
			require.Equal(t, 1, calls)
			return
		}
		require.Zero(t, calls)
		require.False(t, m.Flags&core.FlagIsSubbyteTypePadded != 0 && dl.Dtype.SubByte(), "padded sub-byte elements are refused")
		require.Equal(t, core.Flags(code%8)&core.FlagReadOnly != 0, x.ReadOnly())
		v, err := x.View()
		require.NoError(t, err)
		x.Release()
		require.Zero(t, calls)
		v.Release()
		v.Release()
		require.Equal(t, 1, calls)
	})
}
