//go:build duckdb_arrow

package duckdbx_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/dlpack-go/dlpack/arrowx/duckdbx"
	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
)

// Embeddings at rest in Parquet (written here by parquetx), filtered in SQL by DuckDB, arrive
// as one [rows, dim] float32 tensor over the memory of DuckDB's Arrow result: only the rows
// that pass the filter are ever tensors.
func ExampleQuery() {
	dir, _ := os.MkdirTemp("", "duckdbx-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "vectors.parquet")
	err := parquetx.WriteFile(path, []parquetx.Column{
		{Name: "id", Tensor: core.MustFromSlice([]int64{1, 2, 3, 4})},
		{Name: "lang", Tensor: core.MustFromSlice([]uint8{0, 1, 0, 1})}, // 0: en, 1: fr
		{Name: "embedding", Tensor: core.MustFromSlice([]float32{
			0.1, 0.2, 0.3,
			1.1, 1.2, 1.3,
			2.1, 2.2, 2.3,
			3.1, 3.2, 3.3}, 4, 3)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	connector, err := duckdb.NewConnector("", nil) // an in-memory database
	if err != nil {
		fmt.Println(err)
		return
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()

	// Parquet has no fixed-size list: the column reads as FLOAT[], cast to the ARRAY FLOAT[3]
	t, err := duckdbx.Query(ctx, conn,
		fmt.Sprintf(`SELECT embedding::FLOAT[3] FROM '%s' WHERE lang = ? ORDER BY id`, path), []any{1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Release()
	vals, _ := core.ReadOnlyElements[float32](t)
	fmt.Println(t.DType(), t.Shape(), vals)
	fmt.Println("copied:", t.Flags()&core.FlagIsCopied != 0)
	// Output:
	// float32 [2 3] [1.1 1.2 1.3 3.1 3.2 3.3]
	// copied: false
}
