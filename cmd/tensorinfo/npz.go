package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/numpyx"
)

func init() {
	formats = append(formats, format{
		name:  "npz",
		exts:  []string{".npz"},
		magic: func(head []byte) bool { return bytes.HasPrefix(head, []byte("PK\x03\x04")) },
		open:  openNPZ,
	})
}

// npzFile is an .npz archive, read through numpyx.NPZ (one directory read, a map from key to
// member): its members' headers are read on opening. A member's values are read into memory when
// an excerpt asks for them (up to copyLimit bytes), and streamed through a small buffer for a
// summary, whatever their size. Everything inflated counts against -max-inflated.
type npzFile struct {
	z     *numpyx.NPZ
	limit int64 // -max-inflated, or 0 for none
	ent   []entry
	buf   []uint64 // summarize's buffer, made for the first member that needs it and reused
}

func openNPZ(path string, o options) (container, error) {
	var opts []adapters.Option
	if o.maxInflated > 0 {
		opts = append(opts, numpyx.MaxInflated(o.maxInflated))
	}
	z, err := numpyx.Open(path, opts...)
	if err != nil {
		return nil, err
	}
	f := &npzFile{z: z, limit: o.maxInflated}
	for _, k := range z.Keys() {
		h, err := z.Header(k)
		if err != nil {
			f.close()
			return nil, f.capped(err)
		}
		f.ent = append(f.ent, entryOf(k, h))
	}
	return f, nil
}

// capped says, on an error of the inflation cap, which flag sets it.
func (f *npzFile) capped(err error) error {
	if errors.Is(err, numpyx.ErrTooLarge) {
		return fmt.Errorf("%w (-max-inflated=%d; raise it, or 0 for no limit, to read this archive)", err, f.limit)
	}
	return err
}

func (f *npzFile) entries() []entry { return f.ent }

func (f *npzFile) tensor(i int) (*core.Tensor, error) {
	e := f.ent[i]
	if n := e.len() * int64(e.size); n > copyLimit {
		return nil, errs.Errorf(errTooLarge, "the member holds %d bytes, more than this tool reads into memory (%d)", n, copyLimit)
	}
	t, err := f.z.Read(e.name)
	return t, f.capped(err)
}

// summarize streams member i (numpyx.NPZ.Open): its data in pieces of about 1 MiB, each swapped
// to this machine's byte order where needed and added to the summary; reading to the end makes
// numpyx check the member's CRC-32.
func (f *npzFile) summarize(i int) (*stats, error) {
	e := f.ent[i]
	if e.dtype.Code == core.CodeComplex {
		return nil, errs.Errorf(errNoStats, "no summary for %s", e.dtype)
	}
	h, rc, err := f.z.Open(e.name)
	if err != nil {
		return nil, f.capped(err)
	}
	defer rc.Close()
	size := int64(h.DType.Size())
	if want := max(min((h.DataLen()+7)/8, 1<<17), 1); int64(len(f.buf)) < want { // up to 1 MiB, aligned for every element type
		f.buf = make([]uint64, max(want, min(2*int64(len(f.buf)), 1<<17)))
	}
	buf := f.buf
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	per := int64(len(raw)) / size
	acc := newAccumulator()
	for left := h.Len(); left > 0; {
		n := min(left, per)
		if _, err := io.ReadFull(rc, raw[:n*size]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, errs.Errorf(numpyx.ErrTruncated, "numpyx: member %q ends %d elements early", e.name, left)
			}
			return nil, f.capped(err)
		}
		if h.NeedsSwap() {
			swap(raw[:n*size], int(size))
		}
		t, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.CPUDevice, DType: h.DType,
			Shape: []int64{n}}, buf)
		if err != nil {
			return nil, err
		}
		err = acc.addTensor(t)
		t.Release()
		if err != nil {
			return nil, err
		}
		left -= n
	}
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return nil, f.capped(err)
	}
	return acc.stats(), nil
}

// swap reverses the bytes of every element of size bytes in b.
func swap(b []byte, size int) {
	for i := 0; i+size <= len(b); i += size {
		for j, k := i, i+size-1; j < k; j, k = j+1, k-1 {
			b[j], b[k] = b[k], b[j]
		}
	}
}

func (f *npzFile) close() error { return f.z.Close() }
