package errs_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dlpack-go/dlpack/gomlxx/internal/errs"
)

var errKind = errors.New("gomlxx: kind")

func TestErrorfAndWrap(t *testing.T) {
	err := errs.Errorf(errKind, "gomlxx: shape %v is bad", []int64{2, -1})
	assert.ErrorIs(t, err, errKind)
	assert.Equal(t, "gomlxx: shape [2 -1] is bad", err.Error())
	assert.Equal(t, "gomlxx: shape [2 -1] is bad (ToTensor)", errs.Wrap("gomlxx", err, "ToTensor").Error())
	assert.ErrorIs(t, errs.Wrap("gomlxx", err, "ToTensor"), errKind)
	cause := errors.New("core: released")
	assert.Equal(t, "gomlxx: ToTensor: core: released", errs.Wrap("gomlxx", cause, "ToTensor").Error())
	assert.Equal(t, "gomlxx: core: released", errs.Wrap("gomlxx", cause, "").Error())
	assert.Same(t, err, errs.Wrap("gomlxx", err, ""))
}
