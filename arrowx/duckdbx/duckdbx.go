//go:build duckdb_arrow

package duckdbx

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/duckdbx/internal/errs"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// ErrQuery: DuckDB refused or failed the query, or its result is not one tensor column.
var ErrQuery = errors.New("duckdbx: query failed")

// Each runs query, with args for its placeholders, on conn (a connection of DuckDB's driver)
// through DuckDB's Arrow interface, and calls fn for each batch of the result with the tensor
// of the result's one column (arrowx.FromArray: [rows, S...] over the batch's memory, no copy;
// the opts are arrowx's and adapters') and the column itself, valid while fn runs. fn owns t:
// it releases it, or keeps it, which keeps that batch's memory alive after Each moves on. An
// error from fn stops the query and is returned; a result of several columns, or of a column
// arrowx cannot map (a LIST: cast it to an ARRAY such as FLOAT[768]), fails with ErrQuery.
func Each(ctx context.Context, conn *sql.Conn, query string, args []any,
	fn func(t *core.Tensor, col arrow.Array) error, opts ...adapters.Option) error {
	_, err := each(ctx, conn, query, args, fn, opts)
	return err
}

// each is Each, returning the result's column type too.
func each(ctx context.Context, conn *sql.Conn, query string, args []any,
	fn func(t *core.Tensor, col arrow.Array) error, opts []adapters.Option) (dt arrow.DataType, err error) {
	if conn == nil || fn == nil {
		return nil, errs.Errorf(core.ErrNil, "duckdbx: Each needs a connection and a function (got a connection: %v, a function: %v)", conn != nil, fn != nil)
	}
	err = conn.Raw(func(dc any) error {
		dconn, ok := dc.(driver.Conn)
		if !ok {
			return errs.Errorf(ErrQuery, "duckdbx: the connection is a %T, not DuckDB's", dc)
		}
		ar, err := duckdb.NewArrowFromConn(dconn)
		if err != nil {
			return errs.Errorf(ErrQuery, "duckdbx: the connection is not DuckDB's: %w", err)
		}
		rr, err := ar.QueryContext(ctx, query, args...)
		if err != nil {
			return errs.Errorf(ErrQuery, "duckdbx: %w (query %q)", err, query)
		}
		defer rr.Release()
		if err := checkSchema(rr.Schema(), query); err != nil {
			return err
		}
		dt = rr.Schema().Field(0).Type
		for rr.Next() {
			col := rr.RecordBatch().Column(0)
			t, err := arrowx.FromArray(col, opts...)
			if err != nil {
				return fmt.Errorf("%w (query %q)", err, query)
			}
			if err := fn(t, col); err != nil {
				return err
			}
		}
		if err := rr.Err(); err != nil {
			return errs.Errorf(ErrQuery, "duckdbx: %w (query %q)", err, query)
		}
		return nil
	})
	return dt, err
}

// checkSchema refuses a result that is not one column arrowx maps, naming the column's type.
func checkSchema(s *arrow.Schema, query string) error {
	if s.NumFields() != 1 {
		return errs.Errorf(ErrQuery, "duckdbx: the result has %d columns, not one (query %q)", s.NumFields(), query)
	}
	switch f := s.Field(0); f.Type.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW:
		return errs.Errorf(ErrQuery, "duckdbx: column %q is a %s, whose rows have no fixed length: cast it to an ARRAY in the query (%s::%s[n]) (query %q)",
			f.Name, f.Type, f.Name, duckType(f.Type), query)
	}
	return nil
}

// duckType names the DuckDB type of a list's elements, for the hint of checkSchema.
func duckType(t arrow.DataType) string {
	lt, ok := t.(arrow.ListLikeType)
	if !ok {
		return "T"
	}
	switch lt.Elem().ID() {
	case arrow.FLOAT32:
		return "FLOAT"
	case arrow.FLOAT64:
		return "DOUBLE"
	case arrow.INT8:
		return "TINYINT"
	case arrow.INT16:
		return "SMALLINT"
	case arrow.INT32:
		return "INTEGER"
	case arrow.INT64:
		return "BIGINT"
	}
	return "T"
}

// Query runs query as Each does and returns its one column as one tensor [rows, S...]: the
// batch's own memory when the result is one batch (up to 2048 rows, DuckDB's vector size), else
// the batches copied once into one C-order tensor (core.FlagIsCopied; adapters.ZeroCopyOnly
// refuses it with adapters.ErrCopyRequired). An empty result is a tensor of 0 rows.
func Query(ctx context.Context, conn *sql.Conn, query string, args []any, opts ...adapters.Option) (*core.Tensor, error) {
	o := adapters.Apply(opts...)
	var parts []*core.Tensor
	release := func() {
		for _, p := range parts {
			p.Release()
		}
	}
	dt, err := each(ctx, conn, query, args, func(t *core.Tensor, _ arrow.Array) error {
		if len(parts) == 1 {
			if _, err := o.Choose(false, fmt.Sprintf("duckdbx: the result of query %q comes in more than one batch (over 2048 rows), which one tensor joins", query)); err != nil {
				t.Release()
				return err
			}
		}
		parts = append(parts, t)
		return nil
	}, opts)
	if err != nil {
		release()
		return nil, err
	}
	switch len(parts) {
	case 0:
		b := array.NewBuilder(amemory.DefaultAllocator, dt)
		defer b.Release()
		arr := b.NewArray()
		defer arr.Release()
		t, err := arrowx.FromArray(arr, opts...)
		if err != nil {
			return nil, fmt.Errorf("%w (query %q)", err, query)
		}
		return t, nil
	case 1:
		return parts[0], nil
	}
	defer release()
	t, err := join(parts, query)
	if err == nil {
		o.Report(true)
	}
	return t, err
}

// join copies the batches' tensors, of one dtype and row shape, into one tensor.
func join(parts []*core.Tensor, query string) (*core.Tensor, error) {
	first := parts[0]
	rows := int64(0)
	for _, p := range parts {
		rows += p.Shape()[0]
	}
	shape := append([]int64{rows}, first.Shape()[1:]...)
	out, err := core.New(first.DType(), shape...)
	if err != nil {
		return nil, fmt.Errorf("%w (joining the batches of query %q)", err, query)
	}
	at := int64(0)
	for _, p := range parts {
		n := p.Shape()[0]
		dst, err := out.Slice(0, at, at+n, 1)
		if err == nil {
			err = memory.Copy(dst, p)
			dst.Release()
		}
		if err != nil {
			out.Release()
			return nil, fmt.Errorf("%w (joining the batches of query %q)", err, query)
		}
		at += n
	}
	flagged, err := out.WithFlags(core.FlagIsCopied)
	out.Release()
	return flagged, err
}
