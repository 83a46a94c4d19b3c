package numpyx

import (
	"fmt"
	"io"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// Map opens the .npy file called name as a read-only tensor over the file's own bytes, mapped
// into memory: opening costs the same for any file size, nothing is read until it is touched,
// and pages the kernel evicts are read back from the file. The mapping is undone (munmap) when
// the tensor and every view of it are released or unreachable (see core's ownership rules).
// Fortran-order files map as Fortran-strided tensors. Writing through the tensor is refused
// (core.ErrReadOnly). What is not a regular file (a named pipe, a device, a directory) is refused
// with ErrNotRegularFile, without blocking.
//
// A file whose data cannot be viewed as it lies cannot be mapped without a copy: data in the
// other byte order than this machine's (DLPack memory is native-endian), data not aligned for
// its element type (files NumPy writes are aligned to 64 bytes), and every file on systems
// without mmap. The copy policy decides (see package adapters): by default such a file is read
// into memory of its own with ReadFile semantics (swapped, writable); under adapters.ZeroCopyOnly()
// Map refuses it with adapters.ErrCopyRequired; adapters.AlwaysCopy() always reads;
// adapters.ReportCopy tells which happened. Empty arrays are never mapped. A bool file is
// checked when it is mapped (its bytes are read once): a Go bool must be 0 or 1, so a file with
// other bytes is read and normalised instead, like ReadFile does (or refused under ZeroCopyOnly).
//
// Like NumPy's memmap, the tensor is the file: if another process rewrites the file while it is
// mapped, the "read-only" tensor's elements change; if it truncates the file, touching the
// pages past the new end is a fatal fault (SIGBUS) that no Go code can recover from. Map only
// files nothing else writes while they are mapped; read them (ReadFile) otherwise. This
// package's writers (WriteFile, WriteNPZ) replace a file by renaming a new one over it, so a
// mapping of the old file stays valid and keeps the old elements.
func Map(name string, opts ...adapters.Option) (*core.Tensor, error) {
	o := adapters.Apply(opts...)
	f, size, err := openRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := ReadHeader(io.NewSectionReader(f, 0, size))
	if err != nil {
		return nil, err
	}
	if avail := size - h.DataOffset; h.DataLen() > avail {
		return nil, errs.Errorf(ErrTruncated, "numpyx: header promises %d data bytes (%s %v), only %d present", h.DataLen(), h.Descr, h.Shape, avail)
	}
	why := ""
	switch align := alignOf(h.DType); {
	case h.Len() == 0:
		why = "an empty array has no data to map"
	case !mmapSupported:
		why = "memory maps are not supported on this system"
	case h.NeedsSwap():
		why = fmt.Sprintf("data in %s is in the other byte order than this machine's", h.Descr)
	case h.DataOffset%align != 0:
		why = fmt.Sprintf("data at offset %d is not aligned to %d bytes for %s", h.DataOffset, align, h.Descr)
	}
	if h.Len() == 0 {
		t, _, err := newFor(h)
		if err != nil {
			return nil, err
		}
		o.Report(false)
		return t, nil
	}
	var mapped *core.Tensor
	if why == "" && o.Policy != adapters.CopyAlways {
		if mapped, err = mapFile(f, size, h); err != nil {
			return nil, err
		}
		if h.DType == core.Bool && !boolBytes(mapped) {
			// a Go bool must hold 0 or 1 and nothing else (x && !x would be true): such a
			// file is read and normalised, like ReadFile does
			mapped.Release()
			mapped, why = nil, "bool data holds bytes other than 0 and 1"
		}
	}
	cp, err := o.Choose(why == "", why)
	if err != nil {
		return nil, fmt.Errorf("numpyx: %w (mapping %s)", err, name)
	}
	if cp {
		if mapped != nil {
			mapped.Release()
		}
		if mapped, err = readData(io.NewSectionReader(f, h.DataOffset, size-h.DataOffset), h, size-h.DataOffset); err != nil {
			return nil, err
		}
	}
	o.Report(cp)
	return mapped, nil
}

// boolBytes reports whether every byte of a mapped bool tensor is 0 or 1.
func boolBytes(t *core.Tensor) bool {
	h, err := core.Hold(t)
	if err != nil {
		return false
	}
	defer h.Release()
	span, _, err := core.ReadOnlySpan[bool](t) // the whole data of the file: C or Fortran order
	if err != nil {
		return false
	}
	for _, b := range unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(span))), len(span)) {
		if b > 1 {
			return false
		}
	}
	return true
}

// alignOf returns the alignment the Go type of an element needs.
func alignOf(dt core.DLDataType) int64 {
	a := int64(dt.Size())
	if dt.Code == core.CodeComplex {
		a /= 2
	}
	return min(a, 8)
}

// stridesFor returns the element strides of the data h describes.
func stridesFor(h Header) []int64 {
	s := make([]int64, len(h.Shape))
	acc := int64(1)
	for k := range h.Shape {
		i := len(h.Shape) - 1 - k
		if h.Fortran {
			i = k
		}
		s[i] = acc
		if h.Shape[i] > 1 {
			acc *= h.Shape[i]
		}
	}
	return s
}
