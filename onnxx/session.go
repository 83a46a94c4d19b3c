package onnxx

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	ort "github.com/yalue/onnxruntime_go"
)

// Session runs an ONNX model on named core tensors. It wraps an ort.DynamicAdvancedSession and
// the model's input and output descriptions. Each run makes ORT values over the input tensors
// (zero-copy, see ToValue) and allocates every output whose shape is known before the run as a
// core tensor that ORT writes into. A Session is safe for concurrent use; Destroy it when done.
type Session struct {
	s       *ort.DynamicAdvancedSession
	inputs  []ort.InputOutputInfo
	outputs []ort.InputOutputInfo

	dynamic bool // some output has a dynamic dimension

	mu     sync.Mutex
	shapes map[string][][]int64 // output shapes seen, by input shapes
}

// maxShapeCache bounds how many input-shape combinations a Session remembers output shapes for.
const maxShapeCache = 256

// NewSession loads the model at path for running with the named inputs and outputs (nil means all
// of the model's, in the model's order). options may be nil (ORT's defaults). It calls Init.
func NewSession(path string, inputNames, outputNames []string, options *ort.SessionOptions) (*Session, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return nil, fmt.Errorf("onnxx: reading model %s: %w", path, err)
	}
	s := &Session{shapes: map[string][][]int64{}}
	if s.inputs, err = pick("input", ins, inputNames); err != nil {
		return nil, err
	}
	if s.outputs, err = pick("output", outs, outputNames); err != nil {
		return nil, err
	}
	for _, info := range s.outputs {
		if _, ok := knownShape(info, nil, 0); !ok {
			s.dynamic = true
		}
	}
	if s.s, err = ort.NewDynamicAdvancedSession(path, names(s.inputs), names(s.outputs), options); err != nil {
		return nil, fmt.Errorf("onnxx: loading model %s: %w", path, err)
	}
	return s, nil
}

func pick(kind string, infos []ort.InputOutputInfo, want []string) ([]ort.InputOutputInfo, error) {
	if want == nil {
		return infos, nil
	}
	out := make([]ort.InputOutputInfo, 0, len(want))
	for _, n := range want {
		found := false
		for _, info := range infos {
			if info.Name == n {
				out = append(out, info)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("%w: the model has no %s %q (it has %s)", ErrModel, kind, n, strings.Join(names(infos), ", "))
		}
	}
	return out, nil
}

func names(infos []ort.InputOutputInfo) []string {
	out := make([]string, len(infos))
	for i, info := range infos {
		out[i] = info.Name
	}
	return out
}

// Inputs describes the inputs the session takes, in order (dimensions of -1 are dynamic).
func (s *Session) Inputs() []ort.InputOutputInfo { return append([]ort.InputOutputInfo{}, s.inputs...) }

// Outputs describes the outputs the session returns, in order (dimensions of -1 are dynamic).
func (s *Session) Outputs() []ort.InputOutputInfo {
	return append([]ort.InputOutputInfo{}, s.outputs...)
}

// Destroy frees the ORT session. Tensors the session returned stay valid.
func (s *Session) Destroy() error { return s.s.Destroy() }

// Run runs the model on inputs (one tensor per input name) and returns the outputs by name.
// Outputs of a known shape are core tensors in Go memory that ORT wrote into; others are over
// the values ORT allocated, which onnxruntime_go copied once (see FromValue); the session
// remembers their shapes, so that later runs with the same input shapes write into tensors
// allocated before the run. A float16 or bfloat16 output whose shape is not known before the run
// cannot come back that way (onnxruntime_go copies too few bytes of it): Run fails with ErrModel,
// and RunWith with a destination for it works (and teaches the session its shape).
func (s *Session) Run(inputs map[string]*core.Tensor) (map[string]*core.Tensor, error) {
	return s.RunWith(inputs, nil)
}

// RunWith is Run with destinations: ORT writes each output named in outputs into that tensor,
// which must be a writable host tensor in C order with the output's dtype and shape (memory of a
// Gonum matrix, a memory-mapped file, ...). The result holds every output, the given tensors
// among them.
func (s *Session) RunWith(inputs, outputs map[string]*core.Tensor) (map[string]*core.Tensor, error) {
	var made []built
	defer func() {
		for _, b := range made {
			b.release()
		}
	}()
	if len(inputs) != len(s.inputs) {
		for n := range inputs {
			if !has(s.inputs, n) {
				return nil, fmt.Errorf("%w: no input %q in the session (it takes %s)", ErrModel, n, strings.Join(names(s.inputs), ", "))
			}
		}
	}
	for n := range outputs {
		if !has(s.outputs, n) {
			return nil, fmt.Errorf("%w: no output %q in the session (it gives %s)", ErrModel, n, strings.Join(names(s.outputs), ", "))
		}
	}
	inVals := make([]ort.Value, len(s.inputs))
	var key []byte // the input shapes, when some output shape depends on them
	for i, info := range s.inputs {
		t, ok := inputs[info.Name]
		if !ok || t == nil {
			return nil, fmt.Errorf("%w: input %q is missing", ErrModel, info.Name)
		}
		if err := fits("input", info, t); err != nil {
			return nil, err
		}
		b, err := toValue(t, adapters.Options{}, false)
		if err != nil {
			return nil, fmt.Errorf("onnxx: input %q: %w", info.Name, err)
		}
		made = append(made, b)
		inVals[i] = b.value
		if s.dynamic {
			for d := range t.Ndim() {
				key = strconv.AppendInt(key, t.Dim(d), 10)
				key = append(key, ',')
			}
			key = append(key, ';')
		}
	}
	var seen [][]int64
	if s.dynamic {
		s.mu.Lock()
		seen = s.shapes[string(key)]
		s.mu.Unlock()
	}

	outVals := make([]ort.Value, len(s.outputs))
	dynamic := s.dynamic
	result := make(map[string]*core.Tensor, len(s.outputs))
	for i, info := range s.outputs {
		t := outputs[info.Name]
		if t == nil {
			shape, ok := knownShape(info, seen, i)
			if !ok {
				if customType(info.DataType) {
					return nil, fmt.Errorf("%w: output %q is %s of dynamic shape %v, not known before this run; onnxruntime_go cannot allocate it (it copies too few bytes): pass a destination to RunWith",
						ErrModel, info.Name, info.DataType, info.Dimensions)
				}
				continue // ORT allocates it, onnxruntime_go copies it
			}
			dt, err := DType(info.DataType)
			if err != nil {
				return nil, fmt.Errorf("onnxx: output %q: %w", info.Name, err)
			}
			if t, err = core.New(dt, shape...); err != nil {
				return nil, fmt.Errorf("onnxx: output %q: %w", info.Name, err)
			}
		} else {
			if err := fits("output", info, t); err != nil {
				return nil, err
			}
			if t.ReadOnly() {
				return nil, fmt.Errorf("onnxx: output %q: %w", info.Name, core.ErrReadOnly)
			}
		}
		o := adapters.Options{Policy: adapters.CopyNever}
		if t.Ndim() == 0 {
			o.Policy = adapters.CopyIfNeeded // a 0-d output lands in an ort.Scalar, copied after the run
		}
		b, err := toValue(t, o, false)
		if err != nil {
			return nil, fmt.Errorf("onnxx: output %q: %w", info.Name, err)
		}
		made = append(made, b)
		outVals[i] = b.value
		if t.Ndim() > 0 {
			result[info.Name] = t // ORT writes into t itself
		}
	}
	if err := s.s.Run(inVals, outVals); err != nil {
		return nil, fmt.Errorf("onnxx: running the model: %w", err)
	}
	shapes := make([][]int64, len(s.outputs))
	var firstErr error
	for i, info := range s.outputs {
		t, ok := result[info.Name]
		if !ok { // ORT allocated it (onnxruntime_go copied it), or it is 0-d, in an ort.Scalar
			var err error
			if t, err = FromValue(outVals[i]); err != nil {
				outVals[i].Destroy()
				if firstErr == nil {
					firstErr = fmt.Errorf("onnxx: output %q: %w", info.Name, err)
				}
				continue
			}
			if dst := outputs[info.Name]; dst != nil { // a 0-d destination: copy the one element in
				if err := adapters.Copy(dst, t); err != nil && firstErr == nil {
					firstErr = fmt.Errorf("onnxx: output %q: %w", info.Name, err)
				}
				t = dst
			}
			result[info.Name] = t
		}
		shapes[i] = t.Shape()
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if dynamic {
		s.mu.Lock()
		if len(s.shapes) >= maxShapeCache {
			clear(s.shapes)
		}
		s.shapes[string(key)] = shapes
		s.mu.Unlock()
	}
	return result, nil
}

func has(infos []ort.InputOutputInfo, name string) bool {
	for _, info := range infos {
		if info.Name == name {
			return true
		}
	}
	return false
}

// fits checks a tensor against the model's description of an input or output.
func fits(kind string, info ort.InputOutputInfo, t *core.Tensor) error {
	want, err := DType(info.DataType)
	if err != nil {
		return fmt.Errorf("onnxx: %s %q: %w", kind, info.Name, err)
	}
	if t.DType() != want {
		return fmt.Errorf("%w: %s %q is %s, the model wants %s", ErrModel, kind, info.Name, t.DType(), want)
	}
	shape := t.Shape()
	ok := len(shape) == len(info.Dimensions)
	for i := 0; ok && i < len(shape); i++ {
		ok = info.Dimensions[i] < 0 || info.Dimensions[i] == shape[i]
	}
	if !ok {
		return fmt.Errorf("%w: %s %q has shape %v, the model wants %v (-1: any)", ErrModel, kind, info.Name, shape, info.Dimensions)
	}
	return nil
}

// knownShape returns the shape of output i if the model declares it or an earlier run with the
// same input shapes revealed it.
func knownShape(info ort.InputOutputInfo, seen [][]int64, i int) ([]int64, bool) {
	if seen != nil && seen[i] != nil {
		return seen[i], true
	}
	for _, d := range info.Dimensions {
		if d < 0 {
			return nil, false
		}
	}
	return append([]int64{}, info.Dimensions...), true
}

// customType reports whether onnxruntime_go handles the type only as an ort.CustomDataTensor,
// whose ORT-allocated outputs it copies too few bytes of.
func customType(t ort.TensorElementDataType) bool {
	return t == ort.TensorElementDataTypeFloat16 || t == ort.TensorElementDataTypeBFloat16
}

// Run loads the model at path, runs it once on inputs and returns the named outputs (nil: all),
// then frees the session. It calls Init. For repeated runs, make a Session.
func Run(path string, inputs map[string]*core.Tensor, outputNames []string) (map[string]*core.Tensor, error) {
	s, err := NewSession(path, nil, outputNames, nil)
	if err != nil {
		return nil, err
	}
	defer s.Destroy()
	return s.Run(inputs)
}
