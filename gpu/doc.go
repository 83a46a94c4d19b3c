// Package gpu puts DLPack tensors in CUDA memory and moves them: device tensors (kDLCUDA),
// pinned host tensors (kDLCUDAHost) and managed tensors (kDLCUDAManaged) are ordinary
// *core.Tensor values whose Data is a device (or pinned, or managed) address, so views, export
// through core/cdlpack and import from other libraries work on them as on host tensors.
//
// It builds with CGO_ENABLED=0 and needs no CUDA SDK: package gpu/cuda opens the driver at run
// time. Where there is no driver or device, every function that needs one returns an error
// matching ErrNoDevice.
//
// This package is not a compute library: it launches no kernels. It allocates, wraps, copies
// and synchronises.
//
// # Overview
//
//   - Alloc, AllocPinned, AllocManaged make zeroed C-order tensors; Wrap adopts CUDA memory
//     another library hands over, with its owner's deleter, after asking the driver that the
//     address is what its DLDevice claims.
//   - To (and ToOn, on a stream) moves a tensor to a device: the one call users and adapters
//     need. ToHost is what host adapters call: it answers device tensors with a clear error
//     under adapters.ZeroCopyOnly, and otherwise moves them.
//   - Copy (and CopyOn) copies between any two of host, pinned, device and managed memory, for
//     every stride pattern, converting dtypes on the host when they differ.
//   - Stream, NewStream, StreamFromProtocol and ReadyFor carry the stream semantics of the
//     DLPack Python protocol.
//
// # Memory and ownership
//
// Device memory is foreign memory in core's sense: the release (cuMemFree, cuMemFreeHost, or a
// wrapped owner's deleter) runs once, when the last tensor, view or attached value lets go, from
// whichever goroutine that happens on. core.LiveForeign counts it. The CPU never dereferences a
// kDLCUDA address: core's accessors refuse device tensors with core.ErrNotHost. Pinned and
// managed tensors are host-accessible (core.Elements works); managed memory written by the device
// is safe to read after the device's work completed (ToHost synchronises first).
//
// # Copies and streams
//
// Copy is synchronous. CopyOn and ToOn order the copy on a stream: after the work already
// queued there, and, when only device and pinned memory take part along a fast path, without
// blocking the host, so the caller must keep both tensors alive until the stream gets there.
// Pageable (Go) memory is copied synchronously, after waiting for the stream, so no Go memory is
// in flight when a call returns.
//
// # Exchange with Python
//
// A Go producer answers __dlpack__(stream=s): it calls ReadyFor(t, producer, s) (s = 1 for
// None), which makes the consumer's stream wait for the producer's work without blocking, then
// exports t with cdlpack.ExportVersioned (or ExportLegacy). A Go consumer passes
// stream=s.Protocol() to the producer's __dlpack__ for the stream it will use, and imports the
// capsule's tensor with cdlpack.ImportVersioned; the result is a kDLCUDA tensor like any other.
// devicecheck/check_cuda.py does both with PyTorch and CuPy through the Python exchange of
// pyexchange, whose StreamSync for CUDA tensors is ReadyFor (devicecheck/cudalib).
package gpu
