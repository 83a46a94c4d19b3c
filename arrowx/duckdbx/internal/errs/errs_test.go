package errs_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dlpack-go/dlpack/arrowx/duckdbx/internal/errs"
)

func TestErrorf(t *testing.T) {
	kind := errors.New("duckdbx: kind")
	cause := errors.New("the cause")
	err := errs.Errorf(kind, "duckdbx: value of %s: %w", "float32", cause)
	assert.ErrorIs(t, err, kind)
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, "duckdbx: value of float32: the cause", err.Error())
}
