package tinyonnx

import (
	"bytes"
	"errors"
	"io"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// ErrFormat reports bytes that are not a serialized onnx.ModelProto that ReadGraph can read.
var ErrFormat = errors.New("tinyonnx: malformed model")

// Graph is what ReadGraph reads of a model's main graph: its inputs and outputs with their
// types, the names of its initializers, and its nodes (operator, input and output names; node
// attributes and subgraphs are not read).
type Graph struct {
	Inputs, Outputs []ValueInfo
	Initializers    []string
	Nodes           []Node
}

// ValueInfo is a graph input or output as the model declares it (onnx.ValueInfoProto).
type ValueInfo struct {
	Name string
	// Tensor is set when the type is a tensor type (TypeProto.tensor_type); ElemType is then its
	// element type (a TensorProto.DataType: Float, Double, ...).
	Tensor   bool
	ElemType int32
	// HasShape is set when the tensor type has a shape field. Without one the rank is unknown;
	// with an empty one the value is a scalar.
	HasShape bool
	// Shape has one entry per dimension: its dim_value, or -1 for a symbolic or unknown one.
	Shape []int64
}

// Limits of what ReadGraph accepts, before anything that size is allocated.
const (
	maxString = 1 << 16 // bytes of a name
	maxDims   = 1 << 10 // dimensions of a shape
)

// ReadGraph reads the graph of the serialized onnx.ModelProto of size bytes in r. It reads only
// the fields Graph holds and skips the others (weights, attributes) by their lengths, so it reads
// a few kilobytes of a model of gigabytes. Bytes that are not a ModelProto fail with ErrFormat.
func ReadGraph(r io.ReaderAt, size int64) (*Graph, error) {
	if size < 0 {
		return nil, errs.Errorf(ErrFormat, "tinyonnx: negative model size %d", size)
	}
	c := &cursor{r: r, size: size}
	g := &Graph{}
	found := false
	err := c.fields(0, size, func(f field) error {
		if f.num != modelGraph {
			return nil
		}
		if f.wire != wireBytes {
			return errs.Errorf(ErrFormat, "tinyonnx: ModelProto.graph has wire type %d", f.wire)
		}
		found = true
		return c.graph(f, g)
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errs.Errorf(ErrFormat, "tinyonnx: model without a graph")
	}
	return g, nil
}

// ReadGraphBytes is ReadGraph for a model held in memory.
func ReadGraphBytes(model []byte) (*Graph, error) {
	return ReadGraph(bytes.NewReader(model), int64(len(model)))
}

// field is one field of a message: its number and wire type, and for wireBytes the span
// [off, off+n) of its contents (for varints, v).
type field struct {
	num, wire int
	off, n    int64
	v         uint64
}

// cursor reads a model through r, in chunks of chunk bytes kept in buf.
type cursor struct {
	r      io.ReaderAt
	size   int64
	buf    []byte
	bufOff int64
}

const chunk = 32 << 10

func (c *cursor) byteAt(off int64) (byte, error) {
	if off >= c.bufOff && off < c.bufOff+int64(len(c.buf)) {
		return c.buf[off-c.bufOff], nil
	}
	if off < 0 || off >= c.size {
		return 0, errs.Errorf(ErrFormat, "tinyonnx: model truncated at byte %d", off)
	}
	n := min(int64(chunk), c.size-off)
	if cap(c.buf) < chunk {
		c.buf = make([]byte, chunk)
	}
	c.buf = c.buf[:n]
	if k, err := c.r.ReadAt(c.buf, off); int64(k) != n {
		c.buf = c.buf[:0]
		return 0, errs.Errorf(ErrFormat, "tinyonnx: cannot read byte %d: %v", off, err)
	}
	c.bufOff = off
	return c.buf[0], nil
}

// varint reads a base-128 varint at off, returning it and the offset after it.
func (c *cursor) varint(off, end int64) (uint64, int64, error) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if off >= end {
			return 0, 0, errs.Errorf(ErrFormat, "tinyonnx: varint runs past its message at byte %d", off)
		}
		b, err := c.byteAt(off)
		if err != nil {
			return 0, 0, err
		}
		off++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, off, nil
		}
	}
	return 0, 0, errs.Errorf(ErrFormat, "tinyonnx: varint longer than 10 bytes at byte %d", off)
}

// fields calls fn for each field of the message in [off, end).
func (c *cursor) fields(off, end int64, fn func(field) error) error {
	for off < end {
		key, next, err := c.varint(off, end)
		if err != nil {
			return err
		}
		f := field{num: int(key >> 3), wire: int(key & 7)}
		if key>>3 == 0 || key>>3 > 1<<29 {
			return errs.Errorf(ErrFormat, "tinyonnx: bad field number %d at byte %d", key>>3, off)
		}
		off = next
		switch f.wire {
		case wireVarint:
			if f.v, off, err = c.varint(off, end); err != nil {
				return err
			}
		case 1: // fixed64
			f.off, f.n = off, 8
			off += 8
		case 5: // fixed32
			f.off, f.n = off, 4
			off += 4
		case wireBytes:
			n, next, err := c.varint(off, end)
			if err != nil {
				return err
			}
			if n > uint64(end-next) {
				return errs.Errorf(ErrFormat, "tinyonnx: field %d of %d bytes at byte %d runs past its message (%d bytes left)", f.num, n, next, end-next)
			}
			f.off, f.n = next, int64(n)
			off = next + int64(n)
		default:
			return errs.Errorf(ErrFormat, "tinyonnx: unknown wire type %d at byte %d", f.wire, off)
		}
		if off > end {
			return errs.Errorf(ErrFormat, "tinyonnx: field %d runs past its message at byte %d", f.num, end)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// str reads a string field.
func (c *cursor) str(f field) (string, error) {
	if f.wire != wireBytes {
		return "", errs.Errorf(ErrFormat, "tinyonnx: string field %d has wire type %d", f.num, f.wire)
	}
	if f.n > maxString {
		return "", errs.Errorf(ErrFormat, "tinyonnx: name of %d bytes (at most %d)", f.n, maxString)
	}
	b := make([]byte, f.n)
	if k, err := c.r.ReadAt(b, f.off); int64(k) != f.n {
		return "", errs.Errorf(ErrFormat, "tinyonnx: cannot read %d bytes at %d: %v", f.n, f.off, err)
	}
	return string(b), nil
}

// sub checks that f holds a message.
func sub(f field, what string) error {
	if f.wire != wireBytes {
		return errs.Errorf(ErrFormat, "tinyonnx: %s has wire type %d", what, f.wire)
	}
	return nil
}

func (c *cursor) graph(gf field, g *Graph) error {
	return c.fields(gf.off, gf.off+gf.n, func(f field) error {
		switch f.num {
		case graphNode:
			if err := sub(f, "GraphProto.node"); err != nil {
				return err
			}
			n, err := c.node(f)
			g.Nodes = append(g.Nodes, n)
			return err
		case graphInitializer:
			if err := sub(f, "GraphProto.initializer"); err != nil {
				return err
			}
			var name string
			err := c.fields(f.off, f.off+f.n, func(t field) error {
				var err error
				if t.num == initName {
					name, err = c.str(t)
				}
				return err
			})
			g.Initializers = append(g.Initializers, name)
			return err
		case graphInput, graphOutput:
			if err := sub(f, "GraphProto.input"); err != nil {
				return err
			}
			v, err := c.valueInfo(f)
			if f.num == graphInput {
				g.Inputs = append(g.Inputs, v)
			} else {
				g.Outputs = append(g.Outputs, v)
			}
			return err
		}
		return nil
	})
}

func (c *cursor) node(nf field) (Node, error) {
	var n Node
	err := c.fields(nf.off, nf.off+nf.n, func(f field) error {
		var s string
		var err error
		switch f.num {
		case nodeInput, nodeOutput, nodeOpType:
			if s, err = c.str(f); err != nil {
				return err
			}
		}
		switch f.num {
		case nodeInput:
			n.Inputs = append(n.Inputs, s)
		case nodeOutput:
			n.Outputs = append(n.Outputs, s)
		case nodeOpType:
			n.Op = s
		}
		return nil
	})
	return n, err
}

func (c *cursor) valueInfo(vf field) (ValueInfo, error) {
	var v ValueInfo
	err := c.fields(vf.off, vf.off+vf.n, func(f field) error {
		switch f.num {
		case valueName:
			var err error
			v.Name, err = c.str(f)
			return err
		case valueType:
			if err := sub(f, "ValueInfoProto.type"); err != nil {
				return err
			}
			return c.fields(f.off, f.off+f.n, func(t field) error {
				if t.num != typeTensor {
					return nil
				}
				if err := sub(t, "TypeProto.tensor_type"); err != nil {
					return err
				}
				v.Tensor = true
				return c.tensorType(t, &v)
			})
		}
		return nil
	})
	return v, err
}

func (c *cursor) tensorType(tf field, v *ValueInfo) error {
	return c.fields(tf.off, tf.off+tf.n, func(f field) error {
		switch f.num {
		case tensorElemType:
			if f.wire != wireVarint {
				return errs.Errorf(ErrFormat, "tinyonnx: TypeProto.Tensor.elem_type has wire type %d", f.wire)
			}
			v.ElemType = int32(f.v)
		case tensorShape:
			if err := sub(f, "TypeProto.Tensor.shape"); err != nil {
				return err
			}
			v.HasShape, v.Shape = true, v.Shape[:0]
			return c.fields(f.off, f.off+f.n, func(d field) error {
				if d.num != shapeDim {
					return nil
				}
				if err := sub(d, "TensorShapeProto.dim"); err != nil {
					return err
				}
				if len(v.Shape) == maxDims {
					return errs.Errorf(ErrFormat, "tinyonnx: value %q has more than %d dimensions", v.Name, maxDims)
				}
				dim := int64(-1)
				err := c.fields(d.off, d.off+d.n, func(x field) error {
					if x.num == dimValue && x.wire == wireVarint && int64(x.v) >= 0 {
						dim = int64(x.v)
					}
					return nil
				})
				v.Shape = append(v.Shape, dim)
				return err
			})
		}
		return nil
	})
}
