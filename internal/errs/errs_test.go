package errs_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/errs"
)

var (
	errKind  = errors.New("adapters: conversion not supported")
	errInner = errors.New("core: tensor was released")
)

func TestErrorf(t *testing.T) {
	err := errs.Errorf(errKind, "gonumx: *mat.Dense needs 2 dimensions, the tensor has shape %v", []int{2, 2, 2})
	assert.EqualError(t, err, "gonumx: *mat.Dense needs 2 dimensions, the tensor has shape [2 2 2]")
	assert.ErrorIs(t, err, errKind)
	wrapped := errs.Errorf(errKind, "onnxx: input %q: %w", "X", errInner)
	assert.EqualError(t, wrapped, `onnxx: input "X": core: tensor was released`)
	assert.ErrorIs(t, wrapped, errKind)
	assert.ErrorIs(t, wrapped, errInner, "the %w of the format wraps too")
	assert.NotErrorIs(t, err, errInner)
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		fail string
	}{
		{msg: "gonumx: *mat.Dense needs 2 dimensions, the tensor has shape [2 2 2]"},
		{msg: `onnxx: input "X" is float64, the model wants float32: pass onnxx.CastInputs() to convert`},
		{msg: "gonumx: copy to *mat.Dense: core: tensor was released"},
		{msg: "adapters: conversion not supported"},
		{msg: "numpyx: read x.npy: open x.npy: no such file or directory"},
		{msg: "adapters: conversion not supported: onnxx: element type: onnxx: inputs do not match", fail: "appears twice"},
		{msg: "adapters: conversion not supported: gonumx: *mat.Dense needs 2 dimensions", fail: "leads with the generic"},
		{msg: "onnxx: run: onnxx: bad", fail: `"onnxx:" appears twice`},
		{msg: "cdlpack: import: core: tensor was released: DLTensor 3", fail: "before its cause"},
		{msg: "cdlpack: import: core: tensor was released"},
		{msg: "flightx: put: arrow: invalid: arrow: bad"}, // another library's stutter is not ours to judge
	} {
		err := errs.Check(tc.msg, errKind, errInner)
		if tc.fail == "" {
			assert.NoError(t, err, tc.msg)
			continue
		}
		require.Error(t, err, tc.msg)
		assert.Contains(t, err.Error(), tc.fail)
	}
	assert.NoError(t, errs.CheckErr(nil))
	assert.Error(t, errs.CheckErr(fmt.Errorf("%w: gonumx: x", errKind), errKind))
}

func TestWrap(t *testing.T) {
	own := errs.Errorf(errKind, "arrowx: offset %d is out of range", -1)
	w := errs.Wrap("arrowx", own, "FromArray of %s", "int32")
	assert.EqualError(t, w, "arrowx: offset -1 is out of range (FromArray of int32)")
	assert.ErrorIs(t, w, errKind)
	assert.EqualError(t, errs.Wrap("arrowx", errInner, "ToArray"), "arrowx: ToArray: core: tensor was released")
	assert.ErrorIs(t, errs.Wrap("arrowx", errInner, "ToArray"), errInner)
	assert.Same(t, own, errs.Wrap("arrowx", own, ""))
	assert.EqualError(t, errs.Wrap("arrowx", errInner, ""), "arrowx: core: tensor was released")
}
