package onnxx_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
)

func TestIOInfoString(t *testing.T) {
	for _, tc := range []struct {
		info onnxx.IOInfo
		want string
	}{
		{onnxx.IOInfo{Name: "X", DType: core.Float32, ElementType: onnxx.Float, Shape: []int64{-1, 3, 224, 224},
			Symbols: []string{"batch", "", "", ""}}, "X: float32 [batch 3 224 224]"},
		{onnxx.IOInfo{Name: "Y", DType: core.Int64, Shape: []int64{2, -1}, Symbols: []string{"", ""}}, "Y: int64 [2 ?]"},
		{onnxx.IOInfo{Name: "s", DType: core.Float64}, "s: float64, scalar"},
		{onnxx.IOInfo{Name: "any", DType: core.Float32, UnknownRank: true}, "any: float32, any shape"},
		{onnxx.IOInfo{Name: "W", DType: core.Float32, Shape: []int64{3, 3}, Initializer: true}, "W: float32 [3 3], initializer"},
		{onnxx.IOInfo{Name: "names", ElementType: onnxx.String, Shape: []int64{-1}}, "names: ONNX string [?]"},
	} {
		assert.Equal(t, tc.want, tc.info.String())
		assert.NotContains(t, fmt.Sprint(tc.info), "<nil>", "fmt uses String")
	}
}

// IOInfo prints as one line: what a notebook shows for sess.Inputs().
func ExampleIOInfo_String() {
	in := onnxx.IOInfo{Name: "X", DType: core.Float32, ElementType: onnxx.Float,
		Shape: []int64{-1, 3}, Symbols: []string{"batch", ""}}
	fmt.Println(in)
	fmt.Println([]onnxx.IOInfo{in, {Name: "Y", DType: core.Float32, UnknownRank: true}})
	// Output:
	// X: float32 [batch 3]
	// [X: float32 [batch 3] Y: float32, any shape]
}
