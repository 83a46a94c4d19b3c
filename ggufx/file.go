package ggufx

import (
	"fmt"
	"io"
	"runtime"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/mmap"
	"github.com/dlpack-go/dlpack/internal/tensorio"
	"github.com/dlpack-go/dlpack/memory"
)

// File is a GGUF file opened by Open: its header, read and checked, and its bytes, mapped
// read-only into memory. Tensors taken from it are views of the mapping (File.Tensor,
// File.Blocks) or new tensors (File.Dequantize, and copies under adapters.AlwaysCopy). Its
// methods may be called from several goroutines at once (an adapters.ReportCopy given to Open
// is then set by each call, racing: give it only where calls are sequential).
type File struct {
	h    *Header
	path string
	o    adapters.Options
	st   *mmap.Source
	ra   io.ReaderAt // what NewReader was given; nil for Open's files
}

// Open opens the GGUF file called name by memory map. It maps the file read-only and reads and
// checks its header (see ReadHeader), and nothing else: it costs the same for 10 MiB and
// 10 GiB of tensors, and no data is read until a tensor's elements are touched. The mapping is
// undone exactly once, when the File is closed (or unreachable) and the last tensor over it is
// released (or unreachable).
//
// opts are the copy policy File.Tensor and File.Blocks follow: by default and under
// adapters.ZeroCopyOnly() they share the mapping; under adapters.AlwaysCopy() they copy. On
// systems without memory maps, tensors are read into memory of their own, and
// adapters.ZeroCopyOnly() refuses to open.
func Open(name string, opts ...adapters.Option) (*File, error) {
	o := adapters.Apply(opts...)
	f, size, err := tensorio.OpenRegular(name, "ggufx", ErrNotRegularFile)
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	st := &mmap.Source{}
	var h *Header
	if mmap.Supported && size > 0 {
		b, err := mmap.Map(f, size)
		if err != nil {
			return nil, fmt.Errorf("ggufx: %w (mapping %s)", err, name)
		}
		st.M = mmap.NewShared(b)
		h, err = ParseHeader(b)
		if err != nil {
			st.M.Drop()
			return nil, fmt.Errorf("%w (in %s)", err, name)
		}
	} else {
		if o.Policy == adapters.CopyNever && size > 0 {
			return nil, errs.Errorf(adapters.ErrCopyRequired, "ggufx: %v, and adapters.ZeroCopyOnly() forbids a copy (opening %s)", mmap.ErrUnsupported, name)
		}
		h, err = ReadHeader(io.NewSectionReader(f, 0, size), size)
		if err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, name)
		}
		st.F, keep = f, true
	}
	file := &File{h: h, path: name, o: o, st: st}
	runtime.AddCleanup(file, func(s *mmap.Source) { s.Close() }, st)
	return file, nil
}

// Close lets go of the File's hold on the mapping. Tensors taken before stay valid: the
// mapping lives until the last of them is released. Tensor, Blocks and Dequantize fail with
// ErrClosed afterwards. Close may be called more than once.
func (f *File) Close() error {
	if err := f.st.Close(); err != nil {
		return fmt.Errorf("ggufx: %w", err)
	}
	return nil
}

// Header returns the parsed header. It is shared: do not modify it.
func (f *File) Header() *Header { return f.h }

// Version is the file's GGUF version (2 or 3).
func (f *File) Version() uint32 { return f.h.Version }

// Metadata returns the file's metadata. It is shared: do not modify it.
func (f *File) Metadata() *Metadata { return f.h.Metadata }

// Tensors returns the infos of every tensor, in file order. The slice is shared: do not
// modify it.
func (f *File) Tensors() []TensorInfo { return f.h.Tensors }

// Names returns the tensors' names in file order.
func (f *File) Names() []string { return f.h.Names() }

// Info describes the tensor called name, or fails with ErrNotFound.
func (f *File) Info(name string) (TensorInfo, error) { return f.h.Info(name) }

// Tensor returns the tensor called name as a read-only core tensor over the mapping, in C order
// (its shape is the file's dimensions reversed: see TensorInfo.Shape()), without copying: for
// the plain types F32, F16, BF16, F64, I8, I16, I32 and I64, whose elements are DLPack types.
// The tensor holds the mapping: it stays valid after Close, until it is released.
//
// Quantized tensors (Q4_0 ... Q2_0) are refused with ErrQuantized, which names the type and
// the two ways on: Blocks (the blocks as bytes, shared) and Dequantize (elements as float32 or
// float16, computed). A tensor whose layout is not known (TensorInfo.Err: an unknown or removed
// type number, a fork's layout under a mainline one) is refused with that error (ErrType).
//
// Under adapters.AlwaysCopy() the tensor is a copy (writable, core.FlagIsCopied);
// adapters.ReportCopy reports which.
func (f *File) Tensor(name string) (*core.Tensor, error) {
	ti, err := f.h.Info(name)
	if err != nil {
		return nil, err
	}
	if ti.Err != nil {
		return nil, ti.Err
	}
	dt, ok := ti.Type.DType()
	if !ok {
		return nil, errs.Errorf(ErrQuantized, "ggufx: tensor %q is %s, which has no DLPack element type: File.Blocks shares its %d-byte blocks, File.Dequantize converts it to float32 or float16",
			name, ti.Type, ti.Type.BlockBytes())
	}
	return f.view(ti, dt, ti.Shape())
}

// BlockInfo describes the blocks of a tensor: File.Blocks's tensor has shape
// [Blocks, BlockBytes].
type BlockInfo struct {
	// Type is the tensor's ggml type.
	Type Type
	// BlockSize is the elements in one block (32 to 256 for quantized types, 1 for plain ones);
	// 0 for a tensor whose layout is not known (TensorInfo.Err), whose bytes are one block.
	BlockSize int
	// BlockBytes is the bytes of one block.
	BlockBytes int
	// Blocks is the number of blocks.
	Blocks int64
	// Shape is the tensor's logical shape in C order (TensorInfo.Shape()): each row (last
	// dimension) is Shape[len(Shape)-1]/BlockSize consecutive blocks.
	Shape []int64
}

// Blocks returns the data of the tensor called name, of any type, as a read-only uint8 tensor of
// shape [blocks, block bytes] over the mapping (zero-copy, held like Tensor's), and what the
// blocks are. For quantized types it is the way to hand the blocks as they are to code that
// knows the format (a ggml kernel, a GPU upload).
//
// A tensor whose layout is not known (TensorInfo.Err: a type number ggml does not have or has
// removed, a fork's layout under a mainline number) is shared as one block of its TensorInfo.Size
// bytes, the extent its offset gives (padding included), with BlockSize 0.
func (f *File) Blocks(name string) (*core.Tensor, BlockInfo, error) {
	ti, err := f.h.Info(name)
	if err != nil {
		return nil, BlockInfo{}, err
	}
	bi := BlockInfo{Type: ti.Type, BlockSize: ti.Type.BlockSize(), BlockBytes: ti.Type.BlockBytes(), Blocks: ti.Blocks(), Shape: ti.Shape()}
	if ti.Err != nil {
		bi.BlockSize, bi.BlockBytes, bi.Blocks = 0, int(ti.Size), min(ti.Size, 1)
	}
	t, err := f.view(ti, core.Uint8, []int64{bi.Blocks, int64(bi.BlockBytes)})
	if err != nil {
		return nil, BlockInfo{}, err
	}
	return t, bi, nil
}

// view makes the tensor of ti's bytes as dt and shape: over the mapping, or a copy.
func (f *File) view(ti TensorInfo, dt core.DLDataType, shape []int64) (*core.Tensor, error) {
	if f.st.Closed() {
		return nil, errs.Errorf(ErrClosed, "ggufx: %s was closed", f.path)
	}
	m := f.st.M
	if ti.Size == 0 { // nothing to share: a fresh empty tensor
		t, err := core.New(dt, shape...)
		if err == nil {
			f.o.Report(false)
		}
		return t, err
	}
	shareable := m != nil && !hostBigEndian
	cp, err := f.o.Choose(shareable, "the file is not memory-mapped on this system, or this machine is big-endian")
	if err != nil {
		return nil, fmt.Errorf("ggufx: %w (tensor %q)", err, ti.Name)
	}
	if cp {
		h, t, b, err := newOut(dt, shape)
		if err != nil {
			return nil, fmt.Errorf("ggufx: %w (tensor %q)", err, ti.Name)
		}
		defer h.Release()
		if err := f.readAt(ti, b); err != nil {
			t.Release()
			return nil, err
		}
		if hostBigEndian {
			memory.SwapBytes(b, dt)
		}
		f.o.Report(true)
		return t, nil
	}
	if !m.Retain() {
		return nil, errs.Errorf(ErrClosed, "ggufx: %s was closed", f.path)
	}
	off := f.h.DataOffset + ti.Offset
	d := core.Desc{Data: unsafe.Pointer(&m.Bytes()[off]), Device: core.CPUDevice, DType: dt, Shape: shape, Flags: core.FlagReadOnly}
	t, err := core.Wrap(d, m.Drop)
	if err != nil { // Wrap has dropped the reference
		return nil, fmt.Errorf("ggufx: %w (tensor %q)", err, ti.Name)
	}
	f.o.Report(false)
	return t, nil
}

// readAt copies ti's bytes into b (len(b) == ti.Size), holding the mapping while it does.
func (f *File) readAt(ti TensorInfo, b []byte) error {
	return f.withData(ti, func(src []byte) error { copy(b, src); return nil })
}

// withData calls fn with ti's bytes, from the mapping (held for the call) or read from the file.
func (f *File) withData(ti TensorInfo, fn func(src []byte) error) error {
	if f.st.Closed() {
		return errs.Errorf(ErrClosed, "ggufx: %s was closed", f.path)
	}
	off := f.h.DataOffset + ti.Offset
	if m := f.st.M; m != nil {
		if !m.Retain() {
			return errs.Errorf(ErrClosed, "ggufx: %s was closed", f.path)
		}
		defer m.Drop()
		return fn(m.Bytes()[off : off+ti.Size])
	}
	ra := f.ra
	if ra == nil {
		if f.st.Closed() || f.st.F == nil {
			return errs.Errorf(ErrClosed, "ggufx: %s was closed", f.path)
		}
		ra = f.st.F
	}
	src := make([]byte, ti.Size)
	if _, err := ra.ReadAt(src, off); err != nil {
		if f.st.Closed() {
			return errs.Errorf(ErrClosed, "ggufx: %s was closed", f.path)
		}
		return fmt.Errorf("ggufx: reading tensor %q (%d bytes at offset %d): %w", ti.Name, ti.Size, off, err)
	}
	return fn(src)
}

// hostBigEndian reports the byte order of this machine; the format is little-endian.
var hostBigEndian = tensorio.HostBigEndian

// newOut allocates a C-order tensor of dt and shape in memory of its own, not initialised
// (memory.NewUninitBytes: mapped memory from 4 MiB up), flagged core.FlagIsCopied, and returns
// it with its bytes, held until the caller releases h (after filling every byte).
func newOut(dt core.DLDataType, shape []int64) (h core.Held, t *core.Tensor, b []byte, err error) {
	t, b, err = memory.NewUninitBytes(dt, core.FlagIsCopied, shape...)
	if err != nil {
		return core.Held{}, nil, nil, err
	}
	if h, err = core.Hold(t); err != nil { // not reached: t is new
		t.Release()
		return core.Held{}, nil, nil, err
	}
	return h, t, b, nil
}
