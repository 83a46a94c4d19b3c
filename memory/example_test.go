package memory_test

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// AllocSize says what a new tensor would take, or why it cannot be had, before anything is
// allocated: here a view that repeats one element 2^40 times, which a copy would make 8 TiB.
func ExampleAllocSize() {
	n, err := memory.AllocSize(core.Float32, 1024, 1024)
	fmt.Println(n, err)
	big, _ := core.MustFromSlice([]float64{1}, 1).BroadcastTo(1 << 40)
	_, err = memory.AllocSize(big.DType(), big.Shape()...)
	fmt.Println(errors.Is(err, core.ErrTooLarge))
	// Output:
	// 4194304 <nil>
	// true
}

// NewUninit allocates a tensor the caller fills; Release gives a large one's block back to the
// cache at once.
func ExampleNewUninit() {
	t, err := memory.NewUninit(core.Float32, 2, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Release()
	h, _ := core.Hold(t)
	e, _ := core.Elements[float32](t)
	for i := range e {
		e[i] = float32(i)
	}
	fmt.Println(t.Shape(), e)
	h.Release()
	// Output:
	// [2 3] [0 1 2 3 4 5]
}

// NewUninitBytes allocates a tensor that a reader fills through its bytes, here flagged as a
// copy of what it read.
func ExampleNewUninitBytes() {
	t, b, err := memory.NewUninitBytes(core.Uint8, core.FlagIsCopied, 2, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Release()
	copy(b, []byte{1, 2, 3, 4}) // every byte, before anyone reads the tensor
	e, _ := core.Elements[uint8](t)
	fmt.Println(t.Shape(), e, t.Flags()&core.FlagIsCopied != 0)
	// Output:
	// [2 2] [1 2 3 4] true
}
