package safetensorsx

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/mmap"
	"github.com/dlpack-go/dlpack/internal/tensorio"
)

// File is a safetensors file opened by Open: its header, read and checked, and its bytes,
// mapped read-only into memory. Tensors taken from it are views of the mapping (or copies,
// see Tensor). Its methods may be called from several goroutines at once (an
// adapters.ReportCopy given to Open is then set by each call, racing: give it only where calls
// are sequential).
type File struct {
	h    *Header
	path string
	o    adapters.Options
	st   *mmap.Source
}

// Open opens the safetensors file at path by memory map. Opening reads and checks the header
// (see ParseHeader; the file's size must be exactly what the header promises) and maps the
// file read-only: it costs the same for any size of data, and no data is read until a tensor's
// elements are touched. The File's tensors are then views of the mapping (see Tensor); the
// mapping is undone exactly once, when the File is closed (or unreachable) and the last
// tensor over it is released (or unreachable).
//
// opts are the copy policy every Tensor call follows. Under adapters.AlwaysCopy() nothing is mapped
// and every tensor is read into memory of its own (see Reader.Tensor); on systems without mmap the
// same happens by default and adapters.ZeroCopyOnly() refuses to open.
func Open(path string, opts ...adapters.Option) (*File, error) {
	o := adapters.Apply(opts...)
	f, size, err := tensorio.OpenRegular(path, "safetensorsx", ErrNotRegularFile)
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	h, err := ReadHeader(io.NewSectionReader(f, 0, size))
	if err != nil {
		return nil, err
	}
	if err := checkSize(h, size-h.DataOffset); err != nil {
		return nil, err
	}
	if !mmap.Supported && o.Policy == adapters.CopyNever && h.DataLen > 0 {
		return nil, errs.Errorf(adapters.ErrCopyRequired, "safetensorsx: opening %s without a copy needs a memory map, and adapters.ZeroCopyOnly() forbids a copy: %w", path, mmap.ErrUnsupported)
	}
	st := &mmap.Source{}
	switch {
	case h.DataLen == 0:
	case mmap.Supported && o.Policy != adapters.CopyAlways:
		b, err := mmap.Map(f, size)
		if err != nil {
			return nil, fmt.Errorf("safetensorsx: mapping %s: %w", path, err)
		}
		st.M = mmap.NewShared(b)
	default:
		st.F, keep = f, true
	}
	file := &File{h: h, path: path, o: o, st: st}
	runtime.AddCleanup(file, func(s *mmap.Source) { s.Close() }, st)
	return file, nil
}

// Map opens the file at path (see Open), takes every tensor (see File.Tensors) and closes
// the File: the tensors keep the mapping, which is undone when the last of them is released.
func Map(path string, opts ...adapters.Option) (map[string]*core.Tensor, error) {
	f, err := Open(path, opts...)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Tensors()
}

// Close lets go of the File's hold on the mapping (or closes the file, when it is not
// mapped). Tensors taken before stay valid: the mapping lives until the last is released.
// Tensor and Tensors fail with ErrClosed afterwards. Close may be called more than once.
func (f *File) Close() error {
	if err := f.st.Close(); err != nil {
		return fmt.Errorf("safetensorsx: %w", err)
	}
	return nil
}

// Header returns the parsed header. It is shared: do not modify it.
func (f *File) Header() *Header { return f.h }

// Names returns the tensors' names in file order.
func (f *File) Names() []string { return f.h.Names() }

// Metadata returns the "__metadata__" map (nil when the file has none). It is shared: do not
// modify it.
func (f *File) Metadata() map[string]string { return f.h.Metadata }

// Info describes the tensor called name, or fails with ErrNotFound.
func (f *File) Info(name string) (TensorInfo, error) { return f.h.info(name) }

// Shareable reports whether the tensor called name can be a view of the mapping, and if not,
// why: the file is not mapped, its data is misaligned for its dtype (files the reference
// writer and this package write are aligned; older writers ordered tensors by name alone), or
// this machine is big-endian (the format is little-endian).
func (f *File) Shareable(name string) (ok bool, why string) {
	ti, err := f.h.info(name)
	if err != nil {
		return false, err.Error()
	}
	w := f.why(ti)
	return w == "", w
}

func (f *File) why(ti TensorInfo) string {
	off := f.h.DataOffset + ti.Begin
	switch align := alignOf(ti.DType); {
	case ti.Len() == 0:
		return ""
	case f.st.M == nil:
		if !mmap.Supported {
			return "memory maps are not supported on this system"
		}
		return "the file was opened with adapters.AlwaysCopy and is not mapped"
	case off%align != 0:
		return fmt.Sprintf("tensor %q (%s) starts at file offset %d, not aligned to %d bytes", ti.Name, ti.Format, off, align)
	case hostBigEndian && ti.DType.Size() > 1:
		return "this machine is big-endian and the file is little-endian"
	}
	return ""
}

// alignOf returns the alignment the Go type of an element needs.
func alignOf(dt core.DLDataType) int64 {
	a := int64(dt.Size())
	if dt.Code == core.CodeComplex {
		a /= 2
	}
	return max(min(a, 8), 1)
}

// Tensor returns the tensor called name (ErrNotFound if there is none): a read-only view of
// the mapped bytes, C order, costing no copy and no read (writing through it fails with
// core.ErrReadOnly; the file's pages are read when touched). It holds the mapping until it
// and its views are released or unreachable.
//
// A tensor that cannot be a view (see Shareable) follows the copy policy Open was given: by
// default it is copied into memory of its own (writable, flagged core.FlagIsCopied: mapped
// memory from core's cache from 4 MiB up, Go memory below, as Reader.Tensor reads), under
// adapters.ZeroCopyOnly() it is refused with adapters.ErrCopyRequired; adapters.ReportCopy
// tells which happened. Tensors without elements are fresh empty tensors under every policy:
// nothing is shared or copied, so they are not flagged core.FlagIsCopied and ReportCopy reports
// false.
func (f *File) Tensor(name string) (*core.Tensor, error) {
	ti, err := f.h.info(name)
	if err != nil {
		return nil, err
	}
	return f.tensor(ti, f.o)
}

func (f *File) tensor(ti TensorInfo, o adapters.Options) (*core.Tensor, error) {
	defer runtime.KeepAlive(f) // its cleanup must not close the file under a read
	if f.st.Closed() {
		return nil, errs.Errorf(ErrClosed, "safetensorsx: %s is closed", f.path)
	}
	// the header is shared (Header returns it): a caller that changed it must get an error,
	// not a tensor past the end of the mapping
	if err := ti.checkLen(); err != nil {
		return nil, err
	}
	if ti.Len() == 0 { // nothing to share or copy: a fresh empty tensor, not flagged as a copy
		t, err := copyTensor(ti, nil)
		if err != nil {
			return nil, err
		}
		o.Report(false)
		return t, nil
	}
	why := f.why(ti)
	cp, err := o.Choose(why == "", why)
	if err != nil {
		return nil, fmt.Errorf("safetensorsx: %w", err)
	}
	t, err := f.take(ti, cp)
	if err != nil {
		return nil, err
	}
	o.Report(cp)
	return t, nil
}

// take is tensor once the copy is decided: a view of the mapping, or with cp a copy of its
// bytes, or of the file's when nothing is mapped.
func (f *File) take(ti TensorInfo, cp bool) (*core.Tensor, error) {
	m := f.st.M
	if m != nil && !m.Retain() {
		return nil, errs.Errorf(ErrClosed, "safetensorsx: %s is closed", f.path)
	}
	if m == nil {
		t, err := (&Reader{r: f.st.F, h: f.h}).read(ti)
		if err != nil && f.st.Closed() {
			err = errors.Join(ErrClosed, err)
		}
		return t, err
	}
	off := f.h.DataOffset + ti.Begin
	if off < 0 || ti.Begin < 0 || off > int64(len(m.Bytes()))-ti.Len() {
		m.Drop()
		return nil, errs.Errorf(ErrLayout, "safetensorsx: tensor %q: bytes [%d, %d) of the file lie outside its %d bytes", ti.Name, off, off+ti.Len(), len(m.Bytes()))
	}
	if cp {
		t, err := copyTensor(ti, m.Bytes()[off:off+ti.Len()])
		m.Drop()
		return t, err
	}
	d := core.Desc{Data: unsafe.Pointer(&m.Bytes()[off]), Device: core.CPUDevice, DType: ti.DType, Shape: ti.Shape, Flags: core.FlagReadOnly}
	t, err := core.Wrap(d, m.Drop)
	if err != nil { // Wrap has dropped the reference
		return nil, inTensor(ti.Name, err)
	}
	return t, nil
}

// Tensors returns every tensor (see Tensor), by name. adapters.ReportCopy reports whether any
// of them was copied. On an error, the tensors already made are released.
func (f *File) Tensors() (map[string]*core.Tensor, error) {
	out := make(map[string]*core.Tensor, len(f.h.Tensors))
	anyCopied := false
	for _, ti := range f.h.Tensors {
		var copied bool
		o := f.o
		o.Copied = &copied
		t, err := f.tensor(ti, o)
		if err != nil {
			for _, t := range out {
				t.Release()
			}
			return nil, err
		}
		anyCopied = anyCopied || copied
		out[ti.Name] = t
	}
	f.o.Report(anyCopied)
	return out, nil
}
