package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/numpyx"
)

func init() {
	formats = append(formats, format{
		name:  "npy",
		exts:  []string{".npy"},
		magic: func(head []byte) bool { return bytes.HasPrefix(head, []byte("\x93NUMPY")) },
		open:  openNPY,
	})
}

// copyLimit bounds the data this tool reads into memory for an array's values: a .npy file that
// cannot be mapped as it lies (the other byte order, unaligned data), an .npz member's excerpt.
var copyLimit int64 = 1 << 30

type npyFile struct {
	path string
	h    numpyx.Header
}

func openNPY(path string, _ options) (container, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	h, err := numpyx.ReadHeader(io.NewSectionReader(f, 0, fi.Size()))
	if err != nil {
		return nil, err
	}
	if avail := fi.Size() - h.DataOffset; h.DataLen() > avail {
		return nil, errs.Errorf(numpyx.ErrTruncated, "numpyx: header promises %d data bytes, the file holds %d", h.DataLen(), avail)
	}
	return &npyFile{path: path, h: h}, nil
}

func (n *npyFile) entries() []entry {
	return []entry{entryOf(filepath.Base(n.path), n.h)}
}

func entryOf(name string, h numpyx.Header) entry {
	return entry{name: name, dtype: h.DType, descr: h.Descr, shape: h.Shape, bigEndian: h.BigEndian,
		fortran: h.Fortran, size: h.DType.Size()}
}

// tensor maps the file (numpyx.Map): the values are read from the page cache as they are
// touched, so a file larger than memory can be summarised. A file that cannot be mapped as it
// lies is read instead, up to copyLimit bytes.
func (n *npyFile) tensor(int) (*core.Tensor, error) {
	t, err := numpyx.Map(n.path, adapters.ZeroCopyOnly())
	if errors.Is(err, adapters.ErrCopyRequired) {
		if n.h.DataLen() > copyLimit {
			return nil, fmt.Errorf("%w; reading its %d bytes into memory is beyond this tool's limit of %d", err, n.h.DataLen(), copyLimit)
		}
		t, err = numpyx.Map(n.path)
	}
	return t, err
}

func (n *npyFile) close() error { return nil }
