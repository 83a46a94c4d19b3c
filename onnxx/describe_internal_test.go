package onnxx

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

// The entries describeValue called before GetTensorElementTypeAndShapeDataReference, kept here
// for BenchmarkDescribeValue's reference path.
const (
	fnGetTensorTypeAndShape         fn = 65
	fnReleaseTensorTypeAndShapeInfo fn = 99
)

// describeValueByInfo is describeValue as it was: the shape through an OrtTensorTypeAndShapeInfo
// made, read and released (five calls), then the data address.
func (a *ortAPI) describeValueByInfo(v uintptr) (core.Desc, error) {
	var tt uintptr
	if err := a.call("reading an output's type and shape", fnGetTensorTypeAndShape, v, uintptr(unsafe.Pointer(&tt))); err != nil {
		return core.Desc{}, err
	}
	defer a.do(fnReleaseTensorTypeAndShapeInfo, tt)
	var et int32
	if err := a.call("reading an output's element type", fnGetTensorElementType, tt, uintptr(unsafe.Pointer(&et))); err != nil {
		return core.Desc{}, err
	}
	dt, err := FromDType(ElementType(et))
	if err != nil {
		return core.Desc{}, err
	}
	dims, _, err := a.shapeOf(tt, false)
	if err != nil {
		return core.Desc{}, err
	}
	var data uintptr
	if err := a.call("reading an output's data address", fnGetTensorMutableData, v, uintptr(unsafe.Pointer(&data))); err != nil {
		return core.Desc{}, err
	}
	return core.Desc{Data: cptr(data), Device: core.CPUDevice, DType: dt, Shape: dims}, nil
}

// valueOver makes an OrtValue over t's memory, released when the test ends, and a stage to
// describe it with.
func valueOver(tb testing.TB, t *core.Tensor) (uintptr, *stage) {
	a, err := loaded()
	require.NoError(tb, err)
	et, err := ToDType(t.DType())
	require.NoError(tb, err)
	st := new(stage)
	st.init(0, 0)
	v, err := a.newValue(st, t, et, a.cpuInfo)
	require.NoError(tb, err)
	tb.Cleanup(func() { a.do(fnReleaseValue, v) })
	return v, st
}

// TestDescribeValue reads values of several ranks, 0-d and empty ones among them, and compares
// what describeValue reads in two calls with the shape, dtype and address the value was made with
// and with what the five calls of the info object read.
func TestDescribeValue(t *testing.T) {
	a, err := loaded()
	require.NoError(t, err)
	for _, shape := range [][]int64{{}, {0}, {3}, {2, 0, 4}, {1, 64}, {2, 3, 4, 5, 6, 7}} {
		for _, dt := range []core.DLDataType{core.Float32, core.Float16, core.Int64, core.Bool} {
			x := core.MustNew(dt, shape...)
			v, st := valueOver(t, x)
			d, err := a.describeValue(st, v)
			require.NoError(t, err)
			require.Equal(t, dt, d.DType)
			require.Equal(t, shape, append([]int64{}, d.Shape...), "%v %s", shape, dt)
			if x.Len() > 0 {
				require.Equal(t, x.Data(), d.Data, "%v %s", shape, dt)
			}
			ref, err := a.describeValueByInfo(v)
			require.NoError(t, err)
			require.Equal(t, ref.DType, d.DType)
			require.Equal(t, ref.Shape, append([]int64{}, d.Shape...))
			tt, err := core.Wrap(d, nil) // the desc is valid as it stands
			require.NoError(t, err)
			require.Equal(t, x.Shape(), tt.Shape())
		}
	}
}

// BenchmarkDescribeValue: reading a [1, 64] float32 value's dtype, shape and address, as a run
// does for every output ORT allocates: GetTensorElementTypeAndShapeDataReference and the data
// address (two calls), beside the info object's five calls and the address.
func BenchmarkDescribeValue(b *testing.B) {
	a, err := loaded()
	require.NoError(b, err)
	v, st := valueOver(b, core.MustNew(core.Float32, 1, 64))
	b.Run("shape-reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.describeValue(st, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("info-object", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.describeValueByInfo(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
