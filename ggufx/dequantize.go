package ggufx

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// parallelMin is the elements from which Dequantize splits the work between goroutines: each
// takes at least this many.
const parallelMin = 1 << 18

// Dequantizable reports whether Dequantize converts tensors of type t: every quantized type of
// ggml (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, the K-quants Q2_K to Q6_K and Q8_K, the IQ types
// IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_NL and IQ4_XS, the ternary TQ1_0 and
// TQ2_0, MXFP4, NVFP4, Q1_0 and Q2_0) and the float types F32, F16 and BF16.
func Dequantizable(t Type) bool { _, ok := dequantizers[t]; return ok }

// DequantizableTypes lists the types Dequantize converts, in ggml's order.
func DequantizableTypes() []Type {
	var out []Type
	for t := range dequantizers {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Dequantize converts the tensor called name into a new C-order tensor of dtype (core.Float32
// or core.Float16) with the tensor's logical shape (TensorInfo.Shape()), computing each element
// exactly as ggml's reference dequantization (dequantize_row_* of ggml-quants.c) does in
// float32; float16 results are those float32 values rounded to the nearest half (ties to even).
// It converts the types Dequantizable reports (the float types too, F32 to float32 being a
// copy); the others (F64 and the integer types) are refused with ErrType, naming the type.
//
// The result is in memory of its own, from core's large-allocation path (memory.NewUninitBytes:
// mapped memory from 4 MiB up), writable and flagged core.FlagIsCopied; the mapping is held only
// while it is read. Tensors of 2^18 elements and more are converted on up to GOMAXPROCS
// goroutines.
func (f *File) Dequantize(name string, dtype core.DLDataType) (*core.Tensor, error) {
	ti, err := f.h.Info(name)
	if err != nil {
		return nil, err
	}
	if ti.Err != nil {
		return nil, ti.Err
	}
	if dtype != core.Float32 && dtype != core.Float16 {
		return nil, errs.Errorf(ErrType, "ggufx: tensor %q: Dequantize makes float32 or float16, not %s", name, dtype)
	}
	dq, ok := dequantizers[ti.Type]
	if !ok {
		return nil, errs.Errorf(ErrType, "ggufx: tensor %q is %s, which Dequantize does not convert (it converts %v); File.Blocks shares its blocks", name, ti.Type, DequantizableTypes())
	}
	if f.st.Closed() {
		return nil, errs.Errorf(ErrClosed, "ggufx: %s was closed", f.path)
	}
	shape := ti.Shape()
	if ti.Size == 0 {
		return core.New(dtype, shape...)
	}
	h, t, b, err := newOut(dtype, shape)
	if err != nil {
		return nil, fmt.Errorf("ggufx: %w (tensor %q)", err, name)
	}
	defer h.Release()
	if err := f.dequantizeTo(ti, dq, b, dtype); err != nil {
		t.Release()
		return nil, err
	}
	return t, nil
}

// DequantizeInto is Dequantize into the caller's tensor: it converts the tensor called name, as
// Dequantize does, into dst, a writable, C-contiguous host tensor of float32 or float16 with the
// tensor's logical shape (TensorInfo.Shape), and holds dst (core.Hold) while it writes. Nothing is
// allocated for the elements: a destination used again costs no page faults, which is where most
// of Dequantize's time goes for a large tensor.
//
// A dst of another dtype is refused with ErrType, of another shape with core.ErrShape; one that is
// read-only, not contiguous, not in host memory or released with core's error saying so
// (core.ErrReadOnly, core.ErrNotContiguous, core.ErrNotHost, core.ErrReleased). dst is not
// written unless every check passed. It must not share memory with the file's mapping.
func (f *File) DequantizeInto(name string, dst *core.Tensor) error {
	ti, err := f.h.Info(name)
	if err != nil {
		return err
	}
	if ti.Err != nil {
		return ti.Err
	}
	if dst == nil {
		return errs.Errorf(core.ErrNil, "ggufx: tensor %q: DequantizeInto's destination is nil", name)
	}
	h, err := core.Hold(dst)
	if err != nil {
		return fmt.Errorf("ggufx: tensor %q: the destination: %w", name, err)
	}
	defer h.Release()
	dtype := dst.DType()
	if dtype != core.Float32 && dtype != core.Float16 {
		return errs.Errorf(ErrType, "ggufx: tensor %q: DequantizeInto writes float32 or float16, not %s", name, dtype)
	}
	dq, ok := dequantizers[ti.Type]
	if !ok {
		return errs.Errorf(ErrType, "ggufx: tensor %q is %s, which DequantizeInto does not convert (it converts %v); File.Blocks shares its blocks", name, ti.Type, DequantizableTypes())
	}
	if shape := ti.Shape(); !slices.Equal(shape, dst.Shape()) {
		return errs.Errorf(core.ErrShape, "ggufx: tensor %q has shape %v; the destination's is %v", name, shape, dst.Shape())
	}
	b, err := dst.Bytes()
	if err != nil {
		return fmt.Errorf("ggufx: tensor %q: the destination: %w", name, err)
	}
	if f.st.Closed() {
		return errs.Errorf(ErrClosed, "ggufx: %s was closed", f.path)
	}
	if ti.Size == 0 {
		return nil
	}
	return f.dequantizeTo(ti, dq, b, dtype)
}

// dequantizeTo converts the tensor ti through dq into b, whose elements are dtype: with the
// non-temporal kernel where there is one, the output is large and b is 32-byte aligned.
func (f *File) dequantizeTo(ti TensorInfo, dq dequantizer, b []byte, dtype core.DLDataType) error {
	if ti.Err != nil || ti.Size != ti.Blocks()*int64(ti.Type.BlockBytes()) { // never read a layout that does not fit
		return errs.Errorf(ErrType, "ggufx: tensor %q: %d bytes are not %d blocks of %s (%v)", ti.Name, ti.Size, ti.Blocks(), ti.Type, ti.Err)
	}
	if s, ok := streamers[ti.Type]; ok && dtype == core.Float32 && int64(len(b)) >= streamMin &&
		uintptr(unsafe.Pointer(unsafe.SliceData(b)))%32 == 0 {
		dq = s // the workers' parts start at whole blocks: 128-byte multiples, still aligned
	}
	return f.withData(ti, func(src []byte) error {
		dequantize(dq, ti.Type, b, dtype, src, ti.Len())
		return nil
	})
}

// dequantize converts n elements of type typ from src into dst, whose elements are dtype.
func dequantize(dq dequantizer, typ Type, dst []byte, dtype core.DLDataType, src []byte, n int64) {
	bs, bb := int64(typ.BlockSize()), int64(typ.BlockBytes())
	blocks := n / bs
	workers := min(int64(runtime.GOMAXPROCS(0)), max(n/parallelMin, 1))
	per := (blocks + workers - 1) / workers
	var wg sync.WaitGroup
	for w := int64(0); w < workers; w++ {
		lo, hi := w*per, min((w+1)*per, blocks)
		if lo >= hi {
			break
		}
		run := func() { convert(dq, bs, bb, dst, dtype, src, lo, hi) }
		if w == workers-1 || hi == blocks {
			run()
			continue
		}
		wg.Go(run)
	}
	wg.Wait()
}

// convert dequantizes blocks [lo, hi).
func convert(dq dequantizer, bs, bb int64, dst []byte, dtype core.DLDataType, src []byte, lo, hi int64) {
	in := src[lo*bb : hi*bb]
	if dtype == core.Float32 {
		out := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)/4)[lo*bs : hi*bs]
		dq(out, in)
		return
	}
	out := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)/2)[lo*bs : hi*bs]
	var buf [4096]float32
	per := int64(len(buf)) / bs * bs
	for i := int64(0); i < int64(len(out)); i += per {
		k := min(per, int64(len(out))-i)
		dq(buf[:k], in[i/bs*bb:])
		for j, v := range buf[:k] {
			out[i+int64(j)] = float16.Fromfloat32(v).Bits()
		}
	}
}
