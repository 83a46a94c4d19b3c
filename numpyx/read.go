package numpyx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/tensorio"
	"github.com/dlpack-go/dlpack/memory"
)

// ReadHeader reads the magic, version, length field and header dict of a .npy file from r and
// leaves r at the first data byte. It refuses bad magic and versions other than 1.0, 2.0 and
// 3.0 (ErrVersion), header lengths over MaxHeaderLen, short input (ErrTruncated) and anything
// ParseHeader refuses. The header is read as it arrives: a length field that lies costs no
// more memory than the bytes present.
func ReadHeader(r io.Reader) (Header, error) {
	var pre [len(Magic) + 2]byte
	if err := readFull(r, pre[:], "magic and version"); err != nil {
		return Header{}, err
	}
	if string(pre[:len(Magic)]) != Magic {
		return Header{}, errs.Errorf(ErrFormat, "numpyx: the file starts with %q, not the .npy magic %q", pre[:len(Magic)], Magic)
	}
	h := Header{Version: Version{pre[6], pre[7]}}
	var hlen int64
	switch h.Version {
	case Version{1, 0}:
		var b [2]byte
		if err := readFull(r, b[:], "header length"); err != nil {
			return Header{}, err
		}
		hlen = int64(binary.LittleEndian.Uint16(b[:]))
	case Version{2, 0}, Version{3, 0}:
		var b [4]byte
		if err := readFull(r, b[:], "header length"); err != nil {
			return Header{}, err
		}
		hlen = int64(binary.LittleEndian.Uint32(b[:]))
	default:
		return Header{}, errs.Errorf(ErrVersion, "numpyx: .npy format version %s is not supported (want 1.0, 2.0 or 3.0)", h.Version)
	}
	if hlen > MaxHeaderLen {
		return Header{}, errs.Errorf(ErrHeader, "numpyx: header length %d exceeds %d", hlen, MaxHeaderLen)
	}
	var buf bytes.Buffer
	if n, err := io.CopyN(&buf, r, hlen); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Header{}, errs.Errorf(ErrTruncated, "numpyx: header length field promises %d bytes, only %d present", hlen, n)
		}
		return Header{}, fmt.Errorf("numpyx: reading the header: %w", err)
	}
	parsed, err := ParseHeader(buf.Bytes())
	if err != nil {
		return Header{}, err
	}
	parsed.Version = h.Version
	parsed.DataOffset = int64(len(pre)) + hlen + 2
	if h.Version.Major > 1 {
		parsed.DataOffset += 2
	}
	return parsed, nil
}

// readFull is io.ReadFull with ErrTruncated for short input.
func readFull(r io.Reader, b []byte, what string) error {
	n, err := io.ReadFull(r, b)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return errs.Errorf(ErrTruncated, "numpyx: only %d of the %d bytes of the %s are present", n, len(b), what)
	default:
		return fmt.Errorf("numpyx: reading the %s: %w", what, err)
	}
}

// Read reads a .npy array from r into a new tensor in memory of its own (memory.NewUninit: Go
// memory under memory.Allocation.MappedMin, mapped memory from core's cache of blocks from there
// up, given back when the tensor is released or collected): C order, or Fortran-strided
// (without reordering) when the file says fortran_order, with multi-byte elements swapped to
// this machine's byte order and bools normalised to 0 and 1. The tensor is writable.
//
// The data goes straight into the tensor's allocation. When r can tell how many bytes remain
// (it has a Len method, like *bytes.Reader, or it is an io.Seeker, like *os.File), a header
// that promises more than that is refused before anything is allocated; otherwise the data is
// gathered in growing chunks until half of it has arrived, so that a lying header never
// costs more than twice the bytes actually present.
//
// Reading is a copy, so adapters.ZeroCopyOnly() refuses (adapters.ErrCopyRequired: use Map), and
// adapters.ReportCopy reports true; the other options change nothing.
func Read(r io.Reader, opts ...adapters.Option) (*core.Tensor, error) {
	o := adapters.Apply(opts...)
	if _, err := o.Choose(false, readWhy); err != nil {
		return nil, fmt.Errorf("numpyx: reading: %w", err)
	}
	t, err := read(r)
	if err != nil {
		return nil, err
	}
	o.Report(true)
	return t, nil
}

// readWhy is why Read and ReadFile do not share.
const readWhy = "reading copies the file's bytes into memory of the tensor's own (Map shares them)"

// read is Read once the copy policy has allowed it.
func read(r io.Reader) (*core.Tensor, error) {
	h, err := ReadHeader(r)
	if err != nil {
		return nil, err
	}
	return readData(r, h, tensorio.Remaining(r))
}

// ReadFile reads the .npy file called name (see Read). The file's size bounds what its header
// may promise, and a read needs memory for the array only. What is not a regular file (a named
// pipe, a device, a directory) is refused with ErrNotRegularFile, without blocking. opts are
// Read's.
func ReadFile(name string, opts ...adapters.Option) (*core.Tensor, error) {
	o := adapters.Apply(opts...)
	if _, err := o.Choose(false, readWhy); err != nil {
		return nil, fmt.Errorf("numpyx: reading %s: %w", name, err)
	}
	f, _, err := openRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := read(f)
	if err != nil {
		return nil, err
	}
	o.Report(true)
	return t, nil
}

// newFor allocates the tensor h describes: C order, or the transposed view of a C-order
// allocation of the reversed shape when the file is in Fortran order. It returns the tensor to
// hand out and the bytes to fill, in file order.
func newFor(h Header) (*core.Tensor, []byte, error) {
	shape := append([]int64{}, h.Shape...)
	fortran := h.Fortran && len(shape) > 1
	if fortran {
		for i, j := 0, len(shape)-1; i < j; i, j = i+1, j-1 {
			shape[i], shape[j] = shape[j], shape[i]
		}
	}
	// every byte is read from the file before anyone sees the tensor: no need to zero it first
	t, b, err := memory.NewUninitBytes(h.DType, 0, shape...)
	if err != nil {
		return nil, nil, fmt.Errorf("numpyx: %w", err)
	}
	if fortran {
		// the view holds the memory on its own; let go of the tensor under it at once
		ft, err := t.Transpose()
		t.Release()
		if err != nil {
			return nil, nil, fmt.Errorf("numpyx: %w", err)
		}
		t = ft
	}
	return t, b, nil
}

// readData reads the data h describes from r, which holds avail more bytes (-1: unknown).
func readData(r io.Reader, h Header, avail int64) (*core.Tensor, error) {
	n := h.DataLen()
	if avail >= 0 && n > avail {
		return nil, errs.Errorf(ErrTruncated, "numpyx: header promises %d data bytes (%s %v), only %d present", n, h.Descr, h.Shape, avail)
	}
	var t *core.Tensor
	var b, allocErr = []byte(nil), error(nil)
	got, allocated, err := tensorio.ReadData(r, n, avail >= 0, func() ([]byte, error) {
		t, b, allocErr = newFor(h)
		return b, allocErr
	})
	switch {
	case allocErr != nil:
		return nil, allocErr
	case err != nil:
		if allocated {
			t.Release()
		}
		return nil, dataErr(err, h, got)
	}
	fixup(b, h)
	return t, nil
}

func dataErr(err error, h Header, got int64) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errs.Errorf(ErrTruncated, "numpyx: header promises %d data bytes (%s %v), only %d present", h.DataLen(), h.Descr, h.Shape, got)
	}
	return fmt.Errorf("numpyx: reading the data: %w", err)
}

// fixup brings data read from a file to what DLPack memory holds: native byte order, and bools
// that are 0 or 1.
func fixup(b []byte, h Header) {
	if h.DType == core.Bool {
		for i, v := range b {
			if v > 1 {
				b[i] = 1
			}
		}
		return
	}
	if h.NeedsSwap() {
		memory.SwapBytes(b, h.DType)
	}
}
