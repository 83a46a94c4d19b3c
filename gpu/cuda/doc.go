// Package cuda binds the parts of the CUDA driver API that DLPack device tensors need: device
// discovery, the device's primary context, device, pinned-host and managed memory, 1-D and 2-D
// copies (synchronous and on a stream), streams and events, and pointer attributes.
//
// It links against nothing. On linux/amd64 and linux/arm64 it opens libcuda.so.1 at run time
// with github.com/ebitengine/purego, so it builds and runs with CGO_ENABLED=0 and needs no CUDA
// SDK. On every other platform, and wherever the library, the driver or a device is missing,
// each call returns an error that matches ErrNoDevice with errors.Is and says why. Failing driver
// calls return an *Error carrying the CUresult and its CUDA name (cuGetErrorName); it matches
// ErrCUDA (and ErrNoDevice for CUDA_ERROR_NO_DEVICE and CUDA_ERROR_INVALID_DEVICE).
//
// # Contexts and threads
//
// Every call runs in the primary context of the device it names, the context the CUDA runtime
// (and so PyTorch, CuPy, ...) uses too: memory allocated here is memory those libraries can use
// and vice versa. The primary context of a device is retained on first use and kept for the life
// of the process. A CUDA context is current per OS thread, so each call locks its goroutine to
// the OS thread, makes the context current (restoring whatever was current before), calls the
// driver and unlocks: goroutines may call this package from any thread.
//
// Only the _v2 entry points are used where the driver has them (cuMemAlloc_v2, cuMemcpyHtoD_v2,
// ...), as the CUDA headers do. The library is opened and its symbols resolved once, on first
// use; the outcome (success or the reason for failure) is kept for the process.
//
// This package works with raw addresses (uintptr device pointers) and byte counts. Tensors,
// layouts and the DLPack exchange live in package gpu, on top of it.
package cuda
