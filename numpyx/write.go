package numpyx

import (
	"fmt"
	"io"
	"os"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/tensorio"
	"github.com/dlpack-go/dlpack/memory"
)

// HeaderOf returns the header Write would write for t: its dtype in this machine's byte order,
// its shape, and fortran_order set when t is Fortran- but not C-contiguous. It refuses dtypes
// NumPy has no equivalent for (ErrUnsupportedDType: bfloat16, float8, sub-byte and vector
// types), tensors the CPU cannot read, and views that repeat elements into more bytes than
// an int64 counts (core.ErrOverflow: a BroadcastTo to 2^63 bytes or more).
func HeaderOf(t *core.Tensor) (Header, error) {
	if t == nil {
		return Header{}, errs.Errorf(core.ErrNil, "numpyx: nil tensor")
	}
	if !t.HostAccessible() {
		return Header{}, errs.Errorf(core.ErrNotHost, "numpyx: the tensor is on %s, not in host memory", t.Device())
	}
	if t.Released() {
		return Header{}, errs.Errorf(core.ErrReleased, "numpyx: the tensor was released")
	}
	descr, err := descrOf(t.DType())
	if err != nil {
		return Header{}, err
	}
	if _, err := memory.CBytes(t); err != nil {
		return Header{}, fmt.Errorf("numpyx: %w", err)
	}
	h := Header{Version: Version{1, 0}, Descr: descr, DType: t.DType(), BigEndian: hostBigEndian && t.DType().Size() > 1,
		Shape: t.Shape(), Fortran: !t.IsContiguous() && t.IsFortranContiguous()}
	hb := encodeHeader(h)
	h.Version, h.DataOffset = Version{hb[6], hb[7]}, int64(len(hb))
	return h, nil
}

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

// WriteFile writes t to the file called name (see Write), replacing it: the new file is
// written beside it and renamed over it, so that an error leaves an existing file as it was
// (and nothing else behind), and a mapping of the old file (Map) keeps its elements instead of
// faulting on a truncated file. The file's mode is 0644.
func WriteFile(name string, t *core.Tensor) error {
	return tensorio.ReplaceFile("numpyx", name, func(f *os.File) error { return Write(f, t) })
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
	if _, err := memory.WriteTo(w, src); err != nil {
		return fmt.Errorf("numpyx: writing the data: %w", err)
	}
	return nil
}
