package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
	"github.com/dlpack-go/dlpack/internal/errs"
)

func init() {
	formats = append(formats, format{
		name:  "gguf",
		exts:  []string{".gguf"},
		magic: func(head []byte) bool { return bytes.HasPrefix(head, []byte(ggufx.Magic)) },
		open:  openGGUF,
	})
}

// shardName is llama.cpp's name of a shard of a split model, PREFIX-00001-of-00003.gguf.
var shardName = regexp.MustCompile(`^(.*)-\d{5}-of-\d{5}\.gguf$`)

// ggufSource is what both a GGUF file (ggufx.File) and a split model (ggufx.Split) give.
type ggufSource interface {
	Info(name string) (ggufx.TensorInfo, error)
	Tensor(name string) (*core.Tensor, error)
	Dequantize(name string, dtype core.DLDataType) (*core.Tensor, error)
	Metadata() *ggufx.Metadata
	Close() error
}

// ggufFile is a GGUF file opened by memory map (ggufx.Open): the header is read once; a plain
// tensor is a view of the mapping, a quantized one is dequantized to float32 for its values, up
// to copyLimit bytes. The first shard of a split model (split.count > 1, split.no 0) opens every
// shard (ggufx.OpenSplit) and lists their tensors together; another shard is listed alone.
type ggufFile struct {
	src    ggufSource
	h      *ggufx.Header // the file's own header (the first shard's, for a split model)
	shards []string
	ent    []entry
}

func openGGUF(path string, _ options) (container, error) {
	f, err := ggufx.Open(path)
	if err != nil {
		return nil, err
	}
	g := &ggufFile{src: f, h: f.Header()}
	tensors := f.Tensors()
	md := f.Metadata()
	count, cerr := md.Uint16(ggufx.SplitCountKey)
	no, nerr := md.Uint16(ggufx.SplitNoKey)
	if cerr == nil && nerr == nil && count > 1 && no == 0 {
		s, err := ggufx.OpenSplit(path)
		if err != nil {
			f.Close()
			return nil, err
		}
		f.Close() // the Split holds its own
		g.src = s
		tensors = tensors[:0:0]
		for _, sf := range s.Files() {
			tensors = append(tensors, sf.Tensors()...)
		}
		if m := shardName.FindStringSubmatch(filepath.Base(path)); m != nil { // OpenSplit checked the name
			for i := range int(count) {
				g.shards = append(g.shards, ggufx.SplitPath(m[1], i, int(count)))
			}
		}
	}
	for _, ti := range tensors {
		g.ent = append(g.ent, ggufEntry(ti))
	}
	return g, nil
}

// ggufEntry describes a tensor: its dtype is that of the values tensorinfo reads (its own for a
// plain type, float32 dequantized for a quantized one), its descr the ggml type as stored.
// A tensor ggufx reads no elements of (an unknown or removed type number, a fork's layout) is
// listed as its bytes.
func ggufEntry(ti ggufx.TensorInfo) entry {
	e := entry{name: ti.Name, shape: ti.Shape(), bytes: ti.Size}
	if ti.Err != nil {
		e.dtype, e.size = core.Uint8, 1
		e.descr = ti.Type.String() // "type 157 (unknown)", "type 31 (Q4_0_4_4, removed)"
		if ti.Type.Known() {
			e.descr = fmt.Sprintf("%s, not in ggml's layout", ti.Type)
		}
		return e
	}
	if dt, ok := ti.Type.DType(); ok {
		e.dtype, e.descr, e.size = dt, ti.Type.String(), dt.Size()
		return e
	}
	e.dtype, e.size = core.Float32, ti.Type.BlockBytes()
	e.descr = fmt.Sprintf("%s, %d per %d-byte block", ti.Type, ti.Type.BlockSize(), ti.Type.BlockBytes())
	return e
}

func (g *ggufFile) entries() []entry { return g.ent }

// notConverted is an error of an entry whose values this tool does not read (errNotConverted),
// with the error saying why.
type notConverted struct{ error }

func (notConverted) Is(target error) bool { return target == errNotConverted }

func (g *ggufFile) tensor(i int) (*core.Tensor, error) {
	e := g.ent[i]
	ti, err := g.src.Info(e.name)
	if err != nil {
		return nil, err
	}
	if ti.Err != nil {
		return nil, notConverted{errs.Errorf(errNotConverted, "ggufx reads no elements of it, so this tool does not convert it: %s", strings.TrimPrefix(ti.Err.Error(), "ggufx: "))}
	}
	if !ti.Type.Quantized() {
		return g.src.Tensor(e.name)
	}
	if !ggufx.Dequantizable(ti.Type) {
		return nil, notConverted{errs.Errorf(errNotConverted, "ggufx does not dequantize %s, so this tool does not convert it", ti.Type)}
	}
	if n := ti.Len() * 4; n > copyLimit {
		return nil, notConverted{errs.Errorf(errTooLarge, "dequantized to float32 it would hold %d bytes, more than this tool reads into memory (%d)", n, copyLimit)}
	}
	return g.src.Dequantize(e.name, core.Float32)
}

// describe puts the header's summary on the header line and the metadata in the JSON.
func (g *ggufFile) describe(r *fileReport) {
	md := g.src.Metadata()
	parts := []string{fmt.Sprintf("GGUF v%d", g.h.Version), fmt.Sprintf("alignment %d", g.h.Alignment),
		fmt.Sprintf("%d keys", md.Len()), fmt.Sprintf("%d tensors", len(g.ent))}
	if g.shards != nil {
		parts = append(parts, fmt.Sprintf("%d shards", len(g.shards)))
	} else if count, err := md.Uint16(ggufx.SplitCountKey); err == nil && count > 1 {
		no, _ := md.Uint16(ggufx.SplitNoKey)
		parts = append(parts, fmt.Sprintf("shard %d of %d", int(no)+1, count))
	}
	for _, k := range []string{"general.architecture", "general.name"} {
		if v, err := md.String(k); err == nil {
			parts = append(parts, k+" "+strconv.Quote(v))
		}
	}
	r.Summary = strings.Join(parts, ", ")
	r.Shards = g.shards
	r.Metadata = map[string]any{}
	for k, v := range md.All() {
		r.Metadata[k] = jsonValue(v)
	}
}

// jsonValue is a metadata value for -json: a scalar as its JSON value (a float as num, since
// JSON has no NaN), an array as a JSON array of its elements (of arrays, for arrays of arrays).
func jsonValue(v ggufx.Value) any {
	switch x := v.Any().(type) {
	case float32:
		return num{float64(x), true}
	case float64:
		return num{x, true}
	case []float32:
		return nums(x)
	case []float64:
		return nums(x)
	case []uint8: // encoding/json would write base64
		out := make([]uint16, len(x))
		for i, b := range x {
			out[i] = uint16(b)
		}
		return out
	case []ggufx.Value:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	}
	return v.Any() // a scalar, or a slice of ints, bools or strings: JSON as it is
}

// nums is the floats x as num, for JSON.
func nums[F float32 | float64](x []F) []num {
	out := make([]num, len(x))
	for i, f := range x {
		out[i] = num{float64(f), true}
	}
	return out
}

func (g *ggufFile) close() error { return g.src.Close() }
