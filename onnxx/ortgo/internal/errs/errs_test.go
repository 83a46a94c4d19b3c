package errs_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dlpack-go/dlpack/onnxx/ortgo/internal/errs"
)

func TestErrorf(t *testing.T) {
	kind := errors.New("ortgo: kind")
	cause := errors.New("the cause")
	err := errs.Errorf(kind, "ortgo: value of %s: %w", "float32", cause)
	assert.ErrorIs(t, err, kind)
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, "ortgo: value of float32: the cause", err.Error())
}
