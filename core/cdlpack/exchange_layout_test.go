//go:build cgo

package cdlpack_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack/internal/ctest"
)

// TestExchangeAPILayoutMatchesC compares core's DLPackExchangeAPIHeader and DLPackExchangeAPI
// with the C declaration of dlpack_abi.h, field by field, and both with the numbers dlpack.h
// v1.3 implies on 64-bit platforms (a 16-byte header, then five pointers).
func TestExchangeAPILayoutMatchesC(t *testing.T) {
	var (
		h core.DLPackExchangeAPIHeader
		a core.DLPackExchangeAPI
	)
	goLayout := map[string]uintptr{
		"DLPackExchangeAPIHeader":                                 unsafe.Sizeof(h),
		"DLPackExchangeAPIHeader.version":                         unsafe.Offsetof(h.Version),
		"DLPackExchangeAPIHeader.prev_api":                        unsafe.Offsetof(h.PrevAPI),
		"DLPackExchangeAPI":                                       unsafe.Sizeof(a),
		"DLPackExchangeAPI.header":                                unsafe.Offsetof(a.Header),
		"DLPackExchangeAPI.managed_tensor_allocator":              unsafe.Offsetof(a.ManagedTensorAllocator),
		"DLPackExchangeAPI.managed_tensor_from_py_object_no_sync": unsafe.Offsetof(a.ManagedTensorFromPyObjectNoSync),
		"DLPackExchangeAPI.managed_tensor_to_py_object_no_sync":   unsafe.Offsetof(a.ManagedTensorToPyObjectNoSync),
		"DLPackExchangeAPI.dltensor_from_py_object_no_sync":       unsafe.Offsetof(a.DLTensorFromPyObjectNoSync),
		"DLPackExchangeAPI.current_work_stream":                   unsafe.Offsetof(a.CurrentWorkStream),
	}
	c := ctest.CExchangeLayout()
	require.Len(t, c, len(goLayout))
	for k, want := range c {
		got, ok := goLayout[k]
		if assert.True(t, ok, "no Go value for %s", k) {
			assert.Equal(t, want, got, "%s: C says %d, Go says %d", k, want, got)
		}
	}
	spec := map[string]uintptr{
		"DLPackExchangeAPIHeader": 16, "DLPackExchangeAPIHeader.version": 0,
		"DLPackExchangeAPIHeader.prev_api": 8,
		"DLPackExchangeAPI":                56, "DLPackExchangeAPI.header": 0,
		"DLPackExchangeAPI.managed_tensor_allocator":              16,
		"DLPackExchangeAPI.managed_tensor_from_py_object_no_sync": 24,
		"DLPackExchangeAPI.managed_tensor_to_py_object_no_sync":   32,
		"DLPackExchangeAPI.dltensor_from_py_object_no_sync":       40,
		"DLPackExchangeAPI.current_work_stream":                   48,
	}
	for k, want := range spec {
		assert.Equal(t, want, goLayout[k], "Go %s", k)
		assert.Equal(t, want, c[k], "C %s", k)
	}
	assert.True(t, ctest.CExchangeTableOK(), "a C table of dlpack.h's signatures")
	capsule, attr := ctest.CExchangeNames()
	assert.Equal(t, core.ExchangeAPICapsuleName, capsule)
	assert.Equal(t, core.ExchangeAPIAttr, attr)
}
