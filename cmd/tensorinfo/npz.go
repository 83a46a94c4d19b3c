package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
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

// npzFile is an .npz archive: its members' headers are read on opening. A member's values are
// read into memory when an excerpt asks for them (up to copyLimit bytes), and streamed through a
// small buffer for a summary, whatever their size.
type npzFile struct {
	z   *numpyx.NPZ
	zr  *zip.ReadCloser
	ent []entry
}

func openNPZ(path string) (container, error) {
	z, err := numpyx.OpenNPZ(path)
	if err != nil {
		return nil, err
	}
	f := &npzFile{z: z}
	f.zr, err = zip.OpenReader(path)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // names are keys here, never paths
		z.Close()
		return nil, fmt.Errorf("%w: not a zip archive: %v", numpyx.ErrFormat, err)
	}
	for _, k := range z.Keys() {
		h, err := z.Header(k)
		if err != nil {
			f.close()
			return nil, err
		}
		f.ent = append(f.ent, entryOf(k, h))
	}
	return f, nil
}

func (f *npzFile) entries() []entry { return f.ent }

func (f *npzFile) tensor(i int) (*core.Tensor, error) {
	e := f.ent[i]
	if n := e.len() * int64(e.size); n > copyLimit {
		return nil, fmt.Errorf("%w: the member holds %d bytes (limit %d)", errTooLarge, n, copyLimit)
	}
	return f.z.Read(e.name)
}

// summarize streams member i: its header, then its data in pieces of about 1 MiB, each swapped
// to this machine's byte order where needed and added to the summary; reading to the end makes
// archive/zip check the member's CRC-32.
func (f *npzFile) summarize(i int) (*stats, error) {
	e := f.ent[i]
	if e.dtype.Code == core.CodeComplex {
		return nil, fmt.Errorf("%w: %s", errNoStats, e.dtype)
	}
	rc, err := f.member(e.name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	h, err := numpyx.ReadHeader(rc)
	if err != nil {
		return nil, err
	}
	size := int64(h.DType.Size())
	buf := make([]uint64, 1<<17) // 1 MiB, aligned for every element type
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	per := int64(len(raw)) / size
	acc := newAccumulator()
	for left := h.Len(); left > 0; {
		n := min(left, per)
		if _, err := io.ReadFull(rc, raw[:n*size]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("%w: member %q ends %d elements early", numpyx.ErrTruncated, e.name, left)
			}
			return nil, fmt.Errorf("%w: member %q: %v", numpyx.ErrFormat, e.name, err)
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
		return nil, fmt.Errorf("%w: member %q: %v", numpyx.ErrFormat, e.name, err)
	}
	return acc.stats(), nil
}

// member opens the member numpyx.NPZ keys as key (its name without ".npy").
func (f *npzFile) member(key string) (io.ReadCloser, error) {
	if f.zr == nil {
		return nil, fmt.Errorf("%w: archive not open for streaming", numpyx.ErrFormat)
	}
	for _, zf := range f.zr.File {
		if strings.TrimSuffix(zf.Name, ".npy") == key {
			rc, err := zf.Open()
			if err != nil {
				return nil, fmt.Errorf("%w: member %q: %v", numpyx.ErrFormat, zf.Name, err)
			}
			return rc, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", numpyx.ErrNotFound, key)
}

// swap reverses the bytes of every element of size bytes in b.
func swap(b []byte, size int) {
	for i := 0; i+size <= len(b); i += size {
		for j, k := i, i+size-1; j < k; j, k = j+1, k-1 {
			b[j], b[k] = b[k], b[j]
		}
	}
}

func (f *npzFile) close() error {
	err := f.z.Close()
	if f.zr != nil {
		if e := f.zr.Close(); err == nil {
			err = e
		}
	}
	return err
}
