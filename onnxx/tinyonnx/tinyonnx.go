// Package tinyonnx writes small ONNX models from Go, so that programs, examples, notebooks and
// tests can run ONNX Runtime without Python's onnx package (load the bytes with
// onnxx.NewSessionFromBytes, or write them to a file). It encodes the protobuf wire format by
// hand: an ONNX file is one serialized onnx.ModelProto, and a model of a few nodes needs only a
// handful of its fields, each listed below with its field number in onnx/onnx.proto.
//
// ReadGraph reads back what a model declares of its main graph (inputs and outputs with their
// types, a missing shape told from a scalar's, initializer names, nodes), skipping the weights
// by their lengths; package onnxx reads there what ONNX Runtime's C API does not say.
//
// It is not an ONNX library: it writes what Dense and Model describe and checks nothing that
// ONNX Runtime checks when it loads the model.
package tinyonnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// ErrModel reports a model description that cannot be written (a missing name, a bad shape).
var ErrModel = errors.New("tinyonnx: bad model description")

// Element types, the values of onnx.TensorProto.DataType.
const (
	Float  = 1  // TensorProto.FLOAT
	Double = 11 // TensorProto.DOUBLE
)

// Node is one operator: Op (MatMul, Add, Relu, ...) of the default domain, reading the values
// named Inputs and writing the values named Outputs.
type Node struct {
	Op      string
	Inputs  []string
	Outputs []string
}

// Value names a graph input or output and gives its element type and shape. A negative
// dimension is symbolic: it is written as the dimension parameter "N<i>" for axis i, so
// ONNX Runtime accepts any size there.
type Value struct {
	Name  string
	Type  int32
	Shape []int64
}

// Initializer is a constant of type Double baked into the model (a weight).
type Initializer struct {
	Name  string
	Shape []int64
	Data  []float64
}

// Model is a graph of Nodes from Inputs and Initializers to Outputs, for opset Opset of the
// default ONNX domain (13 when zero).
type Model struct {
	Name         string
	Opset        int64
	Inputs       []Value
	Outputs      []Value
	Initializers []Initializer
	Nodes        []Node
}

// irVersion is the ONNX IR version written: 7 (IR_VERSION_2020_5_8) is read by every ONNX
// Runtime since 1.6 and by Python's onnx 1.12.
const irVersion = 7

// Field numbers of onnx.proto used here.
const (
	modelIRVersion   = 1 // ModelProto.ir_version: int64
	modelProducer    = 2 // ModelProto.producer_name: string
	modelGraph       = 7 // ModelProto.graph: GraphProto
	modelOpsetImport = 8 // ModelProto.opset_import: repeated OperatorSetIdProto

	opsetDomain  = 1 // OperatorSetIdProto.domain: string ("" is the default ONNX domain)
	opsetVersion = 2 // OperatorSetIdProto.version: int64

	graphNode        = 1  // GraphProto.node: repeated NodeProto
	graphName        = 2  // GraphProto.name: string
	graphInitializer = 5  // GraphProto.initializer: repeated TensorProto
	graphInput       = 11 // GraphProto.input: repeated ValueInfoProto
	graphOutput      = 12 // GraphProto.output: repeated ValueInfoProto

	nodeInput  = 1 // NodeProto.input: repeated string
	nodeOutput = 2 // NodeProto.output: repeated string
	nodeName   = 3 // NodeProto.name: string
	nodeOpType = 4 // NodeProto.op_type: string

	valueName = 1 // ValueInfoProto.name: string
	valueType = 2 // ValueInfoProto.type: TypeProto

	typeTensor = 1 // TypeProto.tensor_type: TypeProto.Tensor (a oneof member)

	tensorElemType = 1 // TypeProto.Tensor.elem_type: int32 (a TensorProto.DataType)
	tensorShape    = 2 // TypeProto.Tensor.shape: TensorShapeProto

	shapeDim = 1 // TensorShapeProto.dim: repeated Dimension
	dimValue = 1 // TensorShapeProto.Dimension.dim_value: int64
	dimParam = 2 // TensorShapeProto.Dimension.dim_param: string

	initDims     = 1 // TensorProto.dims: repeated int64
	initDataType = 2 // TensorProto.data_type: int32
	initName     = 8 // TensorProto.name: string
	initRawData  = 9 // TensorProto.raw_data: bytes (little-endian elements)
)

// Protobuf wire types.
const (
	wireVarint = 0
	wireBytes  = 2
)

// msg is a protobuf message being encoded.
type msg []byte

func (m msg) key(field, wire int) msg { return binary.AppendUvarint(m, uint64(field)<<3|uint64(wire)) }

// int appends an int32 or int64 field (negative numbers take ten bytes, as protobuf says).
func (m msg) int(field int, v int64) msg {
	return binary.AppendUvarint(m.key(field, wireVarint), uint64(v))
}

func (m msg) bytes(field int, b []byte) msg {
	m = binary.AppendUvarint(m.key(field, wireBytes), uint64(len(b)))
	return append(m, b...)
}

func (m msg) str(field int, s string) msg { return m.bytes(field, []byte(s)) }

// Encode returns the serialized onnx.ModelProto of m.
func (m Model) Encode() ([]byte, error) {
	if len(m.Inputs) == 0 || len(m.Outputs) == 0 || len(m.Nodes) == 0 {
		return nil, errs.Errorf(ErrModel, "tinyonnx: a model needs inputs, outputs and nodes")
	}
	var g msg
	for i, n := range m.Nodes {
		if n.Op == "" || len(n.Outputs) == 0 {
			return nil, errs.Errorf(ErrModel, "tinyonnx: node %d needs an op and an output", i)
		}
		var nm msg
		for _, in := range n.Inputs {
			nm = nm.str(nodeInput, in)
		}
		for _, out := range n.Outputs {
			nm = nm.str(nodeOutput, out)
		}
		nm = nm.str(nodeName, fmt.Sprintf("%s_%d", n.Op, i))
		nm = nm.str(nodeOpType, n.Op)
		g = g.bytes(graphNode, nm)
	}
	name := m.Name
	if name == "" {
		name = "tinyonnx"
	}
	g = g.str(graphName, name)
	for _, in := range m.Initializers {
		t, err := in.encode()
		if err != nil {
			return nil, err
		}
		g = g.bytes(graphInitializer, t)
	}
	for _, v := range m.Inputs {
		b, err := v.encode()
		if err != nil {
			return nil, err
		}
		g = g.bytes(graphInput, b)
	}
	for _, v := range m.Outputs {
		b, err := v.encode()
		if err != nil {
			return nil, err
		}
		g = g.bytes(graphOutput, b)
	}

	opset := m.Opset
	if opset == 0 {
		opset = 13
	}
	var out msg
	out = out.int(modelIRVersion, irVersion)
	out = out.str(modelProducer, "dlpack-go tinyonnx")
	out = out.bytes(modelGraph, g)
	out = out.bytes(modelOpsetImport, msg{}.str(opsetDomain, "").int(opsetVersion, opset))
	return out, nil
}

// WriteFile writes m's serialized ModelProto to the file name.
func (m Model) WriteFile(name string) error {
	b, err := m.Encode()
	if err != nil {
		return err
	}
	return os.WriteFile(name, b, 0o644)
}

func (v Value) encode() (msg, error) {
	if v.Name == "" {
		return nil, errs.Errorf(ErrModel, "tinyonnx: a value without a name")
	}
	if v.Type != Float && v.Type != Double {
		return nil, errs.Errorf(ErrModel, "tinyonnx: value %q has element type %d (want Float or Double)", v.Name, v.Type)
	}
	var shape msg
	for i, d := range v.Shape {
		if d < 0 {
			shape = shape.bytes(shapeDim, msg{}.str(dimParam, fmt.Sprintf("N%d", i)))
		} else {
			shape = shape.bytes(shapeDim, msg{}.int(dimValue, d))
		}
	}
	// A 0-d value still needs its (empty) shape field: without one, the shape is unknown.
	tensor := msg{}.int(tensorElemType, int64(v.Type)).bytes(tensorShape, shape)
	return msg{}.str(valueName, v.Name).bytes(valueType, msg{}.bytes(typeTensor, tensor)), nil
}

func (in Initializer) encode() (msg, error) {
	n := int64(1)
	for _, d := range in.Shape {
		if d < 0 {
			return nil, errs.Errorf(ErrModel, "tinyonnx: initializer %q has a negative size in shape %v", in.Name, in.Shape)
		}
		n *= d
	}
	if in.Name == "" {
		return nil, errs.Errorf(ErrModel, "tinyonnx: an initializer without a name")
	}
	if int64(len(in.Data)) != n {
		return nil, errs.Errorf(ErrModel, "tinyonnx: initializer %q has %d values for shape %v", in.Name, len(in.Data), in.Shape)
	}
	var t msg
	for _, d := range in.Shape {
		t = t.int(initDims, d)
	}
	t = t.int(initDataType, Double)
	t = t.str(initName, in.Name)
	raw := make([]byte, 0, 8*len(in.Data))
	for _, x := range in.Data {
		raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(x))
	}
	return t.bytes(initRawData, raw), nil
}

// Dense returns the model Y = Relu(X·W + B) of a dense layer in float64: X has shape
// [batch, len(w)] with any batch size, W is the len(w)×len(w[0]) matrix w and B the vector b of
// len(w[0]) elements. Y has shape [batch, len(b)].
func Dense(w [][]float64, b []float64) (Model, error) {
	if len(w) == 0 || len(w[0]) == 0 || len(b) != len(w[0]) {
		return Model{}, errs.Errorf(ErrModel, "tinyonnx: a %d×? weight matrix with %d biases", len(w), len(b))
	}
	in, out := int64(len(w)), int64(len(b))
	flat := make([]float64, 0, in*out)
	for i, row := range w {
		if int64(len(row)) != out {
			return Model{}, errs.Errorf(ErrModel, "tinyonnx: row %d of W has %d values, want %d", i, len(row), out)
		}
		flat = append(flat, row...)
	}
	return Model{
		Name:    "dense_relu",
		Inputs:  []Value{{Name: "X", Type: Double, Shape: []int64{-1, in}}},
		Outputs: []Value{{Name: "Y", Type: Double, Shape: []int64{-1, out}}},
		Initializers: []Initializer{
			{Name: "W", Shape: []int64{in, out}, Data: flat},
			{Name: "B", Shape: []int64{out}, Data: append([]float64(nil), b...)},
		},
		Nodes: []Node{
			{Op: "MatMul", Inputs: []string{"X", "W"}, Outputs: []string{"XW"}},
			{Op: "Add", Inputs: []string{"XW", "B"}, Outputs: []string{"Z"}},
			{Op: "Relu", Inputs: []string{"Z"}, Outputs: []string{"Y"}},
		},
	}, nil
}
