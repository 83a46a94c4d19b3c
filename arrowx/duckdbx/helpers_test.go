//go:build duckdb_arrow

package duckdbx_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/stretchr/testify/require"
)

// open returns a connection to a new in-memory DuckDB database, closed at the test's end.
func open(t *testing.T) (*sql.DB, *sql.Conn) {
	t.Helper()
	c, err := duckdb.NewConnector("", nil)
	require.NoError(t, err)
	db := sql.OpenDB(c)
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() {
		conn.Close()
		db.Close()
	})
	return db, conn
}

func mustOpen(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(name)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}
