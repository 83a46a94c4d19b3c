//go:build !duckdb_arrow

package duckdbx

// This package needs the build tag duckdb_arrow (the Arrow interface of DuckDB's Go driver):
// go build -tags duckdb_arrow. Without it, the build stops here, naming the tag.
var _ = build_with_tag_duckdb_arrow
