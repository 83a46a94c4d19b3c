package numpyx

import (
	"fmt"
	"io"
	"os"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
)

// HeaderOf returns the header Write would write for t: its dtype in this machine's byte order,
// its shape, and fortran_order set when t is Fortran- but not C-contiguous. It refuses dtypes
// NumPy has no equivalent for (ErrUnsupportedDType: bfloat16, float8, sub-byte and vector
// types) and tensors the CPU cannot read.
func HeaderOf(t *core.Tensor) (Header, error) {
	if t == nil {
		return Header{}, fmt.Errorf("numpyx: nil tensor")
	}
	if !t.HostAccessible() {
		return Header{}, fmt.Errorf("numpyx: %w: %s", core.ErrNotHost, t.Device())
	}
	if t.Released() {
		return Header{}, fmt.Errorf("numpyx: %w", core.ErrReleased)
	}
	descr, err := descrOf(t.DType())
	if err != nil {
		return Header{}, err
	}
	h := Header{Version: Version{1, 0}, Descr: descr, DType: t.DType(), BigEndian: hostBigEndian && t.DType().Size() > 1,
		Shape: t.Shape(), Fortran: !t.IsContiguous() && t.IsFortranContiguous()}
	hb := encodeHeader(h)
	h.Version, h.DataOffset = Version{hb[6], hb[7]}, int64(len(hb))
	return h, nil
}

// chunkSize is the scratch buffer through which tensors of other layouts are streamed.
const chunkSize = 1 << 20

// Write writes t to w in .npy format, with the header NumPy's np.save writes (version 1.0
// unless the header needs 2.0, padded so that the data starts on a 64-byte boundary). A C- or
// Fortran-contiguous tensor is written straight from its memory (fortran_order set to match);
// any other layout (transposed views, steps, negative or zero strides) is streamed in C order
// through a 1 MiB buffer, never copied whole.
func Write(w io.Writer, t *core.Tensor) error {
	h, err := HeaderOf(t)
	if err != nil {
		return err
	}
	if _, err := w.Write(encodeHeader(h)); err != nil {
		return fmt.Errorf("numpyx: writing the header: %w", err)
	}
	if err := writeData(w, t, h.Fortran); err != nil {
		return err
	}
	return nil
}

// WriteFile writes t to the file called name (see Write), replacing it. A file left half
// written by an error is removed.
func WriteFile(name string, t *core.Tensor) error {
	return createFile(name, func(f *os.File) error { return Write(f, t) })
}

// createFile creates (or truncates) the file called name, lets write fill it, and closes it;
// if anything fails, the half-written file is removed and the first error returned.
func createFile(name string, write func(f *os.File) error) (err error) {
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("numpyx: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("numpyx: %w", cerr)
		}
		if err != nil {
			os.Remove(name)
		}
	}()
	return write(f)
}

func writeData(w io.Writer, t *core.Tensor, fortran bool) error {
	if t.Empty() {
		return nil
	}
	// the memory is held for every w.Write below: t may be the only holder of foreign memory
	hold, err := core.Hold(t)
	if err != nil {
		return fmt.Errorf("numpyx: %w", err)
	}
	defer hold.Release()
	src := t
	if fortran {
		var err error
		if src, err = t.Transpose(); err != nil {
			return fmt.Errorf("numpyx: %w", err)
		}
		defer src.Release()
	}
	if src.IsContiguous() {
		b, err := src.ReadOnlyBytes()
		if err != nil {
			return fmt.Errorf("numpyx: %w", err)
		}
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("numpyx: writing the data: %w", err)
		}
		return nil
	}
	s := streamer{w: w, buf: make([]byte, chunkSize)}
	return s.write(src)
}

// streamer writes a tensor of any layout in C order through a fixed buffer.
type streamer struct {
	w   io.Writer
	buf []byte
}

func (s *streamer) write(t *core.Tensor) error {
	if t.IsContiguous() {
		b, err := t.ReadOnlyBytes()
		if err != nil {
			return fmt.Errorf("numpyx: %w", err)
		}
		return s.put(b)
	}
	// not contiguous, so t has at least one dimension of size > 1 and no zero dimension
	n := t.Dim(0)
	rowBytes := t.NumBytes() / n
	per := int64(len(s.buf)) / rowBytes
	if per == 0 { // one row is larger than the buffer: go down a dimension
		for i := range n {
			v, err := t.Index(0, i)
			if err != nil {
				return fmt.Errorf("numpyx: %w", err)
			}
			err = s.write(v)
			v.Release()
			if err != nil {
				return err
			}
		}
		return nil
	}
	for i := int64(0); i < n; i += per {
		v, err := t.Slice(0, i, min(i+per, n), 1)
		if err != nil {
			return fmt.Errorf("numpyx: %w", err)
		}
		err = s.copyOut(v)
		v.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// copyOut gathers v, which fits in the buffer, into it in C order and writes it.
func (s *streamer) copyOut(v *core.Tensor) error {
	dst, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(unsafe.SliceData(s.buf)), Device: core.CPUDevice,
		DType: v.DType(), Shape: v.Shape()}, s.buf)
	if err != nil {
		return fmt.Errorf("numpyx: %w", err)
	}
	if err := adapters.Copy(dst, v); err != nil {
		return fmt.Errorf("numpyx: %w", err)
	}
	return s.put(s.buf[:v.NumBytes()])
}

func (s *streamer) put(b []byte) error {
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("numpyx: writing the data: %w", err)
	}
	return nil
}
