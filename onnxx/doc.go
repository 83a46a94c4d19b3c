// Package onnxx runs ONNX models on core tensors with ONNX Runtime, without copying the tensors'
// elements, and without cgo: it calls ONNX Runtime's C API itself. purego opens the library; the
// calls go through internal/ccall (on linux/amd64 and linux/arm64 one runtime.cgocall of a small
// assembly trampoline per call, the path a cgo call takes; through purego.SyscallN elsewhere and
// with the build tag purego).
//
// Any *core.Tensor (over a Go slice, a Gonum or Gorgonia array, a memory-mapped .npy file, memory
// that Python handed over through DLPack) is a model input; every output comes back as a core
// tensor. A Session loads a model from a file (NewSession) or from bytes (NewSessionFromBytes,
// for go:embed models), describes its inputs and outputs (Inputs, Outputs: names, core dtypes,
// shapes with dynamic dimensions as -1 and their symbolic names), and runs it: Run and RunWith
// with tensors by name, RunInto with tensors by position for repeated inference, RunContext and
// RunIntoContext with a context.Context (a cancelled run stops ORT) and per-run RunOptions. The
// one-shot Run loads, runs once and frees.
//
// This package is not a complete ONNX Runtime binding: it binds the functions it needs
// (environment, sessions from a path or bytes, session options with thread counts, graph
// optimisation level, log level, memory arena and pattern, and execution providers by name, run
// options (tag, log level, config entries, the terminate flag), runs with and without I/O
// binding, tensor values over caller memory, ORT-allocated outputs, type and shape information,
// releases). Programs that use github.com/yalue/onnxruntime_go's own sessions and values convert
// them with package onnxx/ortgo (which needs cgo, and is a module of its own); both share one ONNX Runtime library in a
// process.
//
// # The library
//
// Init loads $ONNXRUNTIME_LIB if it is set, else the copy that the script scripts/fetch-ort.sh
// puts in the user's cache (${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-go/ort/1.31.1/libonnxruntime.so.1,
// taken from the npm package onnxruntime-node@1.31.1). It asks the library for its C API version
// (ORT 1.x provides version x), up to NewestAPIVersion (31, the newest OrtApi table this package
// knows, as onnxruntime_c_api.h of onnxruntime_go v1.38.0 declares it), and refuses a library
// older than APIVersion (24, ORT 1.24) with ErrNoRuntime naming its version, the version it needs
// and the fix. The tests run the whole suite on ORT 1.31.1 and a smoke subset on 1.24.3. Everything works from
// version 24; per-run profiling (RunOptions.Profile) needs version 25. When no library exists it fails with ErrNoRuntime, saying how to
// get one. NewSession calls Init. purego binds the library on linux and darwin, amd64 and arm64;
// elsewhere Init fails with ErrNoRuntime.
//
// ORT writes nothing to standard error unless asked: the environment logs fatal messages only;
// SetLogLevel and SessionOptions.LogLevel let its errors, warnings or more through. Errors ORT
// returns are *RuntimeError values (matching ErrRuntime) carrying ORT's code and message.
//
// # Zero-copy and copies
//
//	what                                           memory
//	input in C order (host; CUDA, see below)       shared: ORT reads the tensor's elements, 0-d included
//	input in another layout (Fortran, steps, ...)  copied once into C order (adapters options decide)
//	input of another element type                  cast (a copy) if the cast keeps every value, else
//	                                               refused (ErrDType) unless CastInputs() is given
//	output of a shape the model fixes              a Go tensor the session lends (or allocates), ORT writes into it
//	output of a dynamic shape (or unknown rank)    a tensor over ORT's own buffer, owning it (no copy)
//	output of a fixed shape past MaxOutputAlloc    the same: ORT allocates what the run computes
//	destination given to RunWith or RunInto        ORT writes into it (C order, writable, exact dtype)
//	output that is an input (echo, see below)      a copy of the input (core.FlagIsCopied), or written
//	                                               into its destination
//
// An echo output is a graph output that is one of the graph's inputs (outputs: [X]), or an
// Identity chain of one: for those ORT hands back the input's own value instead of writing the
// buffer it is given. Such outputs are never given a buffer; after every run, each output ORT
// returns is checked against the memory of the inputs (the caller's tensors, and this package's
// C-order copies of them, which the run frees) and of the other outputs, and one that shares it is
// copied. An output is never a tensor over an input's memory.
//
// Every run takes adapters options: adapters.ZeroCopyOnly refuses inputs that would be copied
// (adapters.ErrCopyRequired), adapters.AlwaysCopy copies them, adapters.ReportCopy says whether
// some input was copied, and CastInputs (adapters.AllowCast) converts an input whose element type
// is not the model's. An input of another element type follows the module's cast rule
// (adapters.CheckCast): a cast that keeps every value (float32 or int32 for a float64 model,
// adapters.Preserves) happens by default, as a reported copy; any other (float64 → float32,
// int64 → float32) fails without CastInputs, with an error naming both types that matches
// ErrDType and adapters.ErrCast: a narrowing is never silent. Shareable is the zero-copy
// predicate.
//
// Shapes are checked as ORT checks them: an input of unknown rank (a type without a shape in the
// model, IOInfo.UnknownRank, read from the model itself where ORT's C API reports no dimensions
// as for a scalar) takes any shape, an input declared a scalar also takes a [1] tensor (the
// outputs of that run are then ORT's, in the shapes it computes), and a model without inputs
// runs. Outputs whose shape is not known before the run (unknown rank, a dynamic dimension, a
// shape the values decide) come back over ORT's buffer; only outputs of a known shape are lent.
//
// Element types: float32, float64, float16, bfloat16, int8 to int64, uint8 to uint64 and bool
// (ToDType, FromDType). Inputs and outputs of other types (strings, complex, float8, 4-bit) and
// values that are not tensors (sequences, maps) are refused when the session is made (ErrValue,
// ErrDType): leave such outputs out with the outputNames of NewSession.
//
// # Invariants
//
//   - Every function that uses a tensor's memory holds it (core.Hold) for the whole ORT call:
//     inputs, destinations and the tensors allocated for outputs. A tensor released before the run
//     fails with core.ErrReleased; its memory is never read through a value kept from before.
//   - A destination is checked before ORT runs: the output's dtype, rank and fixed dimensions, C
//     order, writable, and overlapping no input and no other destination (ErrOverlap: ORT would read
//     elements it has overwritten). A destination for an output of dynamic shape whose size is not
//     the output's fails when ORT finds it, with ErrModel and ORT's message.
//   - Names that are not the model's are refused with the model's names listed:
//     `input "x" is not an input of the model (inputs: "X")`.
//   - Every error wraps a sentinel of this package, core or adapters (errors.Is), and its first
//     words say what went wrong, with the values at fault, before any context:
//     `onnxx: input "X" is float64, the model wants float32: pass onnxx.CastInputs() to convert ...`,
//     `onnxx: open model.onnx: no such file or directory`. ORT's failures are *RuntimeError
//     values: `onnxx: running the model: ORT's message (ONNX Runtime error code 2)`.
//
// # Ownership
//
// An output over ORT's buffer is a core.Wrap tensor whose release function calls ORT's
// ReleaseValue: the value is released exactly once, by the last Release of a tensor over it (views
// included) or when the last one is collected. Such tensors are Foreign and count in
// core.LiveForeign until then.
//
// An output of a shape the model fixes, up to 64 KiB, is lent from the session's own blocks
// (memory.Lease, up to four per output, each with an ORT value over it made once): its tensor is
// over Go memory, not Foreign, and when it and every view of it have been released the block
// serves a later run, with no allocation and no new ORT value (Release Run's outputs when done
// with them: that is the fast path). A block is never lent while any holder of its tensor is
// left, so an output that is kept keeps its values; one dropped unreleased is collected with its
// block, and the session makes another. While all of an output's blocks are lent, and for larger
// outputs, the run allocates the output (core.New). Elements read from an output (core.Elements)
// must not be used after its Release: the block may hold a later run's result (an input made over
// such elements, in a run that would lend that block, fails with ErrOverlap rather than be read
// while ORT writes it). A lent output wrapped by another library's value (gonumx.ToDense,
// gorgoniax, ...: anything that calls core.Attach) forfeits its block: what is derived from that
// value (a Gonum RowView or Slice) reads the block with no holder this package can count, so the
// session never lends it again and makes another; the Go collector keeps the old block while
// anything points into it.
//
// An output over ORT's buffer wrapped by another library's value is held by that value (the
// *mat.Dense), not by what is derived from it: keep the Dense reachable while its views are used
// (gonumx's rule), or the last Release lets ORT free the memory they read.
//
// A Session keeps the ORT values it made over the tensors the caller passed (inputs and
// destinations), each with its tensor (whose memory and shape never change); when the next run gets
// the same tensor, it reuses the value. Kept values do not hold the tensors' memory (every run
// holds what it uses): releasing a tensor frees its memory at once, and the session then refuses
// the released tensor. RunInto on the same tensors makes one call of ORT's C API and allocates
// nothing: when every tensor of a run is one the session kept a value over, in host memory, the run
// is settled: it holds the tensors, takes their kept values, checks for overlaps (once, while the
// tensors stay the same) and calls ORT. Every run goes the same way, binding afresh only what it
// does not find kept. In a session without execution providers a settled run's call is
// RunWithBinding on an I/O binding the session keeps, to which a value is bound once while it is
// the one the runs use: ORT then takes the bound lists as they are instead of rebuilding them from
// the arguments of Run on every call. Binding a CPU tensor copies nothing, so
// each run reads the tensors' elements as they are then. Destroy frees the session and its values;
// a Session that becomes unreachable is freed by the collector. A Session is safe for concurrent
// use (see Concurrency).
//
// # Concurrency
//
// Run, RunWith, RunInto, RunContext and RunIntoContext may be called from many goroutines on
// one Session at once: ORT runs them in parallel (its Run is thread-safe), each run holds what it
// reads and writes, and each gets its own outputs (a lease is never lent to two runs; a lent
// output's block serves another run only after its release). One run at a time uses the
// session's kept values and scratch (the fast path of repeated inference); runs that find them
// taken make their own, and keep nothing. Inputs, Outputs and Destroy are safe at any time:
// Destroy waits for the runs in flight, and runs after it fail with ErrModel. What is not safe is
// what would race on the tensors' memory in any Go program: the same destination given to two
// runs at once (both write it), or writing an input's elements while a run reads them. The
// outputs are the caller's, to read, keep and release from any goroutine.
//
// # Device memory
//
// With the CUDA execution provider (SessionOptions.Providers: {Name: "CUDA"}), inputs and
// destinations in CUDA memory (gpu/cuda allocations, DLPack imports from PyTorch) are handed to
// ORT with CUDA memory info, and the run goes through an I/O binding: outputs without a
// destination are allocated by ORT on the inputs' device and come back as CUDA tensors over ORT's
// memory, owned as above. A session without that provider refuses device tensors with
// ErrUnsupportedDevice. What was run: this code path compiles and its refusals are tested, but no
// ONNX Runtime with the CUDA execution provider could be installed where this package was
// developed (the npm and Debian builds used here are CPU-only) and there was no GPU, so TestCUDA,
// which runs a model on gpu/cuda tensors and compares the results, skips there, saying why; the
// device path has not run against a real CUDA provider.
package onnxx
