// Package ccall calls C functions by address, without cgo, more cheaply than purego.SyscallN.
//
// Call0 … Call8 call a C function that takes up to eight integer or pointer arguments and returns
// an integer or pointer (or nothing): the functions of a C API table such as ONNX Runtime's OrtApi
// or the CUDA driver. On linux/amd64 (System V ABI) and linux/arm64 (AAPCS64) a call is one
// runtime.cgocall of a small assembly trampoline that reads the function and its arguments from a
// frame on the caller's stack: no pool, no copy of a 32-word argument block, no allocation. On
// the other linux and darwin platforms, and with the build tag purego (the project's tag for "no
// assembly"), a call goes through purego.SyscallN. The package imports purego in either case:
// with CGO_ENABLED=0 its fakecgo is what makes runtime.cgocall available. On other systems (where
// purego's fakecgo does not build, or onnxx opens no library) the package builds and every call
// panics.
//
// # Rules for the caller
//
//   - fn is the address of a C function (from purego.Dlsym or a C function table) that takes the
//     given number of integer or pointer arguments, none of them floating point, and is not
//     variadic. A call of address 0 panics (with more than MaxArgs arguments, purego's panic).
//   - fn must not call back into Go (no callbacks registered with purego.NewCallback): the
//     trampoline writes the result into the caller's stack frame, which a callback could move.
//   - Pointers to Go memory are passed as uintptr(unsafe.Pointer(p)) in the call expression
//     itself: the functions are go:uintptrescapes, like purego.SyscallN, so such memory is kept on
//     the heap and alive until the call returns. C must not keep such a pointer after the call
//     (pin the memory with runtime.Pinner, and keep it reachable, for as long as C holds it).
//
// It is not for variadic functions (printf), floating-point arguments or results, or struct
// arguments: use purego for those.
package ccall

// MaxArgs is the most arguments a call passes.
const MaxArgs = 8
