// Package adapters is the contract every adapter of this module follows, and what they share to
// follow it: the copy policy their conversions take (Options, ReportCopy), the cast rule
// (Preserves, CheckCast, AllowCast) and the conformance kit that proves an adapter keeps the
// contract (adapters/adaptertest). The adapters themselves live in their own packages, one per
// ecosystem (gonumx, gorgoniax, gomlxx, numpyx, safetensorsx, ggufx, onnxx, arrowx, pyexchange).
//
// The kernels that make the copies when memory cannot be shared (Copy, Clone, Contiguous, Cast,
// At, SetAt) are not here: they are package memory's, with the allocation they copy into. An
// adapter calls them; a new copy or cast kernel belongs in memory.
//
// It is not a converter of its own: it knows no ecosystem, and core knows nothing of it.
//
// # The adapter contract
//
// An adapter for an ecosystem whose value type is X (a *mat.Dense, a *tensor.Dense, an
// arrow.Array, ...) reads like its siblings:
//
//   - FromX(x X, opts ...Option) (*core.Tensor, error) makes a tensor of an X, and
//     ToX(t *core.Tensor, opts ...Option) (X, error) an X of a tensor. Both always return an
//     error and take the options, even where one policy is the only one possible: a From that
//     can always share still copies under AlwaysCopy (Share does that) and reports under
//     ReportCopy.
//   - Shareable(t *core.Tensor) (ok bool, why string) is the zero-copy predicate of ToX: whether
//     the default policy shares t's memory, and if not, what prevents it. A conversion decides
//     with Apply(opts...).Choose(Shareable(t)), so that ZeroCopyOnly's error says why, and
//     reports the decision (Options.Report) only once it has succeeded: a conversion that
//     fails leaves the caller's ReportCopy flag as it was.
//   - FromDType(their) (core.DLDataType, error) and ToDType(core.DLDataType) (their, error) map
//     element types. A dtype the ecosystem cannot hold is refused with an error wrapping
//     ErrUnsupported that names it.
//   - Errors: every error wraps a sentinel (errors.Is). Sentinels are package variables whose
//     message starts with the package name ("numpyx: malformed file"); one that refines another
//     wraps it; an error of its kind wraps it without printing it first (inside this module,
//     errs.Errorf(ErrFormat, "numpyx: shape[0] = %d is negative", n)); and conditions core or
//     this package already names wrap those (core.ErrReleased, core.ErrNotHost,
//     ErrCopyRequired, ErrUnsupported) instead of a new sentinel. Messages lead with what was wrong and the
//     values at fault, then the context ("gonumx: *mat.Dense needs 2 dimensions, the tensor
//     has shape [2 2 2]"), without the sentinel's generic text in front and without one
//     package's prefix twice; the sentinel is matched by errors.Is, not printed first.
//   - Memory: a tensor over an ecosystem value's memory holds that value (core.WrapKeep); a value
//     built over a tensor's memory holds the tensor's memory (core.Attach); foreign memory an
//     adapter maps or receives is wrapped with its release (core.Wrap), which runs exactly once.
//     Every function that reads or writes a tensor's memory holds it for the whole time
//     (core.Hold), so a tensor passed inline as the only holder of foreign memory is safe.
//   - Tests: the adapter runs adaptertest.Run with its Shareable, and proves its zero-copy paths
//     by address or by a write seen through both sides.
//
// Names that several packages share mean the same operation at another level: core.ImportVersioned
// and core.ImportLegacy take a managed tensor with a Go function as its deleter (the primitive);
// core/cdlpack's import a C pointer and call its C deleter; pyexchange's do the same for
// tensors that come from Python (the deleter runs with the GIL held). Exports likewise:
// cdlpack's share any tensor as it is, pyexchange's also follow Python consumers' rules
// (negative strides and read-only tensors are copied, see pyexchange.Shareable). Tensor.Data is
// the address of the first element (DLPack's data field); core.Elements is the typed slice.
//
// Adding an adapter takes four files: doc.go (the package doc with a table of what shares and
// what copies), from.go and to.go (or one file per value type), and a test file that runs the
// kit; see CONTRIBUTING.md.
//
// # Casts: never a guess
//
// One rule holds in every adapter whose target holds one element type (a *mat.Dense holds
// float64, a model's input its declared type, a Go function's parameter its own): a cast that
// keeps every value (Preserves has the table: float32 to float64, int32 to float64, bool to
// any number, ...) happens by default, as a copy that ReportCopy reports and that is flagged
// core.FlagIsCopied; any other cast (narrowing floats, complex to real, float to integer,
// int64 to float64, signed to unsigned, anything to bool) happens only with AllowCast, and
// without it the conversion fails with a *CastError wrapping ErrCast that names both dtypes
// and the option. Options.CheckCast applies the rule. Under AllowCast the elements are
// converted as memory.Cast converts them: float to integer truncates toward zero, maps NaN to 0
// and saturates at the integer's limits; complex to real keeps the real part; integers wrap as
// Go converts them; floats round to nearest, ties to even. memory.Cast and memory.Copy
// themselves are explicit requests and convert whatever they are given. The conformance kit checks the rule for every
// adapter that declares such conversions (adaptertest.Adapter.Casts).
//
// # File formats: the second shape
//
// A package for a file of tensors (numpyx, safetensorsx, ggufx) converts no value of another
// library: its values are bytes in a file. It follows this shape instead, the standard library's
// (archive/zip, debug/elf), with the entry points the format makes sense of:
//
//   - Read(r io.Reader, opts ...Option) reads what r holds (a tensor, or a file's tensors by
//     name) into memory of its own; ReadFile(path, opts...) does the same from a file.
//   - Map(path, opts...) maps the file read-only and returns tensors over the mapping: zero-copy,
//     nothing read until an element is touched.
//   - Open(path, opts...) opens a many-tensor file, mapped where the system can, and returns a
//     file value (Names, Tensor(name), Header, ...) that must be closed; tensors taken from it
//     stay valid after Close. NewReader(r io.ReaderAt, size int64, opts...) is the same over any
//     ReaderAt, reading into memory of its own.
//   - Write(w io.Writer, ...) and WriteFile(path, ...) write; WriteFile replaces the file
//     atomically.
//   - ReadHeader(r) reads, and ParseHeader(b) parses, only the header; HeaderOf(...) is the
//     header a write would produce; a file value's Header method returns its own.
//
// Options are this package's Option, with the copy policy meaning what it means for adapters
// (Read under ZeroCopyOnly fails with ErrCopyRequired, Open under AlwaysCopy copies every
// tensor); a setting of one format only is a function of that package returning an Option
// (numpyx.Compressed, numpyx.MaxInflated), built with WithExtra, never an option type of its
// own. A path that is not a regular file (a named pipe, a directory, a device) is refused at
// once with the package's ErrNotRegularFile, never waited on. Each package doc says which of
// the two shapes it follows.
//
// # Naming the zero-copy predicates
//
// A predicate reports (ok bool, why string), and its name says the direction it asks about:
//
//   - Shareable(t *core.Tensor): core to the package's main type (the ToX of the contract).
//   - ShareableAs<Kind>(t *core.Tensor): core to another kind of the package's values
//     (arrowx.ShareableAsTensor, arrowx.ShareableAsRecord).
//   - ShareableFrom<Kind>(x): the package's value to core (gomlxx.ShareableFromTensor).
//
// Every package doc that says when a conversion shares memory and when it copies does so under
// the heading "Zero-copy and copies".
//
// # Copies
//
// A conversion that must copy makes its copy with package memory (memory.Contiguous,
// memory.CastOrder, memory.Copy), which is exact for every stride pattern and overlap and
// converts dtypes as Cast does; an adapter writes no copy loop of its own.
package adapters
