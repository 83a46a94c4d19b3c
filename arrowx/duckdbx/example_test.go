//go:build duckdb_arrow

package duckdbx_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx/duckdbx"
	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gonumx"
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

// A thousand embeddings in Parquet, joined in SQL with a table of the documents of interest and
// filtered by score: the rows that pass come back as a [rows, dim] float64 tensor over DuckDB's
// Arrow memory, and go into Gonum over that same memory for their mean.
func ExampleQuery_gonum() {
	const rows, dim = 1000, 8
	dir, _ := os.MkdirTemp("", "duckdbx-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "vectors.parquet")
	ids, scores, emb := make([]int64, rows), make([]float64, rows), make([]float32, rows*dim)
	for i := range ids {
		ids[i], scores[i] = int64(i), float64((i*37)%100)/100
		for j := range dim {
			emb[i*dim+j] = float32(i%10) + float32(j)/10
		}
	}
	err := parquetx.WriteFile(path, []parquetx.Column{
		{Name: "id", Tensor: core.MustFromSlice(ids)},
		{Name: "score", Tensor: core.MustFromSlice(scores)},
		{Name: "embedding", Tensor: core.MustFromSlice(emb, rows, dim)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	connector, err := duckdb.NewConnector("", nil)
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
	// the documents of interest: every seventh
	if _, err := conn.ExecContext(ctx, `CREATE TABLE corpus AS SELECT range AS doc FROM range(0, 1000, 7)`); err != nil {
		fmt.Println(err)
		return
	}

	// the embedding column (a Parquet list) cast to a fixed-size ARRAY of DOUBLE arrives as a
	// FixedSizeList: a [rows, dim] float64 tensor
	query := fmt.Sprintf(`
		SELECT v.embedding::DOUBLE[%d]
		FROM '%s' AS v JOIN corpus AS c ON v.id = c.doc
		WHERE v.score > ?
		ORDER BY v.id`, dim, path)
	var copied bool
	t, err := duckdbx.Query(ctx, conn, query, []any{0.5}, adapters.ReportCopy(&copied))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Release()
	fmt.Println(t.DType(), t.Shape(), "copied:", copied)

	m, err := gonumx.ToDense(t) // over the same memory
	if err != nil {
		fmt.Println(err)
		return
	}
	r, c := m.Dims()
	weights := mat.NewVecDense(r, nil)
	for i := range r {
		weights.SetVec(i, 1/float64(r))
	}
	var mean mat.VecDense
	mean.MulVec(m.T(), weights)
	fmt.Printf("mean of %d embeddings of %d: %.3f\n", r, c, mat.Formatted(mean.T(), mat.Squeeze()))
	// Output:
	// float64 [70 8] copied: false
	// mean of 70 embeddings of 8: [4.357  4.457  4.557  4.657  4.757  4.857  4.957  5.057]
}
