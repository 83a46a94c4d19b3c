package safetensorsx

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/tensorio"
)

// hostBigEndian reports the byte order of this machine; the format is little-endian.
var hostBigEndian = tensorio.HostBigEndian

// readWhy is why reading into Go memory is a copy, for adapters.ErrCopyRequired.
const readWhy = "reading into Go memory copies the file's bytes (Open or Map share them)"

// ReadFile reads every tensor of the safetensors file called path into Go memory: one
// allocation per tensor (64-byte aligned, C order, writable, flagged core.FlagIsCopied), the
// data read from the file straight into it. The file must be well formed as a whole (see
// ParseHeader; its size must be exactly what the header promises): a file that lies costs
// no allocation beyond its header.
//
// Reading is a copy, so adapters.ZeroCopyOnly() refuses (adapters.ErrCopyRequired: use Open or
// Map); adapters.ReportCopy reports true.
func ReadFile(path string, opts ...adapters.Option) (map[string]*core.Tensor, error) {
	if _, err := adapters.Apply(opts...).Decide(false, readWhy); err != nil {
		return nil, fmt.Errorf("safetensorsx: reading %s: %w", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensorsx: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensorsx: %w", err)
	}
	r, err := NewReader(f, fi.Size())
	if err != nil {
		return nil, err
	}
	return r.ReadAll()
}

// Read reads every tensor of a safetensors file from r into Go memory, in the order of the
// data in the file, each into an allocation of its own (see ReadFile); the header's metadata
// is not returned (use ReadHeader and ReadTensors for it). r is read once, front to back.
//
// When r can tell how many bytes remain (it has a Len method, like *bytes.Reader, or it is an
// io.Seeker, like *os.File), that must be exactly what the header promises, and a header that
// promises more is refused before anything is allocated. Otherwise a tensor's data is
// gathered in growing chunks until half of it has arrived before it is allocated whole, so
// that a lying header never costs more than twice the bytes actually present, and bytes after
// the last tensor are not looked at.
func Read(r io.Reader, opts ...adapters.Option) (map[string]*core.Tensor, error) {
	if _, err := adapters.Apply(opts...).Decide(false, readWhy); err != nil {
		return nil, fmt.Errorf("safetensorsx: %w", err)
	}
	h, err := ReadHeader(r)
	if err != nil {
		return nil, err
	}
	return ReadTensors(r, h)
}

// ReadTensors reads the data of every tensor h lists from r, which is at the first data byte
// (where ReadHeader left it). See Read.
func ReadTensors(r io.Reader, h *Header) (map[string]*core.Tensor, error) {
	avail := tensorio.Remaining(r)
	if avail >= 0 {
		if err := checkSize(h, avail); err != nil {
			return nil, err
		}
	}
	out := make(map[string]*core.Tensor, len(h.Tensors))
	for _, ti := range h.Tensors {
		t, err := readStream(r, ti, avail < 0)
		if err != nil {
			return nil, fmt.Errorf("safetensorsx: tensor %q: %w", ti.Name, err)
		}
		out[ti.Name] = t
	}
	return out, nil
}

// checkSize checks that the data section holds exactly avail bytes.
func checkSize(h *Header, avail int64) error {
	switch {
	case h.DataLen > avail:
		return fmt.Errorf("%w: the header promises %d data bytes, only %d present", ErrTruncated, h.DataLen, avail)
	case h.DataLen < avail:
		return fmt.Errorf("%w: %d bytes after the last tensor's data (the tensors cover %d of %d)", ErrLayout, avail-h.DataLen, h.DataLen, avail)
	}
	return nil
}

// readStream reads the next tensor from r. With unknown, r's size is not known and a large
// tensor is gathered in chunks until half of it is here (tensorio.ReadData).
func readStream(r io.Reader, ti TensorInfo, unknown bool) (*core.Tensor, error) {
	n := ti.Len()
	var t *core.Tensor
	var b, allocErr = []byte(nil), error(nil)
	got, _, err := tensorio.ReadData(r, n, !unknown, func() ([]byte, error) {
		t, b, allocErr = alloc(ti)
		return b, allocErr
	})
	switch {
	case allocErr != nil:
		return nil, allocErr
	case err != nil:
		return nil, eofErr(err, "%d data bytes promised, only %d present", n, got)
	}
	fixup(b, ti.DType)
	return t, nil
}

// alloc allocates the tensor ti describes in Go memory, 64-byte aligned and flagged
// FlagIsCopied, and returns it with its bytes to fill. ti has been checked (its byte length is
// what its shape and dtype need).
func alloc(ti TensorInfo) (*core.Tensor, []byte, error) {
	n := ti.Len()
	if n > maxAlloc {
		return nil, nil, fmt.Errorf("%w: %d bytes are more than this process can allocate", ErrLayout, n)
	}
	d := core.Desc{Device: core.CPUDevice, DType: ti.DType, Shape: ti.Shape, Flags: core.FlagIsCopied}
	var b, buf []byte
	if n > 0 {
		buf = make([]byte, n+core.Alignment-1)
		off := 0
		if mis := int(uintptr(unsafe.Pointer(unsafe.SliceData(buf))) % core.Alignment); mis != 0 {
			off = core.Alignment - mis
		}
		b = buf[off : off+int(n) : off+int(n)]
		d.Data = unsafe.Pointer(unsafe.SliceData(b))
	}
	t, err := core.WrapKeep(d, buf)
	if err != nil {
		return nil, nil, fmt.Errorf("safetensorsx: %w", err)
	}
	return t, b, nil
}

// maxAlloc bounds one tensor's allocation (Go's own limit on 64-bit platforms is 2^48 bytes;
// asking for more panics instead of failing).
const maxAlloc = 1<<47 - core.Alignment

// fixup brings data read from a file to what DLPack memory holds: bools that are 0 or 1, and
// this machine's byte order.
func fixup(b []byte, dt core.DLDataType) {
	if dt == core.Bool {
		for i, v := range b {
			if v > 1 {
				b[i] = 1
			}
		}
		return
	}
	if hostBigEndian {
		tensorio.SwapBytes(b, dt)
	}
}

// Reader reads a safetensors file through an io.ReaderAt: the header is read once, by
// NewReader; tensors are then read one by one, by name, each straight into its own
// allocation, in any order and from several goroutines at once (as r allows).
type Reader struct {
	r    io.ReaderAt
	size int64
	h    *Header
}

// NewReader reads and checks the header of the safetensors file r holds (size bytes: exactly
// what the header promises) and reads no data.
func NewReader(r io.ReaderAt, size int64) (*Reader, error) {
	h, err := ReadHeader(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, err
	}
	if err := checkSize(h, size-h.DataOffset); err != nil {
		return nil, err
	}
	return &Reader{r: r, size: size, h: h}, nil
}

// Header returns the parsed header. It is shared: do not modify it.
func (r *Reader) Header() *Header { return r.h }

// Names returns the tensors' names in file order.
func (r *Reader) Names() []string { return r.h.Names() }

// Metadata returns the "__metadata__" map (nil when the file has none). It is shared: do not
// modify it.
func (r *Reader) Metadata() map[string]string { return r.h.Metadata }

// Info describes the tensor called name, or fails with ErrNotFound.
func (r *Reader) Info(name string) (TensorInfo, error) { return r.h.info(name) }

// Tensor reads the tensor called name into Go memory (see ReadFile), or fails with ErrNotFound.
func (r *Reader) Tensor(name string) (*core.Tensor, error) {
	ti, err := r.h.info(name)
	if err != nil {
		return nil, err
	}
	t, err := r.read(ti)
	if err != nil {
		return nil, fmt.Errorf("safetensorsx: tensor %q: %w", name, err)
	}
	return t, nil
}

func (r *Reader) read(ti TensorInfo) (*core.Tensor, error) {
	t, b, err := alloc(ti)
	if err != nil {
		return nil, err
	}
	if len(b) > 0 {
		if k, err := r.r.ReadAt(b, r.h.DataOffset+ti.Begin); k < len(b) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return nil, eofErr(err, "%d data bytes promised, only %d present", len(b), k)
		}
	}
	fixup(b, ti.DType)
	return t, nil
}

// ReadAll reads every tensor into Go memory (see ReadFile), front to back: tensors of at
// least readBuf bytes are read straight into their allocation, smaller ones through a buffer
// of that size (so that a file of many small tensors is not one read call per tensor).
func (r *Reader) ReadAll() (map[string]*core.Tensor, error) {
	out := make(map[string]*core.Tensor, len(r.h.Tensors))
	br := bufio.NewReaderSize(io.NewSectionReader(r.r, r.h.DataOffset, r.h.DataLen), readBuf)
	for _, ti := range r.h.Tensors {
		t, err := readStream(br, ti, false)
		if err != nil {
			return nil, fmt.Errorf("safetensorsx: tensor %q: %w", ti.Name, err)
		}
		out[ti.Name] = t
	}
	return out, nil
}

// readBuf is the buffer ReadAll reads small tensors through.
const readBuf = 256 << 10
