package main

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dlpack-go/dlpack/core"
)

// A format is one kind of tensor file. Each lives in a file of its own that appends it to
// formats in an init function (npy.go, npz.go, safetensors.go, gguf.go, parquet.go); adding a format is adding such
// a file: its open reads the file's metadata into entries, its container's tensor gives an
// entry's values (over a memory map where the format allows), and the rest of the command
// (table, JSON, summaries, excerpts, errors and exit status) needs no change.
type format struct {
	name string   // "npy", "npz"
	exts []string // file name extensions, lower case with the dot
	// magic reports whether the first bytes of a file (at most 16) are this format's, for files
	// whose extension names no format.
	magic func(head []byte) bool
	open  func(path string, o options) (container, error)
}

// formats is every format, in the order they are tried.
var formats []format

// A container is an open tensor file.
type container interface {
	// entries lists the tensors, from the file's metadata alone.
	entries() []entry
	// tensor returns entry i's tensor for its values (a summary, an excerpt): over the file's
	// own bytes where the format allows (a memory map), read otherwise. The caller releases it.
	tensor(i int) (*core.Tensor, error)
	close() error
}

// A describer is a container that says more of the file than its entries: the text for the
// header line, and what -json writes besides the arrays (GGUF metadata, a split model's shards).
type describer interface {
	describe(r *fileReport)
}

// A summarizer is a container that summarises an entry by reading it once, in pieces, never
// holding it whole (where tensor reads the entry into memory: .npz members), so that -stats
// works on entries larger than memory.
type summarizer interface {
	summarize(i int) (*stats, error)
}

// errTooLarge: the values of an entry would have to be read into memory, and they are larger
// than this tool reads (copyLimit). -repr notes it and goes on; -stats reads in pieces instead.
var errTooLarge = errors.New("larger than this tool reads into memory")

// errNotConverted: the entry's values are stored in a form this tool does not convert to a
// tensor (a GGUF quantization that ggufx does not dequantize). It is listed; -stats shows no
// summary and -repr says why.
var errNotConverted = errors.New("not converted by this tool")

// entry is what a file says about one tensor.
type entry struct {
	name      string // the key in an archive; the file's base name for a single array
	dtype     core.DLDataType
	descr     string // the dtype as the file writes it ("<f4"), when it has its own spelling
	shape     []int64
	bigEndian bool  // multi-byte elements are stored most significant byte first
	fortran   bool  // column-major
	size      int   // bytes of an element (of a block, for a quantized GGUF tensor)
	bytes     int64 // the data's bytes where elements × size is not (quantized blocks); 0: elements × size
	perm      []int // the order of the dimensions in memory, outermost first, where neither C nor F
	// variable: a tensor of its own shape per row (arrow.variable_shape_tensor): shape is the
	// rows, then each dimension the rows share or -1; perm is of a row's dimensions; the
	// elements and bytes are not known from the metadata (len and nbytes do not apply)
	variable bool
}

// nbytes is the bytes of the entry's data as the file holds them.
func (e entry) nbytes() int64 {
	if e.bytes > 0 {
		return e.bytes
	}
	return e.len() * int64(e.size)
}

func (e entry) len() int64 {
	n := int64(1)
	for _, d := range e.shape {
		n *= d
	}
	return n
}

func (e entry) byteOrder() string {
	switch {
	case e.size <= 1:
		return "not applicable"
	case e.bigEndian:
		return "big-endian"
	}
	return "little-endian"
}

func (e entry) layout() string {
	if e.variable {
		row := entry{perm: e.perm, shape: e.shape[1:]}
		return "per row, " + row.layout()
	}
	if e.perm != nil {
		parts := make([]string, len(e.perm))
		for i, p := range e.perm {
			parts[i] = strconv.Itoa(p)
		}
		return "permuted (" + strings.Join(parts, ", ") + ")"
	}
	if e.fortran && len(e.shape) > 1 {
		return "F (column-major)"
	}
	return "C (row-major)"
}

// formatFor chooses the format of path: by its extension, else by its first bytes.
func formatFor(path string, head []byte) (format, bool) {
	ext := strings.ToLower(filepath.Ext(path))
	for _, f := range formats {
		for _, e := range f.exts {
			if e == ext {
				return f, true
			}
		}
	}
	for _, f := range formats {
		if f.magic(head) {
			return f, true
		}
	}
	return format{}, false
}
