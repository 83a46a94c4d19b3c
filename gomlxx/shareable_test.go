package gomlxx_test

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gomlxx"
)

// ShareableFromTensor asks about GoMLX -> core (FromTensor), Shareable about core -> GoMLX
// (ToTensor): a tensor GoMLX allocated on the host is shared, a core tensor never is.
func ExampleShareableFromTensor() {
	g := tensors.FromShape(shapes.Make(dtypes.Float32, 2, 2))
	ok, _ := gomlxx.ShareableFromTensor(g)
	fmt.Println("GoMLX -> core shares:", ok)
	back, _ := gomlxx.Shareable(core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2))
	fmt.Println("core -> GoMLX shares:", back)
	// Output:
	// GoMLX -> core shares: true
	// core -> GoMLX shares: false
}
