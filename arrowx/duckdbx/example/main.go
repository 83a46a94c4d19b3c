//go:build duckdb_arrow

// Command example writes embeddings to Parquet with parquetx, lets DuckDB filter and join them
// in SQL, and takes the result as a [rows, dim] tensor over DuckDB's Arrow memory into Gonum:
// the rows that pass the query are the only ones that ever become a tensor.
//
//	cd arrowx/duckdbx && go run -tags duckdb_arrow ./example
package main

import (
	"context"
	"database/sql"
	"fmt"
	"log"
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

const (
	rows = 1000
	dim  = 8
)

func main() {
	dir, err := os.MkdirTemp("", "duckdbx-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "vectors.parquet")
	if err := writeVectors(path); err != nil {
		log.Fatal(err)
	}

	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		log.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	// a second table to join with: which documents are in the corpus of interest
	if _, err := conn.ExecContext(ctx, `CREATE TABLE corpus AS SELECT range AS doc FROM range(0, 1000, 7)`); err != nil {
		log.Fatal(err)
	}

	// filter and join in SQL; the embedding column (a Parquet list) cast to a fixed-size ARRAY
	// of DOUBLE, which arrives as a FixedSizeList: a [rows, dim] float64 tensor
	query := fmt.Sprintf(`
		SELECT v.embedding::DOUBLE[%d]
		FROM '%s' AS v JOIN corpus AS c ON v.id = c.doc
		WHERE v.score > ?
		ORDER BY v.id`, dim, path)
	var copied bool
	t, err := duckdbx.Query(ctx, conn, query, []any{0.5}, adapters.ReportCopy(&copied))
	if err != nil {
		log.Fatal(err)
	}
	defer t.Release()
	fmt.Printf("query: %d of %d rows passed, a %v %v tensor (copied: %v)\n", t.Shape()[0], rows, t.DType(), t.Shape(), copied)

	// into Gonum over the same memory: the mean embedding of the rows that passed
	m, err := gonumx.ToDense(t)
	if err != nil {
		log.Fatal(err)
	}
	r, c := m.Dims()
	ones := mat.NewVecDense(r, nil)
	for i := 0; i < r; i++ {
		ones.SetVec(i, 1/float64(r))
	}
	var mean mat.VecDense
	mean.MulVec(m.T(), ones)
	fmt.Printf("mean of %d embeddings of %d: %.3f\n", r, c, mat.Formatted(mean.T(), mat.Squeeze()))
}

// writeVectors writes rows documents: id, a score in [0, 1) and an embedding of dim float32.
func writeVectors(path string) error {
	ids := make([]int64, rows)
	scores := make([]float64, rows)
	emb := make([]float32, rows*dim)
	for i := range ids {
		ids[i] = int64(i)
		scores[i] = float64((i*37)%100) / 100
		for j := 0; j < dim; j++ {
			emb[i*dim+j] = float32(i%10) + float32(j)/10
		}
	}
	return parquetx.WriteFile(path, []parquetx.Column{
		{Name: "id", Tensor: core.MustFromSlice(ids)},
		{Name: "score", Tensor: core.MustFromSlice(scores)},
		{Name: "embedding", Tensor: core.MustFromSlice(emb, rows, dim)},
	})
}
