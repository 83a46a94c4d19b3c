package core

import (
	"strconv"
	"unsafe"
)

// The types in this file mirror dlpack.h v1.3 byte for byte on 64-bit platforms. They are the
// descriptors that cross the C boundary; Go code normally works with *Tensor instead.

// Version is the DLPack ABI version this package produces and understands.
var Version = DLPackVersion{Major: 1, Minor: 3}

// DLPackVersion is the ABI version carried by a DLManagedTensorVersioned. A consumer must refuse a
// tensor whose Major differs from its own (and still call its deleter); a newer Minor is compatible.
type DLPackVersion struct {
	Major uint32
	Minor uint32
}

// DLDevice says where a tensor's memory lives: the kind of device and its ordinal.
type DLDevice struct {
	DeviceType DeviceType
	DeviceID   int32
}

// DLDataType describes one element: a type code, the bits of one lane, and the number of lanes
// (1 for scalars, more for vector types).
type DLDataType struct {
	Code  DataTypeCode
	Bits  uint8
	Lanes uint16
}

// DLTensor is the plain, unmanaged tensor descriptor (48 bytes). Shape and Strides point at Ndim
// int64 values; Strides count elements, not bytes, and may be nil in tensors from producers older
// than DLPack 1.2 (meaning compact row-major). The first element is at Data + ByteOffset.
type DLTensor struct {
	Data       unsafe.Pointer
	Device     DLDevice
	Ndim       int32
	Dtype      DLDataType
	Shape      *int64
	Strides    *int64
	ByteOffset uint64
}

// DLManagedTensor is the legacy (pre-1.0, unversioned) managed tensor (64 bytes). Deleter is a C
// function pointer, void (*)(DLManagedTensor*), or 0.
type DLManagedTensor struct {
	DLTensor   DLTensor
	ManagerCtx unsafe.Pointer
	Deleter    uintptr
}

// DLManagedTensorVersioned is the managed tensor of DLPack 1.x (80 bytes). Deleter is a C
// function pointer, void (*)(DLManagedTensorVersioned*), or 0. Flags is a bitmask of Flags.
type DLManagedTensorVersioned struct {
	Version    DLPackVersion
	ManagerCtx unsafe.Pointer
	Deleter    uintptr
	Flags      Flags
	DLTensor   DLTensor
}

// Flags are the bits of DLManagedTensorVersioned.Flags.
type Flags uint64

const (
	// FlagReadOnly marks memory the consumer must not write (DLPACK_FLAG_BITMASK_READ_ONLY).
	FlagReadOnly Flags = 1 << 0
	// FlagIsCopied marks a tensor the producer copied for this exchange, so no one else aliases it
	// (DLPACK_FLAG_BITMASK_IS_COPIED).
	FlagIsCopied Flags = 1 << 1
	// FlagIsSubbyteTypePadded marks sub-byte elements stored one per byte instead of packed
	// (DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED). This module reads packed sub-byte elements
	// only: a descriptor of a sub-byte dtype with this flag is refused (ErrSubByte).
	FlagIsSubbyteTypePadded Flags = 1 << 2
)

// DeviceType is DLDeviceType: the kind of device a tensor lives on.
type DeviceType int32

// The device types of dlpack.h v1.3, and those DLPack added after the v1.3 tag without changing
// the ABI (the minor version is still 3): TPU, TPUHost and Ascend.
const (
	CPU         DeviceType = 1  // kDLCPU: host memory.
	CUDA        DeviceType = 2  // kDLCUDA: CUDA device memory.
	CUDAHost    DeviceType = 3  // kDLCUDAHost: pinned host memory from cudaMallocHost.
	OpenCL      DeviceType = 4  // kDLOpenCL: an OpenCL buffer.
	Vulkan      DeviceType = 7  // kDLVulkan: a Vulkan buffer.
	Metal       DeviceType = 8  // kDLMetal: Apple Metal memory.
	VPI         DeviceType = 9  // kDLVPI: Verilog simulator buffer.
	ROCM        DeviceType = 10 // kDLROCM: AMD ROCm device memory.
	ROCMHost    DeviceType = 11 // kDLROCMHost: pinned host memory from hipMallocHost.
	ExtDev      DeviceType = 12 // kDLExtDev: reserved for extension devices.
	CUDAManaged DeviceType = 13 // kDLCUDAManaged: CUDA managed (unified) memory.
	OneAPI      DeviceType = 14 // kDLOneAPI: SYCL/oneAPI unified shared memory.
	WebGPU      DeviceType = 15 // kDLWebGPU: a WebGPU buffer.
	Hexagon     DeviceType = 16 // kDLHexagon: Qualcomm Hexagon DSP memory.
	MAIA        DeviceType = 17 // kDLMAIA: Microsoft MAIA device memory.
	Trn         DeviceType = 18 // kDLTrn: AWS Trainium device memory.
	TPU         DeviceType = 19 // kDLTPU: Google TPU device memory (after v1.3).
	TPUHost     DeviceType = 20 // kDLTPUHost: pinned host memory of a TPU runtime, as JAX exports it (after v1.3).
	Ascend      DeviceType = 21 // kDLAscend: Huawei Ascend NPU device memory (after v1.3).
)

var deviceNames = map[DeviceType]string{
	CPU: "cpu", CUDA: "cuda", CUDAHost: "cuda_host", OpenCL: "opencl", Vulkan: "vulkan",
	Metal: "metal", VPI: "vpi", ROCM: "rocm", ROCMHost: "rocm_host", ExtDev: "ext_dev",
	CUDAManaged: "cuda_managed", OneAPI: "oneapi", WebGPU: "webgpu", Hexagon: "hexagon",
	MAIA: "maia", Trn: "trn", TPU: "tpu", TPUHost: "tpu_host", Ascend: "ascend",
}

// DeviceTypes lists every device type DLPack defines (dlpack.h v1.3 and the values added after
// it: TPU, TPUHost, Ascend), in numeric order.
func DeviceTypes() []DeviceType {
	return []DeviceType{CPU, CUDA, CUDAHost, OpenCL, Vulkan, Metal, VPI, ROCM, ROCMHost, ExtDev,
		CUDAManaged, OneAPI, WebGPU, Hexagon, MAIA, Trn, TPU, TPUHost, Ascend}
}

// Known reports whether d is one of the device types DLPack defines (see DeviceTypes).
func (d DeviceType) Known() bool {
	if d == CPU { // most tensors: no map lookup
		return true
	}
	_, ok := deviceNames[d]
	return ok
}

// String returns the lower-case name of the device type ("cpu", "cuda", ...), or "device(N)".
func (d DeviceType) String() string {
	if s, ok := deviceNames[d]; ok {
		return s
	}
	return "device(" + strconv.Itoa(int(d)) + ")"
}

// HostAccessible reports whether the CPU can read and write memory of this device type directly
// (host memory, pinned host memory of CUDA, ROCm and TPU runtimes, and CUDA managed memory).
func (d DeviceType) HostAccessible() bool {
	return d == CPU || d == CUDAHost || d == ROCMHost || d == CUDAManaged || d == TPUHost
}

// addressable reports whether a tensor's Data on this device is a plain address into which
// ByteOffset may be folded (true for host, CUDA and ROCm memory; false for opaque handles such as
// OpenCL or Vulkan buffers).
func (d DeviceType) addressable() bool {
	switch d {
	case CPU, CUDA, CUDAHost, CUDAManaged, ROCM, ROCMHost, OneAPI, TPUHost:
		return true
	}
	return false
}

// CPUDevice is the host device, {CPU, 0}.
var CPUDevice = DLDevice{DeviceType: CPU}

// String formats the device like "cuda:0".
func (d DLDevice) String() string { return d.DeviceType.String() + ":" + strconv.Itoa(int(d.DeviceID)) }
