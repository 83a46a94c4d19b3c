package numpyx_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// Read takes a .npy stream (here one Write made) into a new tensor in Go memory.
func ExampleRead() {
	var buf bytes.Buffer
	if err := numpyx.Write(&buf, core.MustFromSlice([]int16{1, -2, 3, -4}, 2, 2)); err != nil {
		fmt.Println(err)
		return
	}
	t, err := numpyx.Read(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, _ := t.Int16s()
	fmt.Println(t.DType(), t.Shape(), v)
	// Output:
	// int16 [2 2] [1 -2 3 -4]
}

// WriteFile and ReadFile: a tensor to a .npy file that np.load reads, and back.
func ExampleReadFile() {
	dir, err := os.MkdirTemp("", "numpyx-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "x.npy")
	if err := numpyx.WriteFile(name, core.MustFromSlice([]float64{0.5, 1.5, 2.5}, 3)); err != nil {
		fmt.Println(err)
		return
	}
	t, err := numpyx.ReadFile(name)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, _ := t.Float64s()
	fmt.Println(t.Shape(), v)
	// Output:
	// [3] [0.5 1.5 2.5]
}
