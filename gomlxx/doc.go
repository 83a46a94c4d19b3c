// Package gomlxx converts between GoMLX tensors (*tensors.Tensor of
// github.com/gomlx/gomlx/core/tensors, v0.28) and core.Tensor, sharing memory wherever
// GoMLX's API lets a tensor's host memory be shared, and copying through the adapters kernels
// otherwise.
//
// It is not a GoMLX backend and runs no computation: it describes the memory of a GoMLX tensor
// to DLPack, and DLPack memory to GoMLX. It imports GoMLX's tensors package and, from
// github.com/gomlx/compute (where GoMLX v0.28 moved them), the compute, dtypes and shapes
// packages, all pure Go. It is a module of its own (github.com/dlpack-go/dlpack/gomlxx), so that
// requiring dlpack-go never moves the GoMLX version a user's module picks.
//
// It needs GoMLX v0.28 or later (its go.mod requires github.com/gomlx/gomlx v0.28.2 and
// github.com/gomlx/compute v0.1.2): adding gomlxx to a module on an older GoMLX raises that
// module to v0.28.2, whose packages moved (dtypes, shapes and the backends live in
// github.com/gomlx/compute since v0.28), so code written against the older layout stops
// compiling. Move the module to GoMLX v0.28 first, then add gomlxx.
//
// # Zero-copy and copies
//
// A GoMLX tensor keeps its data in one of three places: local storage (a Go slice the tensor
// owns: FromShape, FromFlatDataAndDimensions, FromValue, LocalClone, ToLocal, and any tensor
// after MutableFlatData), a shared buffer (host memory that a backend such as the pure-Go
// backend (github.com/gomlx/compute/gobackend), or XLA on CPU, computes on directly: where GoMLX moves a local tensor that is
// used as the input of a computation), or a buffer on a device (the results of a computation;
// on the pure-Go backend these are host memory too).
//
//	conversion        GoMLX data                                  result
//	FromTensor        local storage                               zero-copy, writable view
//	FromTensor        shared or device buffer                     copy (ZeroCopyOnly: ErrCopyRequired)
//	Take              local storage                               zero-copy; the GoMLX tensor is finalized
//	Take              buffer of the pure-Go backend (gobackend)   zero-copy: the buffer is donated to the core tensor
//	Take              buffer of another backend (device, XLA)     copy; the GoMLX tensor is finalized
//	ToTensor          a whole view FromTensor made (Shareable)    zero-copy: that same *tensors.Tensor
//	ToTensor          any other host tensor                       copy into a new local tensor
//
// FromTensor leaves the tensor to GoMLX; Take moves its data out and leaves it finalized.
// GoMLX v0.28 has no constructor over memory it did not allocate (FromFlatDataAndDimensions
// copies, and so does FromRaw, into local storage or a shared buffer; on a backend without shared
// buffers FromRaw uploads to the device), so data from elsewhere enters GoMLX by one copy (ToTensor); to avoid even that, let
// GoMLX allocate (tensors.FromShape), take a FromTensor view, and have the producer write into it
// (a Gonum Dense over the view with gonumx.ToDense, a .npy read into its bytes). Every conversion
// takes the adapters options: adapters.ZeroCopyOnly() fails with adapters.ErrCopyRequired
// (whose message says why) instead of copying, adapters.AlwaysCopy() copies even when sharing is
// possible, adapters.ReportCopy(&b) says which happened; copies made here carry
// core.FlagIsCopied. ShareableFromTensor and Shareable predict, for FromTensor and ToTensor, what the
// default does.
//
// Every GoMLX dtype that has host storage in v0.28 converts, zero-copy where the table says:
// Bool, Int8…Int64, Uint8…Uint64, Float16 (GoMLX's float16.Float16, core.Float16), BFloat16 (GoMLX's
// bfloat16.BFloat16, core.BFloat16), Float32, Float64, Complex64 and Complex128. FromDType and
// ToDType also map the names GoMLX has for the float8 kinds, F4E2M1FN, S4 and U4 to their DLPack
// types; GoMLX v0.28 cannot hold such tensors on the host, and ToTensor refuses them with
// adapters.ErrUnsupported. (GoMLX v0.28's pure-Go backend computes in both half types.)
//
// Tested: the pure-Go backend (gobackend), which needs no C library. The XLA backend needs the
// PJRT plugin library, which is not installed on the machines this module is tested on; its
// tensors go through the same public GoMLX API (ConstFlatData, MutableFlatData), and Take
// copies its buffers.
// Under -race, run the tests with checkptr off in GoMLX's compute packages
// (-gcflags='github.com/gomlx/compute/...=-d=checkptr=0', as scripts/test.sh does): the pure-Go
// backend's matrix multiplication in compute v0.1.2 keeps addresses as uintptr between
// statements, which checkptr stops with a fatal error.
//
// # Ownership
//
// A FromTensor view holds the Go slice of the tensor's local storage. GoMLX never frees or reuses
// local storage: its FinalizeAll, FinalizeLocal and its moves of the data only drop the tensor's
// reference to the slice, so the view's memory stays valid, with the values it had, as long as
// the view (or any view of it, or a value an adapter built over it) is reachable. A view can
// never read memory GoMLX has given to something else.
//
// The memory of shared and device buffers belongs to the backend, which reuses it (the pure-Go backend
// keeps a pool of buffers for the next results) or frees it (XLA) when the tensor is finalized or
// donated, and this package cannot stop a GoMLX user from doing that. So FromTensor never views
// it: it copies, and Take moves it instead. Take donates the buffer (Tensor.DonateBuffer), leaving
// the GoMLX tensor invalid, and wraps the memory the backend reports for it with core.Wrap: the
// core tensor is then the buffer's only holder, and the buffer goes back to the backend
// (BufferFinalize) exactly once, when the last holder is released or collected. core.LiveForeign
// counts it meanwhile. Take does this for the pure-Go backend only, whose buffers are Go slices
// that stay valid even when the backend itself is finalized; XLA's shared buffers are native
// memory that a finalized client frees behind any holder's back, so Take copies them.
//
// ToTensor's copies are new GoMLX tensors that share nothing. The tensor it hands back without
// a copy is the GoMLX tensor the view was made of, which owns its memory as before.
//
// # What a GoMLX user may do to a tensor while a FromTensor view of it lives
//
// Anything GoMLX allows is memory-safe. What stays aliased:
//
//   - Reading and writing it through ConstFlatData, MutableFlatData, ConstBytes, MutableBytes,
//     AssignFlatData, CopyFrom, Value: the view sees every write, and GoMLX sees every write
//     made through the view, as long as the tensor keeps its local storage.
//
// What detaches the tensor from the view (the view keeps valid memory and the values it had,
// stays writable, and no longer aliases the tensor; Aliases reports false; ToTensor then
// copies the view instead of handing the tensor back):
//
//   - FinalizeAll and FinalizeLocal.
//   - Using it as an input of a computation (Exec, Graph.Run), or MaterializeOnDevice with
//     share true, on a backend that shares host memory (the pure-Go backend): GoMLX copies local storage
//     into a backend buffer and drops the local slice; later values of the tensor live in that
//     buffer. Make views after computing, or Take the results.
//   - DonateBuffer and graph.DonateTensorBuffer, and anything else that replaces its storage.
//
// What leaves a stale copy: MaterializeOnDevice with share false (and, on backends without
// shared buffers such as XLA on a GPU, every computation) keeps the local storage and adds a
// device copy that computations use. Writes through the view then reach GoMLX's reads of local
// storage but not its computations, until the device copy is dropped: t.InvalidateOnDevice(),
// FromTensor(t) again, or ToTensor of the view, each of which drops it.
//
// Writing through the view while GoMLX reads the tensor on another goroutine (a computation
// copying it to a device) is a data race, as it is for GoMLX's own MutableFlatData.
//
// After Take the GoMLX tensor is finalized: every GoMLX method reports it invalid, and
// FromTensor and Take refuse it with core.ErrReleased.
//
// # Concurrency
//
// Every function here reads a GoMLX tensor's state (whether it is live, its shape, where its data
// is) under GoMLX's own lock of the tensor, the one its ConstFlatData holds around its callback,
// since GoMLX v0.28 offers no other: FromTensor, Take, ShareableFromTensor, Aliases and ToTensor may
// race FinalizeAll (or any GoMLX method) on another goroutine. Each then works on the tensor as it
// was at one moment: a result of the live tensor, or, once it is finalized, core.ErrReleased,
// the same error every time. On a backend without shared buffers (XLA on a GPU), reading the
// state of a tensor whose data is only on the device makes GoMLX bring it to local storage first,
// as any GoMLX read does.
//
// # Errors
//
// A nil tensor is refused with core.ErrNil, a finalized GoMLX tensor or a released core tensor
// with core.ErrReleased, a dtype the other side lacks with adapters.ErrUnsupported, an invalid
// DLPack dtype with core.ErrDType, device memory given to ToTensor with core.ErrNotHost, and an
// error GoMLX reports (a finalized backend) wraps ErrGoMLX with GoMLX's message.
package gomlxx
