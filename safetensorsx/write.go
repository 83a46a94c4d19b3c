package safetensorsx

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"unicode/utf8"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/tensorio"
	"github.com/dlpack-go/dlpack/memory"
)

// chunkSize is the size of the file writer's buffer (the tensors' own streaming buffer is
// tensorio.ChunkSize).
const chunkSize = tensorio.ChunkSize

// HeaderOf returns the header Write writes for tensors and metadata: the tensors in file order
// (decreasing dtype rank in the reference's enum, which is decreasing alignment, then name in
// byte order), their byte ranges, and the metadata (nil: none). It refuses nil, released and
// device tensors, dtypes the format cannot hold (ErrUnsupportedDType), sub-byte tensors whose
// bits do not fill whole bytes (ErrLayout), tensor names "__metadata__" and strings that are
// not UTF-8 (ErrName), and headers longer than MaxHeaderLen (ErrHeader).
func HeaderOf(tensors map[string]*core.Tensor, metadata map[string]string) (*Header, error) {
	_, h, err := plan(tensors, metadata)
	return h, err
}

type planned struct {
	ti   TensorInfo
	rank int
	t    *core.Tensor
}

func plan(tensors map[string]*core.Tensor, metadata map[string]string) ([]planned, *Header, error) {
	ps := make([]planned, 0, len(tensors))
	for name, t := range tensors {
		switch {
		case name == metadataKey:
			return nil, nil, errs.Errorf(ErrName, "safetensorsx: a tensor may not be called %q", name)
		case !utf8.ValidString(name):
			return nil, nil, errs.Errorf(ErrName, "safetensorsx: tensor name %q is not UTF-8", name)
		case t == nil:
			return nil, nil, errs.Errorf(core.ErrNil, "safetensorsx: tensor %q is nil", name)
		case t.Released():
			return nil, nil, errs.Errorf(core.ErrReleased, "safetensorsx: tensor %q was released", name)
		case !t.HostAccessible():
			return nil, nil, errs.Errorf(core.ErrNotHost, "safetensorsx: tensor %q is on %s, not in host memory", name, t.Device())
		}
		e, ok := entryOf(t.DType())
		if !ok {
			return nil, nil, errs.Errorf(ErrUnsupportedDType, "safetensorsx: tensor %q: %s has no safetensors dtype", name, t.DType())
		}
		if hostBigEndian && t.DType().Size() > 1 {
			return nil, nil, errs.Errorf(ErrUnsupportedDType, "safetensorsx: tensor %q: writing %s on a big-endian machine (the format is little-endian) is not implemented", name, e.name)
		}
		if t.DType().SubByte() && t.Len()*int64(t.DType().Bits)%8 != 0 {
			return nil, nil, errs.Errorf(ErrLayout, "safetensorsx: tensor %q: %d elements of %s do not fill whole bytes", name, t.Len(), e.name)
		}
		ps = append(ps, planned{ti: TensorInfo{Name: name, Format: e.name, DType: e.dt, Shape: t.Shape()}, rank: e.rank, t: t})
	}
	for k, v := range metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, nil, errs.Errorf(ErrName, "safetensorsx: metadata %q: %q is not UTF-8", k, v)
		}
	}
	slices.SortFunc(ps, func(a, b planned) int {
		if c := cmp.Compare(b.rank, a.rank); c != 0 {
			return c
		}
		return cmp.Compare(a.ti.Name, b.ti.Name)
	})
	h := &Header{Tensors: make([]TensorInfo, len(ps)), Metadata: metadata, index: make(map[string]int, len(ps))}
	at := int64(0)
	for i := range ps {
		n, err := memory.CBytes(ps[i].t)
		if err != nil || n > math.MaxInt64-at {
			return nil, nil, errs.Errorf(core.ErrOverflow, "safetensorsx: tensor %q: the data would end past 2^63 bytes", ps[i].ti.Name)
		}
		ps[i].ti.Begin, ps[i].ti.End = at, at+n
		at = ps[i].ti.End
		h.Tensors[i] = ps[i].ti
		h.index[ps[i].ti.Name] = i
	}
	h.DataLen = at
	return ps, h, nil
}

// Write writes tensors and metadata to w as a safetensors file, byte for byte what the
// reference writer (huggingface/safetensors) writes for the same tensors: tensors ordered by
// decreasing alignment of their dtype then by name, compact JSON with "__metadata__" first
// (its keys sorted, where the reference leaves their order to a hash map; nil metadata writes
// no "__metadata__" key, an empty map writes {}), the header padded with spaces to a multiple
// of Alignment (8) bytes, then each tensor's data in C order, little-endian.
//
// A C-contiguous tensor is written straight from its memory; any other layout (transposed,
// sliced, stepped, reversed, broadcast) is streamed in C order through a 1 MiB buffer, never
// copied whole. The tensors are held (core.Hold) until Write returns. See HeaderOf for what is
// refused.
func Write(w io.Writer, tensors map[string]*core.Tensor, metadata map[string]string) error {
	ps, h, err := plan(tensors, metadata)
	if err != nil {
		return err
	}
	hb := encodeHeader(h.Tensors, metadata)
	if len(hb)-8 > MaxHeaderLen {
		return errs.Errorf(ErrHeader, "safetensorsx: the header would be %d bytes, over %d", len(hb)-8, MaxHeaderLen)
	}
	ts := make([]*core.Tensor, len(ps))
	for i, p := range ps {
		ts[i] = p.t
	}
	held, err := core.Hold(ts...)
	if err != nil {
		return fmt.Errorf("safetensorsx: %w", err)
	}
	defer held.Release()
	if _, err := w.Write(hb); err != nil {
		return fmt.Errorf("safetensorsx: writing the header: %w", err)
	}
	for _, p := range ps {
		if _, err := memory.WriteTo(w, p.t); err != nil {
			return fmt.Errorf("safetensorsx: writing tensor %q: %w", p.ti.Name, err)
		}
	}
	return nil
}

// WriteFile writes tensors and metadata to the file at path (see Write). It writes a
// temporary file next to it and renames it over path, as the reference writer does, so that
// an existing file at path is never truncated under a mapping of it (its tensors stay valid).
// Nothing is left behind on an error.
func WriteFile(path string, tensors map[string]*core.Tensor, metadata map[string]string) error {
	return tensorio.ReplaceFile("safetensorsx", path, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, chunkSize)
		if err := Write(bw, tensors, metadata); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("safetensorsx: %w", err)
		}
		return nil
	})
}
