package safetensorsx_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// Write puts the tensors in the reference writer's order (largest elements first, then by
// name) behind a header padded to 8 bytes.
func ExampleWrite() {
	var buf bytes.Buffer
	err := safetensorsx.Write(&buf, map[string]*core.Tensor{
		"bias":   core.MustFromSlice([]float32{0.5, -0.5}),
		"weight": core.MustFromSlice([]float64{1, 2, 3, 4}, 2, 2),
	}, map[string]string{"format": "pt"})
	if err != nil {
		log.Fatal(err)
	}
	n := buf.Bytes()[0]
	fmt.Printf("header length %d, data at %d\n", n, 8+int(n))
	fmt.Printf("%q\n", buf.Bytes()[8:8+n])
	// Output:
	// header length 152, data at 160
	// "{\"__metadata__\":{\"format\":\"pt\"},\"weight\":{\"dtype\":\"F64\",\"shape\":[2,2],\"data_offsets\":[0,32]},\"bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[32,40]}} "
}

// Open maps a file; its tensors are read-only views of the mapping, unmapped when the File is
// closed and the last tensor released.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")
	err = safetensorsx.WriteFile(path, map[string]*core.Tensor{
		"layer.0.weight": core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3),
		"layer.0.bias":   core.MustFromSlice([]float32{0.1, 0.2}),
	}, nil)
	if err != nil {
		log.Fatal(err)
	}

	f, err := safetensorsx.Open(path, adapters.ZeroCopyOnly())
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	for _, name := range f.Names() {
		info, _ := f.Info(name)
		fmt.Println(name, info.Format, info.Shape, info.Begin, info.End)
	}
	w, err := f.Tensor("layer.0.weight")
	if err != nil {
		log.Fatal(err)
	}
	defer w.Release()
	v, _ := core.At[float32](w, 1, 2)
	fmt.Println("w[1,2] =", v, "read-only:", w.ReadOnly())
	// Output:
	// layer.0.bias F32 [2] 0 8
	// layer.0.weight F32 [2 3] 8 32
	// w[1,2] = 6 read-only: true
}

// ReadFile reads every tensor into memory of its own.
func ExampleReadFile() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "t.safetensors")
	if err := safetensorsx.WriteFile(path, map[string]*core.Tensor{"x": core.MustFromSlice([]int32{7, 8, 9})}, nil); err != nil {
		log.Fatal(err)
	}
	ts, err := safetensorsx.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	x, _ := ts["x"].Int32s()
	fmt.Println(x, ts["x"].Flags()&core.FlagIsCopied != 0)
	// Output:
	// [7 8 9] true
}
