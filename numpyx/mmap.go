package numpyx

import (
	"fmt"
	"io"
	"os"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
)

// Map opens the .npy file called name as a read-only tensor over the file's own bytes, mapped
// into memory: opening costs the same for any file size, nothing is read until it is touched,
// and pages the kernel evicts are read back from the file. The mapping is undone (munmap) when
// the tensor and every view of it are released or unreachable (see core's ownership rules).
// Fortran-order files map as Fortran-strided tensors. Writing through the tensor is refused
// (core.ErrReadOnly).
//
// A file whose data cannot be viewed as it lies cannot be mapped without a copy: data in the
// other byte order than this machine's (DLPack memory is native-endian), data not aligned for
// its element type (files NumPy writes are aligned to 64 bytes), and every file on systems
// without mmap. The copy policy decides (see package adapters): by default such a file is read
// into Go memory with ReadFile semantics (swapped, writable); under adapters.ZeroCopyOnly()
// Map refuses it with adapters.ErrCopyRequired; adapters.AlwaysCopy() always reads;
// adapters.ReportCopy tells which happened. Empty arrays are never mapped.
func Map(name string, opts ...adapters.Option) (*core.Tensor, error) {
	o := adapters.Apply(opts...)
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("numpyx: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("numpyx: %w", err)
	}
	size := fi.Size()
	h, err := ReadHeader(io.NewSectionReader(f, 0, size))
	if err != nil {
		return nil, err
	}
	if avail := size - h.DataOffset; h.DataLen() > avail {
		return nil, fmt.Errorf("%w: header promises %d data bytes (%s %v), only %d present", ErrTruncated, h.DataLen(), h.Descr, h.Shape, avail)
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
		o.Report(false)
		t, _, err := newFor(h)
		return t, err
	}
	cp, err := o.Decide(why == "", why)
	if err != nil {
		return nil, fmt.Errorf("numpyx: mapping %s: %w", name, err)
	}
	if cp {
		return readData(io.NewSectionReader(f, h.DataOffset, size-h.DataOffset), h, size-h.DataOffset)
	}
	return mapFile(f, size, h)
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
