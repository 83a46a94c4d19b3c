package ggufx_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
	"github.com/dlpack-go/dlpack/gonumx"
	"github.com/dlpack-go/dlpack/memory"
)

// exampleFile writes a small model: metadata, a float32 weight, an int32 index, and a Q8_0
// weight, and returns its path in a new directory (to remove).
func exampleFile() (dir, path string) {
	dir, err := os.MkdirTemp("", "ggufx-example")
	if err != nil {
		log.Fatal(err)
	}
	md := &ggufx.Metadata{}
	md.Set("general.architecture", "llama")
	md.Set("llama.context_length", uint32(4096))
	md.Set("llama.rope.freq_base", float32(10000))
	md.Set("tokenizer.ggml.tokens", []string{"<s>", "</s>", "hello"})
	w := make([]float32, 2*32)
	for i := range w {
		w[i] = float32(i%32) - 16
	}
	w[0], w[32] = 127, -127 // each block's largest magnitude: Q8_0 then holds these exactly
	path = filepath.Join(dir, "model.gguf")
	err = ggufx.WriteFile(path, md, []ggufx.Entry{
		ggufx.Plain("norm.weight", core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)),
		ggufx.Plain("ids", core.MustFromSlice([]int32{7, 8, 9})),
		ggufx.Quantized("attn.weight", core.MustFromSlice(w, 2, 32), ggufx.Q8_0),
	})
	if err != nil {
		log.Fatal(err)
	}
	return dir, path
}

// Open maps a file and reads its header; Tensor is a read-only view of the mapping in C order
// (the file's dimensions, innermost first, reversed).
func ExampleOpen() {
	dir, path := exampleFile()
	defer os.RemoveAll(dir)
	f, err := ggufx.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	for _, ti := range f.Tensors() {
		fmt.Printf("%-12s %-4s dims %v shape %v, %d bytes\n", ti.Name, ti.Type, ti.Dims, ti.Shape(), ti.Size)
	}
	x, err := f.Tensor("norm.weight")
	if err != nil {
		log.Fatal(err)
	}
	defer x.Release()
	v, _ := x.ReadOnlyFloat32s()
	fmt.Println(x.Shape(), v, x.ReadOnly())
	// Output:
	// norm.weight  F32  dims [3 2] shape [2 3], 24 bytes
	// ids          I32  dims [3] shape [3], 12 bytes
	// attn.weight  Q8_0 dims [32 2] shape [2 32], 68 bytes
	// [2 3] [1 2 3 4 5 6] true
}

// Metadata has typed getters, and iterates in file order.
func ExampleFile_Metadata() {
	dir, path := exampleFile()
	defer os.RemoveAll(dir)
	f, err := ggufx.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	md := f.Metadata()
	arch, _ := md.String("general.architecture")
	ctx, _ := md.Uint32("llama.context_length")
	toks, _ := md.Strings("tokenizer.ggml.tokens")
	fmt.Println(arch, ctx, toks)
	_, err = md.Float64("llama.rope.freq_base")
	fmt.Println(err)
	for k, v := range md.All() {
		fmt.Printf("%s: %s = %v\n", k, v.Type(), v)
	}
	// Output:
	// llama 4096 [<s> </s> hello]
	// ggufx: metadata "llama.rope.freq_base" is float32, not float64
	// general.architecture: string = "llama"
	// llama.context_length: uint32 = 4096
	// llama.rope.freq_base: float32 = 10000
	// tokenizer.ggml.tokens: array = [3]string{"<s>" "</s>" "hello"}
}

// Tensor refuses a quantized tensor and says what to do instead.
func ExampleFile_Tensor() {
	dir, path := exampleFile()
	defer os.RemoveAll(dir)
	f, err := ggufx.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	_, err = f.Tensor("attn.weight")
	fmt.Println(err)
	// Output:
	// ggufx: tensor "attn.weight" is Q8_0, which has no DLPack element type: File.Blocks shares its 34-byte blocks, File.Dequantize converts it to float32 or float16
}

// Blocks shares a quantized tensor's blocks as bytes, without copying.
func ExampleFile_Blocks() {
	dir, path := exampleFile()
	defer os.RemoveAll(dir)
	f, err := ggufx.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	b, bi, err := f.Blocks("attn.weight")
	if err != nil {
		log.Fatal(err)
	}
	defer b.Release()
	raw, _ := b.ReadOnlyBytes()
	fmt.Println(b.DType(), b.Shape(), bi.Type, bi.BlockSize, bi.BlockBytes, bi.Blocks, bi.Shape)
	fmt.Printf("block 0: d = %#04x, q = %d %d %d\n", uint16(raw[0])|uint16(raw[1])<<8, int8(raw[2]), int8(raw[3]), int8(raw[33]))
	// Output:
	// uint8 [2 34] Q8_0 32 34 2 [2 32]
	// block 0: d = 0x3c00, q = 127 -15 15
}

// Dequantize computes a quantized tensor's elements as ggml does, into a tensor of its own;
// here it goes on to Gonum.
func ExampleFile_Dequantize() {
	dir, path := exampleFile()
	defer os.RemoveAll(dir)
	f, err := ggufx.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	w, err := f.Dequantize("attn.weight", core.Float32)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Release()
	v, _ := w.Float32s()
	fmt.Println(w.Shape(), v[:4], v[32:36])

	w64, err := memory.Cast(w, core.Float64) // Gonum's matrices are float64
	if err != nil {
		log.Fatal(err)
	}
	m, err := gonumx.ToDense(w64) // shares w64's memory
	if err != nil {
		log.Fatal(err)
	}
	ones := mat.NewVecDense(32, nil)
	for i := range 32 {
		ones.SetVec(i, 1)
	}
	var y mat.VecDense
	y.MulVec(m, ones)
	fmt.Println(y.RawVector().Data)
	// Output:
	// [2 32] [127 -15 -14 -13] [-127 -15 -14 -13]
	// [127 -127]
}

// Write lays out metadata, tensor infos and aligned data; ParseHeader reads it back.
func ExampleWrite() {
	md := &ggufx.Metadata{}
	md.Set("general.alignment", uint32(64))
	md.Set("nested", []ggufx.Value{ggufx.MustValueOf([]int32{1, 2}), ggufx.MustValueOf([]int32{3})})
	var buf bytes.Buffer
	err := ggufx.Write(&buf, md, []ggufx.Entry{
		ggufx.Plain("a", core.MustFromSlice([]float64{1, 2, 3})),
		ggufx.Plain("b", core.MustFromSlice([]int8{-1, 1}, 2, 1)),
	})
	if err != nil {
		log.Fatal(err)
	}
	h, err := ggufx.ParseHeader(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(buf.Len(), h.Version, h.Alignment, h.DataOffset)
	for _, ti := range h.Tensors {
		fmt.Println(ti.Name, ti.Type, ti.Dims, ti.Offset, ti.Size)
	}
	n, _ := h.Metadata.Arrays("nested")
	fmt.Println(n)
	// Output:
	// 384 3 64 256
	// a F64 [3] 0 24
	// b I8 [1 2] 64 2
	// [[2]int32{1 2} [1]int32{3}]
}

// ParseHeader refuses bad input with an error that names the value at fault.
func ExampleParseHeader() {
	_, err := ggufx.ParseHeader([]byte("GGUF\x01\x00\x00\x00"))
	fmt.Println(err)
	// Output:
	// ggufx: GGUF version 1 (32-bit counts, before August 2023) is not read; convert the file with a current llama.cpp
}

// OpenSplit opens every shard of a split model from the first one's name.
func ExampleOpenSplit() {
	dir, err := os.MkdirTemp("", "ggufx-split")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	prefix := filepath.Join(dir, "model")
	for no := range 2 {
		md := &ggufx.Metadata{}
		md.Set(ggufx.SplitNoKey, uint16(no))
		md.Set(ggufx.SplitCountKey, uint16(2))
		x := core.MustFromSlice([]float32{float32(no)})
		if err := ggufx.WriteFile(ggufx.SplitPath(prefix, no, 2), md, []ggufx.Entry{ggufx.Plain(fmt.Sprint("blk.", no), x)}); err != nil {
			log.Fatal(err)
		}
	}
	s, err := ggufx.OpenSplit(ggufx.SplitPath(prefix, 0, 2))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println(filepath.Base(ggufx.SplitPath(prefix, 0, 2)), len(s.Files()), s.Names())
	// Output:
	// model-00001-of-00002.gguf 2 [blk.0 blk.1]
}

// WriteFile writes a new file beside the old one and renames it: tensors still mapped from the
// old file stay valid.
func ExampleWriteFile() {
	dir, err := os.MkdirTemp("", "ggufx-writefile")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "w.gguf")
	if err := ggufx.WriteFile(path, nil, []ggufx.Entry{ggufx.Plain("w", core.MustFromSlice([]int16{1, 2}))}); err != nil {
		log.Fatal(err)
	}
	f, err := ggufx.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	old, err := f.Tensor("w")
	if err != nil {
		log.Fatal(err)
	}
	defer old.Release()
	if err := ggufx.WriteFile(path, nil, []ggufx.Entry{ggufx.Plain("w", core.MustFromSlice([]int16{3, 4}))}); err != nil {
		log.Fatal(err)
	}
	v, _ := old.ReadOnlyInt16s()
	fmt.Println(v)
	// Output:
	// [1 2]
}

// ValueOf makes metadata values of Go values; GGUF's integer widths are the Go types'.
func ExampleValueOf() {
	for _, x := range []any{uint32(32), "llama", []float32{0.5, 1}, []ggufx.Value{ggufx.MustValueOf([]int32{1}), ggufx.MustValueOf([]int32{2, 3})}, 7} {
		v, err := ggufx.ValueOf(x)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(v.Type(), v)
	}
	// Output:
	// uint32 32
	// string "llama"
	// array [2]float32{0.5 1}
	// array [2]array{[1]int32{1} [2]int32{2 3}}
	// ggufx: GGUF has no value type for Go's int
}

// A file that holds a tensor of a type ggml does not have (here a fork's type 157) opens: that
// tensor is listed with its number and its extent, and taking it says what is known; the
// file's other tensors read as ever.
func ExampleTensorInfo_Err() {
	var buf bytes.Buffer
	err := ggufx.Write(&buf, nil, []ggufx.Entry{
		ggufx.Quantized("fork.weight", core.MustNew(core.Float32, 2, 32), ggufx.Q8_0),
		ggufx.Plain("norm", core.MustFromSlice([]float32{1, 2, 3}, 3)),
	})
	if err != nil {
		log.Fatal(err)
	}
	b := buf.Bytes()
	at := bytes.Index(b, []byte("fork.weight")) + len("fork.weight") + 4 + 2*8 // name, rank, dims
	binary.LittleEndian.PutUint32(b[at:], 157)                                 // as a fork writes it

	f, err := ggufx.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		log.Fatal(err)
	}
	for _, ti := range f.Tensors() {
		fmt.Println(ti.Name, ti.Type, ti.Size, ti.Err != nil)
	}
	_, err = f.Dequantize("fork.weight", core.Float32)
	fmt.Println(err)
	norm, err := f.Tensor("norm")
	if err != nil {
		log.Fatal(err)
	}
	defer norm.Release()
	v, _ := norm.ReadOnlyFloat32s()
	fmt.Println(v)
	// Output:
	// fork.weight type 157 (unknown) 96 true
	// norm F32 12 false
	// ggufx: tensor "fork.weight" is of ggml type 157, which ggml does not have (its types end at 42: a newer ggml's, or a fork's?): 64 elements in 96 bytes (up to tensor "norm"), which File.Blocks shares
	// [1 2 3]
}
