//go:build cgo

package cdlpack_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack/internal/ctest"
)

// TestLayoutMatchesC compares the Go ABI types of package core with C declarations written from
// the DLPack specification, field by field, and both with the sizes the specification gives.
func TestLayoutMatchesC(t *testing.T) {
	var (
		ver core.DLPackVersion
		dev core.DLDevice
		dt  core.DLDataType
		dl  core.DLTensor
		mt  core.DLManagedTensor
		mv  core.DLManagedTensorVersioned
	)
	goLayout := map[string]uintptr{
		"DLPackVersion": unsafe.Sizeof(ver), "DLPackVersion.major": unsafe.Offsetof(ver.Major),
		"DLPackVersion.minor": unsafe.Offsetof(ver.Minor),
		"DLDevice":            unsafe.Sizeof(dev), "DLDevice.device_type": unsafe.Offsetof(dev.DeviceType),
		"DLDevice.device_id": unsafe.Offsetof(dev.DeviceID),
		"DLDataType":         unsafe.Sizeof(dt), "DLDataType.code": unsafe.Offsetof(dt.Code),
		"DLDataType.bits": unsafe.Offsetof(dt.Bits), "DLDataType.lanes": unsafe.Offsetof(dt.Lanes),
		"DLTensor": unsafe.Sizeof(dl), "DLTensor.data": unsafe.Offsetof(dl.Data),
		"DLTensor.device": unsafe.Offsetof(dl.Device), "DLTensor.ndim": unsafe.Offsetof(dl.Ndim),
		"DLTensor.dtype": unsafe.Offsetof(dl.Dtype), "DLTensor.shape": unsafe.Offsetof(dl.Shape),
		"DLTensor.strides": unsafe.Offsetof(dl.Strides), "DLTensor.byte_offset": unsafe.Offsetof(dl.ByteOffset),
		"DLManagedTensor": unsafe.Sizeof(mt), "DLManagedTensor.dl_tensor": unsafe.Offsetof(mt.DLTensor),
		"DLManagedTensor.manager_ctx": unsafe.Offsetof(mt.ManagerCtx),
		"DLManagedTensor.deleter":     unsafe.Offsetof(mt.Deleter),
		"DLManagedTensorVersioned":    unsafe.Sizeof(mv), "DLManagedTensorVersioned.version": unsafe.Offsetof(mv.Version),
		"DLManagedTensorVersioned.manager_ctx": unsafe.Offsetof(mv.ManagerCtx),
		"DLManagedTensorVersioned.deleter":     unsafe.Offsetof(mv.Deleter),
		"DLManagedTensorVersioned.flags":       unsafe.Offsetof(mv.Flags),
		"DLManagedTensorVersioned.dl_tensor":   unsafe.Offsetof(mv.DLTensor),
		"DLDeviceType":                         unsafe.Sizeof(dev.DeviceType),
	}
	c := ctest.CLayout()
	require.Len(t, c, len(goLayout))
	for k, want := range c {
		got, ok := goLayout[k]
		if assert.True(t, ok, "no Go value for %s", k) {
			assert.Equal(t, want, got, "%s: C says %d, Go says %d", k, want, got)
		}
	}
	// The numbers of the specification (64-bit), independent of both declarations.
	spec := map[string]uintptr{
		"DLDevice": 8, "DLDataType": 4, "DLPackVersion": 8,
		"DLTensor": 48, "DLTensor.data": 0, "DLTensor.device": 8, "DLTensor.ndim": 16,
		"DLTensor.dtype": 20, "DLTensor.shape": 24, "DLTensor.strides": 32, "DLTensor.byte_offset": 40,
		"DLManagedTensor": 64, "DLManagedTensor.manager_ctx": 48, "DLManagedTensor.deleter": 56,
		"DLManagedTensorVersioned": 80, "DLManagedTensorVersioned.version": 0,
		"DLManagedTensorVersioned.manager_ctx": 8, "DLManagedTensorVersioned.deleter": 16,
		"DLManagedTensorVersioned.flags": 24, "DLManagedTensorVersioned.dl_tensor": 32,
	}
	for k, want := range spec {
		assert.Equal(t, want, goLayout[k], "Go %s", k)
		assert.Equal(t, want, c[k], "C %s", k)
	}
}

func TestEnumsMatchC(t *testing.T) {
	goDevices := core.DeviceTypes()
	cDevices := ctest.CDeviceTypes()
	require.Len(t, cDevices, 19)
	require.Len(t, goDevices, len(cDevices))
	for i, d := range goDevices {
		assert.Equal(t, cDevices[i], int64(d), "device type %s", d)
	}

	goCodes := core.DataTypeCodes()
	cCodes := ctest.CDataTypeCodes()
	require.Len(t, cCodes, 19)
	require.Len(t, goCodes, len(cCodes))
	for i, c := range goCodes {
		assert.Equal(t, cCodes[i], int64(c), "type code %s", c)
	}
	named := []core.DataTypeCode{core.CodeInt, core.CodeUInt, core.CodeFloat, core.CodeOpaqueHandle,
		core.CodeBfloat, core.CodeComplex, core.CodeBool, core.CodeFloat8E3M4, core.CodeFloat8E4M3,
		core.CodeFloat8E4M3B11FNUZ, core.CodeFloat8E4M3FN, core.CodeFloat8E4M3FNUZ, core.CodeFloat8E5M2,
		core.CodeFloat8E5M2FNUZ, core.CodeFloat8E8M0FNU, core.CodeFloat6E2M3FN, core.CodeFloat6E3M2FN,
		core.CodeFloat4E2M1FN, core.CodeBcomplex}
	for i, c := range named {
		assert.Equal(t, cCodes[i], int64(c), "type code constant %s", c)
	}
	namedDev := []core.DeviceType{core.CPU, core.CUDA, core.CUDAHost, core.OpenCL, core.Vulkan, core.Metal,
		core.VPI, core.ROCM, core.ROCMHost, core.ExtDev, core.CUDAManaged, core.OneAPI, core.WebGPU,
		core.Hexagon, core.MAIA, core.Trn, core.TPU, core.TPUHost, core.Ascend}
	for i, d := range namedDev {
		assert.Equal(t, cDevices[i], int64(d), "device constant %s", d)
	}

	assert.Equal(t, ctest.CFlags(), []uint64{uint64(core.FlagReadOnly), uint64(core.FlagIsCopied),
		uint64(core.FlagIsSubbyteTypePadded)})
}
