package safetensorsx

import (
	"fmt"
	"io"
	"sync"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/tensorio"
	"github.com/dlpack-go/dlpack/memory"
)

// hostBigEndian reports the byte order of this machine; the format is little-endian.
var hostBigEndian = tensorio.HostBigEndian

// readWhy is why reading is a copy, for adapters.ErrCopyRequired.
const readWhy = "reading copies the file's bytes into memory of the reader's own (Open or Map share them)"

// ReadFile reads every tensor of the safetensors file called path into memory of its own
// (64-byte aligned, C order, writable, flagged core.FlagIsCopied), in slabs: a tensor of 4 MiB
// or more into a slab of its own, runs of smaller ones into one they share, one read call per
// slab. Slabs of 4 MiB or more are mapped memory from core's cache of blocks (not zeroed, huge
// pages: see memory.NewUninitParts and memory.Allocation), smaller ones Go memory; see the package
// documentation, Memory, for what a slab costs and when it is given back. The file must be
// well formed as a whole (see ParseHeader; its size must be exactly what the header promises):
// a file that lies costs no allocation beyond its header. On an error every slab taken is
// given back before ReadFile returns.
//
// Reading is a copy, so adapters.ZeroCopyOnly() refuses (adapters.ErrCopyRequired: use Open or
// Map); adapters.ReportCopy reports true. Tensors without elements are the exception to the
// flag: nothing was copied into them, and they are not flagged (see the package documentation).
func ReadFile(path string, opts ...adapters.Option) (map[string]*core.Tensor, error) {
	o := adapters.Apply(opts...)
	if _, err := o.Choose(false, readWhy); err != nil {
		return nil, fmt.Errorf("safetensorsx: reading %s: %w", path, err)
	}
	ts, err := readFile(path)
	if err != nil {
		return nil, err
	}
	o.Report(true)
	return ts, nil
}

// readFile is ReadFile once the copy policy has allowed it.
func readFile(path string) (map[string]*core.Tensor, error) {
	f, size, err := tensorio.OpenRegular(path, "safetensorsx", ErrNotRegularFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// the header without its index by name: readTensors finds names given twice
	h, err := readHeader(io.NewSectionReader(f, 0, size), false)
	if err != nil {
		return nil, err
	}
	if err := checkSize(h, size-h.DataOffset); err != nil {
		return nil, err
	}
	defer putTable(h)
	return readTensors(io.NewSectionReader(f, h.DataOffset, h.DataLen), h, true)
}

// Read reads every tensor of a safetensors file from r into memory of its own, in the order of
// the data in the file; the header's metadata is not returned (use ReadHeader and ReadTensors
// for it). r is read once, front to back.
//
// When r can tell how many bytes remain (it has a Len method, like *bytes.Reader, or it is an
// io.Seeker, like *os.File), that must be exactly what the header promises, and a header that
// promises more is refused before anything is allocated; the tensors are then read as
// ReadFile reads them, in slabs. Otherwise each tensor is read into a slab of its own, and its
// data is gathered in growing chunks until half of it has arrived before it is allocated, so
// that a lying header never costs more than twice the bytes actually present, and bytes after
// the last tensor are not looked at.
func Read(r io.Reader, opts ...adapters.Option) (map[string]*core.Tensor, error) {
	o := adapters.Apply(opts...)
	if _, err := o.Choose(false, readWhy); err != nil {
		return nil, fmt.Errorf("safetensorsx: %w", err)
	}
	h, err := readHeader(r, false) // readTensors finds names given twice
	if err != nil {
		return nil, err
	}
	defer putTable(h)
	ts, err := readAfterHeader(r, h)
	if err != nil {
		return nil, err
	}
	o.Report(true)
	return ts, nil
}

// ReadTensors reads the data of every tensor h lists from r, which is at the first data byte
// (where ReadHeader left it). See Read. h is checked first: its tensors' ranges must still tile
// the data section, in order, each as long as its shape and dtype need (ErrLayout).
func ReadTensors(r io.Reader, h *Header) (map[string]*core.Tensor, error) {
	if h == nil {
		return nil, errs.Errorf(ErrHeader, "safetensorsx: no header (nil)")
	}
	if err := h.checkTiles(); err != nil {
		return nil, err
	}
	return readAfterHeader(r, h)
}

// readAfterHeader is ReadTensors of a header just parsed (and so checked).
func readAfterHeader(r io.Reader, h *Header) (map[string]*core.Tensor, error) {
	avail := tensorio.Remaining(r)
	if avail >= 0 {
		if err := checkSize(h, avail); err != nil {
			return nil, err
		}
	}
	return readTensors(r, h, avail >= 0)
}

// readTensors reads the data of every tensor of h from r, front to back. With sized (r holds
// exactly h.DataLen bytes, checked), the tensors are read slab by slab (see nextSlab and
// readSlab), one read call per slab; without, every tensor is read on its own and a large one
// is gathered in chunks until half of it is here (tensorio.ReadData), so that a lying header
// costs no more than what r holds. On an error every tensor made so far is released.
func readTensors(r io.Reader, h *Header, sized bool) (map[string]*core.Tensor, error) {
	out := make(map[string]*core.Tensor, len(h.Tensors))
	var made [][]*core.Tensor                // every tensor made, for releasing them all on an error
	parts := partBufs.Get().(*[]memory.Part) // readSlab's, reused from slab to slab and read to read
	defer partBufs.Put(parts)
	ts := h.Tensors
	for i := 0; i < len(ts); {
		var err error
		var got []*core.Tensor
		j := i + 1
		if sized {
			var size int64
			j, size = nextSlab(ts, i)
			if cap(*parts) < j-i {
				*parts = make([]memory.Part, j-i)
			}
			got, err = readSlab(r, ts[i:j], size, (*parts)[:j-i])
		} else {
			var t *core.Tensor
			if t, err = readStream(r, ts[i]); err == nil {
				got = []*core.Tensor{t}
			} else {
				err = inTensor(ts[i].Name, err)
			}
		}
		made = append(made, got)
		for k := 0; k < len(got) && err == nil; k++ {
			n := len(out)
			if out[ts[i+k].Name] = got[k]; len(out) == n {
				err = errs.Errorf(ErrHeader, "safetensorsx: tensor %q appears twice in the header", ts[i+k].Name)
			}
		}
		if err != nil {
			for _, got := range made {
				for _, t := range got {
					t.Release()
				}
			}
			return nil, err
		}
		i = j
	}
	return out, nil
}

// partBufs holds readSlab's descriptions of slabs between reads.
var partBufs = sync.Pool{New: func() any { return new([]memory.Part) }}

// slabMin is the size from which a slab is complete: tensors are read into slabs of memory
// (memory.NewUninitParts), a tensor of slabMin bytes or more into one of its own, runs of
// smaller ones into one they share, closed once it holds slabMin bytes (see nextSlab). It is
// memory.DefaultAllocation's MappedMin: slabs of that size are mapped memory, taken
// uninitialised from core's cache of blocks (no zeroing, no page faults when reused, huge
// pages); smaller ones (a file under 4 MiB) are Go memory.
const slabMin = 4 << 20

// nextSlab returns the end j of the slab that starts at tensor i (ts[i:j] share it) and its
// size: the sum of their padded sizes. A slab closed with less than slabMin bytes of tensors
// left after it takes them too (so under 3*slabMin in all), rather than leave them a slab too
// small to be mapped.
func nextSlab(ts []TensorInfo, i int) (j int, size int64) {
	size, j = padded(ts[i]), i+1
	if size >= slabMin {
		return j, size
	}
	for ; j < len(ts) && size < slabMin && padded(ts[j]) < slabMin; j++ {
		size += padded(ts[j])
	}
	last := ts[len(ts)-1]
	if j < len(ts) && size >= slabMin && last.End-ts[j].Begin+int64(len(ts)-j)*core.Alignment < slabMin {
		for ; j < len(ts); j++ { // what is left, padded, is under slabMin
			size += padded(ts[j])
		}
	}
	return j, size
}

// padded is the room a tensor takes in a slab: its bytes rounded up to core.Alignment.
func padded(ti TensorInfo) int64 {
	return (ti.Len() + core.Alignment - 1) &^ (core.Alignment - 1)
}

// readSlab reads the data of run (adjacent tensors, run[0]'s data next in r) with one call into
// one slab of size bytes (the sum of their padded sizes) and returns a tensor over the slab for
// each, each at a 64-byte-aligned slot, the slab kept by them all (memory.NewUninitParts).
// The data is read into the front of the slab and each tensor moved up to its slot, from the
// last to the first, so that a move never overwrites data not yet moved (in files whose
// tensors are multiples of 64 bytes, nothing moves). parts (as long as run) is room for the
// slab's description. On an error the slab's tensors are released, and the slab with them.
func readSlab(r io.Reader, run []TensorInfo, size int64, parts []memory.Part) ([]*core.Tensor, error) {
	at := int64(0)
	for k, ti := range run {
		parts[k] = memory.Part{Offset: at, DType: ti.DType, Shape: ti.Shape, Flags: copiedFlags(ti)}
		at += padded(ti)
	}
	defer clear(parts) // kept for the next read: hold no shapes
	block, ts, err := memory.NewUninitParts(size, parts)
	if err != nil {
		return nil, fmt.Errorf("safetensorsx: tensors %q to %q: %w", run[0].Name, run[len(run)-1].Name, err)
	}
	defer block.Release()
	if err := fillSlab(r, block, run, parts); err != nil {
		for _, t := range ts {
			t.Release()
		}
		return nil, err
	}
	return ts, nil
}

// fillSlab reads the data of run into block at the offsets of parts (see readSlab).
func fillSlab(r io.Reader, block *core.Tensor, run []TensorInfo, parts []memory.Part) error {
	h, b, err := holdBytes(block)
	if err != nil {
		return err
	}
	defer h.Release()
	first := run[0].Begin
	n := run[len(run)-1].End - first
	if k, err := io.ReadFull(r, b[:n]); err != nil {
		if len(run) == 1 {
			return eofErr(err, "%d data bytes promised for tensor %q, only %d present", n, run[0].Name, k)
		}
		return eofErr(err, "%d data bytes promised for tensors %q to %q, only %d present", n, run[0].Name, run[len(run)-1].Name, k)
	}
	for k := len(run) - 1; k >= 0; k-- {
		ti := run[k]
		tb := b[parts[k].Offset : parts[k].Offset+ti.Len()]
		if src := ti.Begin - first; src != parts[k].Offset {
			copy(tb, b[src:src+ti.Len()])
		}
		fixup(tb, ti.DType)
	}
	return nil
}

// checkSize checks that the data section holds exactly avail bytes.
func checkSize(h *Header, avail int64) error {
	switch {
	case h.DataLen > avail:
		return errs.Errorf(ErrTruncated, "safetensorsx: the header promises %d data bytes, only %d present", h.DataLen, avail)
	case h.DataLen < avail:
		return errs.Errorf(ErrLayout, "safetensorsx: %d bytes after the last tensor's data (the tensors cover %d of %d)", avail-h.DataLen, h.DataLen, avail)
	}
	return nil
}

// readStream reads the next tensor from r, whose size is not known: a large tensor is
// gathered in chunks until half of it is here (tensorio.ReadData) before it is allocated.
func readStream(r io.Reader, ti TensorInfo) (*core.Tensor, error) {
	n := ti.Len()
	var block, t *core.Tensor
	var b []byte
	var h core.Held
	var allocErr error
	got, _, err := tensorio.ReadData(r, n, false, func() ([]byte, error) {
		if block, t, allocErr = alloc(ti); allocErr != nil {
			return nil, allocErr
		}
		h, b, allocErr = holdBytes(block)
		return b, allocErr
	})
	if err == nil {
		fixup(b, ti.DType)
	}
	h.Release()
	if block != nil {
		block.Release()
	}
	if err != nil {
		if t != nil {
			t.Release()
		}
		if allocErr != nil {
			return nil, allocErr
		}
		return nil, eofErr(err, "%d data bytes promised, only %d present", n, got)
	}
	return t, nil
}

// alloc allocates the tensor ti describes, uninitialised (memory.NewUninitParts: mapped memory
// from 4 MiB up, Go memory below), 64-byte aligned and flagged as copiedFlags says, and returns
// it with a tensor over its bytes (block) to fill and release. ti has been checked (its byte
// length is what its shape and dtype need).
func alloc(ti TensorInfo) (block, t *core.Tensor, err error) {
	n := ti.Len()
	if n > maxAlloc {
		return nil, nil, errs.Errorf(ErrLayout, "safetensorsx: %d bytes are more than this process can allocate", n)
	}
	block, ts, err := memory.NewUninitParts(n, []memory.Part{{DType: ti.DType, Shape: ti.Shape, Flags: copiedFlags(ti)}})
	if err != nil {
		return nil, nil, fmt.Errorf("safetensorsx: %w", err)
	}
	return block, ts[0], nil
}

// copiedFlags are the flags of a tensor read or copied from a file: FlagIsCopied, which says
// that the file's bytes were copied into memory of the tensor's own, except for a tensor
// without elements, into which nothing was copied (File.Tensor reports it as no copy).
func copiedFlags(ti TensorInfo) core.Flags {
	if ti.Len() == 0 {
		return 0
	}
	return core.FlagIsCopied
}

// copyTensor makes the tensor ti describes (see alloc) with a copy of src, its bytes as the file
// has them.
func copyTensor(ti TensorInfo, src []byte) (*core.Tensor, error) {
	block, t, err := alloc(ti)
	if err != nil {
		return nil, err
	}
	defer block.Release()
	h, b, err := holdBytes(block)
	if err != nil {
		t.Release()
		return nil, err
	}
	defer h.Release()
	copy(b, src)
	fixup(b, ti.DType)
	return t, nil
}

// holdBytes holds block and returns its bytes; the caller releases the hold when it has done
// with them (on an error there is nothing to release).
func holdBytes(block *core.Tensor) (core.Held, []byte, error) {
	h, err := core.Hold(block)
	if err != nil {
		return core.Held{}, nil, fmt.Errorf("safetensorsx: %w", err)
	}
	b, err := block.Bytes()
	if err != nil {
		h.Release()
		return core.Held{}, nil, fmt.Errorf("safetensorsx: %w", err)
	}
	return h, b, nil
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
		memory.SwapBytes(b, dt)
	}
}

// Reader reads a safetensors file through an io.ReaderAt: the header is read once, by
// NewReader; tensors are then read one by one, by name, each straight into its own
// allocation, in any order and from several goroutines at once (as r allows), or all at once
// by ReadAll.
type Reader struct {
	r    io.ReaderAt
	size int64
	h    *Header
	o    adapters.Options // the copy policy NewReader was given, for ReportCopy
}

// NewReader reads and checks the header of the safetensors file r holds (size bytes: exactly
// what the header promises) and reads no data.
//
// A Reader reads into memory of its own, so adapters.ZeroCopyOnly() refuses here
// (adapters.ErrCopyRequired: use Open or Map), and adapters.ReportCopy is set to true by every
// Tensor and ReadAll call that succeeds.
func NewReader(r io.ReaderAt, size int64, opts ...adapters.Option) (*Reader, error) {
	o := adapters.Apply(opts...)
	if _, err := o.Choose(false, readWhy); err != nil {
		return nil, fmt.Errorf("safetensorsx: NewReader: %w", err)
	}
	h, err := ReadHeader(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, err
	}
	if err := checkSize(h, size-h.DataOffset); err != nil {
		return nil, err
	}
	return &Reader{r: r, size: size, h: h, o: o}, nil
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

// Tensor reads the tensor called name into a slab of its own (mapped memory from 4 MiB, Go
// memory below: see ReadFile), or fails with ErrNotFound.
func (r *Reader) Tensor(name string) (*core.Tensor, error) {
	ti, err := r.h.info(name)
	if err != nil {
		return nil, err
	}
	t, err := r.read(ti)
	if err != nil {
		return nil, inTensor(name, err)
	}
	r.o.Report(true)
	return t, nil
}

func (r *Reader) read(ti TensorInfo) (*core.Tensor, error) {
	block, t, err := alloc(ti)
	if err != nil {
		return nil, err
	}
	defer block.Release()
	if err := r.fill(block, ti); err != nil {
		t.Release()
		return nil, err
	}
	return t, nil
}

// fill reads the data of ti into block.
func (r *Reader) fill(block *core.Tensor, ti TensorInfo) error {
	h, b, err := holdBytes(block)
	if err != nil {
		return err
	}
	defer h.Release()
	if len(b) > 0 {
		if k, err := r.r.ReadAt(b, r.h.DataOffset+ti.Begin); k < len(b) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return eofErr(err, "%d data bytes promised, only %d present", len(b), k)
		}
	}
	fixup(b, ti.DType)
	return nil
}

// ReadAll reads every tensor (see ReadFile), front to back, in slabs, one read call per slab.
func (r *Reader) ReadAll() (map[string]*core.Tensor, error) {
	if err := r.h.checkTiles(); err != nil { // the shared Header may have been changed
		return nil, err
	}
	ts, err := readTensors(io.NewSectionReader(r.r, r.h.DataOffset, r.h.DataLen), r.h, true)
	if err != nil {
		return nil, err
	}
	r.o.Report(true)
	return ts, nil
}
