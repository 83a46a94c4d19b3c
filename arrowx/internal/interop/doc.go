// Package interop holds the Arrow and Parquet interoperability matrix of dlpack-go: its tests
// (and nothing else) check arrowx, parquetx and flightx against writers and readers that are not
// this module's, in both directions.
//
// The peers are pyarrow (the project's virtual environment: FixedShapeTensorArray,
// pyarrow.parquet, IPC stream and file, pyarrow.flight), arrow-rs (npm parquet-wasm, with
// Arrow's JavaScript library apache-arrow to build and read its tables), hyparquet and
// hyparquet-writer (an independent Parquet implementation in JavaScript), and apache-arrow itself
// for the IPC stream and file formats. Every cell of the matrix is one subtest named
//
//	TestInterop/<peer>/<format>/<kind>/<dtype>/<children>/<direction>
//
// with format ipc_stream, ipc_file or parquet; kind fixed_shape (arrow.fixed_shape_tensor with
// dim_names and a permutation), variable_shape (arrow.variable_shape_tensor with uniform_shape
// and dim_names) or matrix (plain feature columns, parquetx.ReadMatrix); dtype float16 to
// float64, int8 to int64, uint8 to uint64 or bool8; children nullable or nonnull (the
// nullability of the storage's list children); direction read (the peer writes, dlpack-go
// reads) or write (dlpack-go writes, the peer reads). Values, shapes and extension metadata are
// compared exactly. Every side makes its values from the same formula (see testdata/), so no
// value crosses a process boundary except in the files under test.
//
// A cell a peer gets wrong by a limitation of its own (peerLimits: pyarrow 26 refuses arrow.bool8
// values in a variable_shape_tensor, and drops the extension type of a Parquet column whose
// stored children are non-nullable) is checked to fail the known way and skipped with the
// reason, so that it counts as the peer's; once the peer gets it right, the subtest fails until
// the entry is removed. pyarrow's to_numpy_ndarray of a permuted fixed_shape_tensor is checked
// for its shape only: pyarrow 26 gives it strides that do not follow the specification (logical
// dimension i is physical dimension permutation[i]), whoever wrote the array.
//
// TestInteropFlight is Flight across languages: a pyarrow.flight client puts, gets and lists
// tensors on a flightx server on loopback, and a flightx client on a pyarrow.flight server of
// canonical tensor streams (testdata/flight_*.py). BenchmarkInteropParquetRead reads a 256 MiB
// fixed_shape_tensor column written by arrow-rs (parquet-wasm) and by arrow-go, beside
// os.ReadFile of each file; its files are made once into the user's cache directory.
//
// The peers' work is batched: each peer writes every file of its cells in one process launch and
// reads every file of ours in another, so the whole matrix runs in seconds. A peer that cannot
// be installed fails the tests in CI and skips them elsewhere (internal/refcheck).
package interop
