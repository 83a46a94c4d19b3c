// Package duckdbx runs DuckDB queries whose result is a tensor: the Arrow result of a query
// (DuckDB's Arrow interface, through its Go driver github.com/duckdb/duckdb-go/v2) becomes a
// core.Tensor through arrowx, over the memory DuckDB's Arrow result holds. DuckDB reads the
// Parquet files that arrowx/parquetx writes and writes Parquet that parquetx reads, so a
// dataset at rest can be filtered, joined and aggregated in SQL and only the rows that matter
// reach Gonum, ONNX Runtime or a GPU:
//
//	conn, _ := db.Conn(ctx)
//	t, err := duckdbx.Query(ctx, conn, `SELECT embedding::FLOAT[768] FROM 'vectors.parquet' WHERE lang = ?`, []any{"en"})
//	// t: [rows, 768] float32
//
// # When to reach for it
//
// parquetx reads a column whole (or by row group) into memory. Reach for DuckDB when the data
// is larger than memory, when rows must be filtered, joined or aggregated before they become
// tensors, or when the data sits in many files (globs, hive partitions) or in a DuckDB database;
// DuckDB streams the files and hands over only the result.
//
// # Zero-copy and copies
//
// DuckDB's Arrow result comes in batches of up to 2048 rows (its vector size). Each batch's
// column becomes a tensor over that batch's memory (arrowx.FromArray: a FixedSizeList column,
// DuckDB's ARRAY type FLOAT[n], gives [rows, n]; a primitive column [rows]): Each hands them over
// one by one, without a copy. Query returns one tensor: the batch itself when the result is
// one batch, else the batches copied once into one tensor (core.FlagIsCopied; refused with
// adapters.ErrCopyRequired under adapters.ZeroCopyOnly). DuckDB's LIST type (FLOAT[], what a
// Parquet list column reads as) has no fixed row length: cast it to an ARRAY in the query
// (embedding::FLOAT[768]). A tensor holds DuckDB's memory for its batch (released when the
// last holder of the tensor lets go), so it outlives the query and the connection.
//
// # Building
//
// The package is cgo: DuckDB's Go driver links the static DuckDB library that its bindings
// module ships for each platform (go.duckdb.org/libduckdb/...), and the driver's Arrow interface
// is behind the build tag duckdb_arrow, so this package builds only with it:
//
//	go test -tags duckdb_arrow ./...
//
// It is a module of its own so that requiring dlpack-go never brings DuckDB (about 30 MB of
// download a platform, and a cgo build) to those who do not import it.
package duckdbx
