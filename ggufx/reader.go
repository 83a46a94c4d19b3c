package ggufx

import (
	"io"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/mmap"
)

// readerName is what errors call a File made by NewReader, which has no path.
const readerName = "the GGUF reader"

// NewReader reads and checks the header of the GGUF file r holds (size bytes; see ReadHeader)
// and reads no data: the File it returns reads each tensor from r when it is asked for, into
// memory of its own (Tensor, Blocks and Dequantize as for a File that Open could not map). r
// must stay readable until the File is closed; Close does not close r.
//
// A File over a reader only copies, so adapters.ZeroCopyOnly() refuses here
// (adapters.ErrCopyRequired: use Open, which maps the file) unless the file holds no tensor.
func NewReader(r io.ReaderAt, size int64, opts ...adapters.Option) (*File, error) {
	o := adapters.Apply(opts...)
	h, err := ReadHeader(io.NewSectionReader(r, 0, size), size)
	if err != nil {
		return nil, err
	}
	if o.Policy == adapters.CopyNever && len(h.Tensors) > 0 {
		return nil, errs.Errorf(adapters.ErrCopyRequired, "ggufx: NewReader reads every tensor into memory of its own, and adapters.ZeroCopyOnly() forbids a copy (use Open, which maps the file)")
	}
	return &File{h: h, path: readerName, o: o, st: &mmap.Source{}, ra: r}, nil
}
