//go:build cgo

package pyexchange_test

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/pyexchange"
)

// Handles are how a Go library loaded into Python names its tensors: Python holds the integer,
// Go the tensor.
func ExampleNewHandle() {
	t := core.MustFromSlice([]int32{7, 8, 9}, 3)
	h, err := pyexchange.NewHandle(t)
	if err != nil {
		fmt.Println(err)
		return
	}
	t.Release() // the handle holds a view of its own
	got, _ := pyexchange.Lookup(h)
	vals, _ := got.Int32s()
	fmt.Println(vals, pyexchange.LiveHandles())
	fmt.Println(pyexchange.Release(h), pyexchange.LiveHandles())
	_, err = pyexchange.Lookup(h)
	fmt.Println(errors.Is(err, pyexchange.ErrHandle))
	// Output:
	// [7 8 9] 1
	// <nil> 0
	// true
}

// What __dlpack__ hands a versioned consumer: the Go memory itself when it can be shared, a copy
// flagged IS_COPIED when not, and a refusal under copy=False (ZeroCopyOnly). Here the consumer is
// Go itself (ImportVersioned), as in a round trip through Python.
func ExampleExportVersioned() {
	data := []float32{1, 2, 3, 4}
	t := core.MustFromSlice(data, 2, 2)

	m, err := pyexchange.ExportVersioned(t)
	if err != nil {
		fmt.Println(err)
		return
	}
	back, err := pyexchange.ImportVersioned(m) // back owns m: its Release runs the deleter
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("shared:", (*float32)(back.Data()) == &data[0], "copied flag:", m.Flags&core.FlagIsCopied != 0)
	back.Release()

	rev, _ := t.Reverse(0)
	_, err = pyexchange.ExportVersioned(rev, adapters.ZeroCopyOnly())
	fmt.Println("reversed, copy=False:", errors.Is(err, adapters.ErrCopyRequired))
	// Output:
	// shared: true copied flag: false
	// reversed, copy=False: true
}
