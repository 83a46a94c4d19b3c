//go:build duckdb_arrow

package duckdbx_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/arrowx/duckdbx"
	"github.com/dlpack-go/dlpack/core"
)

// TestErrorMessages holds duckdbx's refusals to the module's rule: what was wrong first,
// "duckdbx:" once, errors.Is matching the sentinel.
func TestErrorMessages(t *testing.T) {
	_, conn := open(t)
	ctx := context.Background()
	path, _ := writeVectors(t, 10)
	stop := errors.New("duckdbx: stop")
	cases := []errstest.Case{
		{Name: "SQL error", Want: duckdbx.ErrQuery, Err: func() error {
			_, err := duckdbx.Query(ctx, conn, "SELEC 1", nil)
			return err
		}},
		{Name: "two columns", Want: duckdbx.ErrQuery, Err: func() error {
			_, err := duckdbx.Query(ctx, conn, fmt.Sprintf("SELECT id, embedding FROM '%s'", path), nil)
			return err
		}},
		{Name: "a LIST column", Want: duckdbx.ErrQuery, Err: func() error {
			_, err := duckdbx.Query(ctx, conn, fmt.Sprintf("SELECT embedding FROM '%s'", path), nil)
			return err
		}},
		{Name: "nil connection", Want: core.ErrNil, Err: func() error {
			_, err := duckdbx.Query(ctx, nil, "SELECT 1", nil)
			return err
		}},
		{Name: "fn's error", Want: stop, Err: func() error {
			return duckdbx.Each(ctx, conn, "SELECT 1", nil, func(x *core.Tensor, _ arrow.Array) error {
				x.Release()
				return stop
			})
		}},
	}
	errstest.Run(t, `^duckdbx: `, cases, duckdbx.ErrQuery, stop)
}
