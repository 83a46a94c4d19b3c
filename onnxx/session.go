package onnxx

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	ort "github.com/yalue/onnxruntime_go"
)

// Session runs an ONNX model on core tensors. It wraps an ort.DynamicAdvancedSession and the
// model's input and output descriptions. Each run hands ORT values over the input tensors
// (zero-copy, see ToValue) and over output tensors that ORT writes into. The session remembers
// the values it made over the tensors the caller passed (by tensor, data address and shape), so
// that a later run with the same tensors reuses them instead of making new ones: repeated
// inference with RunInto and the same tensors allocates nothing. A Session is safe for
// concurrent use (a run that finds another one using the remembered values makes its own); Destroy
// it when done.
type Session struct {
	s       *ort.DynamicAdvancedSession
	inputs  []ort.InputOutputInfo
	outputs []ort.InputOutputInfo
	inDT    []dtypeOf // the core dtype of each input
	outDT   []dtypeOf // and of each output

	dynamic bool // some output has a dynamic dimension

	b *bindings

	mu     sync.Mutex
	shapes map[uint64]shapeEntry // output shapes seen, by a hash of the input shapes
}

// dtypeOf is a model dtype in core's terms, or why there is none.
type dtypeOf struct {
	dt  core.DLDataType
	err error
}

// shapeEntry is what a run with some input shapes revealed: the input shapes (to tell hash
// collisions apart) and the output shapes.
type shapeEntry struct {
	in  []int64 // each input's rank, then its dimensions
	out [][]int64
}

// maxShapeCache bounds how many input-shape combinations a Session remembers output shapes for.
const maxShapeCache = 256

// bindings are the ORT values a Session made over the caller's tensors, kept for the next run.
// Whoever holds mu uses them.
type bindings struct {
	mu      sync.Mutex
	in, out []slot
	inVals  []ort.Value // scratch for the run that holds mu
	outVals []ort.Value
}

// slot is one remembered value: built over t, whose data address was data.
type slot struct {
	t    *core.Tensor
	data unsafe.Pointer
	b    built
}

// matches reports whether the slot's value is over t's current memory, shape and dtype.
func (sl *slot) matches(t *core.Tensor) bool {
	if sl.t != t || sl.b.value == nil || t.Released() || t.Data() != sl.data {
		return false
	}
	shape := sl.b.shape
	if len(shape) != t.Ndim() {
		return false
	}
	for d, n := range shape {
		if t.Dim(d) != n {
			return false
		}
	}
	return true
}

func (sl *slot) drop() {
	sl.b.release()
	*sl = slot{}
}

func (b *bindings) drop() {
	for i := range b.in {
		b.in[i].drop()
	}
	for i := range b.out {
		b.out[i].drop()
	}
}

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
	s := &Session{shapes: map[uint64]shapeEntry{}}
	if s.inputs, err = pick("input", ins, inputNames); err != nil {
		return nil, err
	}
	if s.outputs, err = pick("output", outs, outputNames); err != nil {
		return nil, err
	}
	s.inDT, s.outDT = coreDTypes(s.inputs), coreDTypes(s.outputs)
	for _, info := range s.outputs {
		if _, ok := knownShape(info, nil, 0); !ok {
			s.dynamic = true
		}
	}
	if s.s, err = ort.NewDynamicAdvancedSession(path, names(s.inputs), names(s.outputs), options); err != nil {
		return nil, fmt.Errorf("onnxx: loading model %s: %w", path, err)
	}
	s.b = &bindings{
		in: make([]slot, len(s.inputs)), out: make([]slot, len(s.outputs)),
		inVals: make([]ort.Value, len(s.inputs)), outVals: make([]ort.Value, len(s.outputs)),
	}
	// A Session dropped without Destroy still unpins and destroys the values it kept.
	runtime.AddCleanup(s, func(b *bindings) {
		b.mu.Lock()
		b.drop()
		b.mu.Unlock()
	}, s.b)
	return s, nil
}

func coreDTypes(infos []ort.InputOutputInfo) []dtypeOf {
	out := make([]dtypeOf, len(infos))
	for i, info := range infos {
		out[i].dt, out[i].err = DType(info.DataType)
	}
	return out
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

// Destroy frees the ORT session and the values it kept. Tensors the session returned stay valid.
func (s *Session) Destroy() error {
	s.b.mu.Lock()
	s.b.drop()
	s.b.mu.Unlock()
	return s.s.Destroy()
}

// Run runs the model on inputs (one tensor per input name) and returns the outputs by name.
// Outputs of a known shape are core tensors in Go memory, allocated for this run, that ORT wrote
// into; others are over the values ORT allocated, which onnxruntime_go copied once (see
// FromValue); the session remembers their shapes, so that later runs with the same input shapes
// write into tensors allocated before the run. A float16 or bfloat16 output whose shape is not
// known before the run cannot come back that way (see the package documentation): Run fails with
// ErrModel, and RunWith with a destination for it works (and teaches the session its shape).
func (s *Session) Run(inputs map[string]*core.Tensor) (map[string]*core.Tensor, error) {
	return s.RunWith(inputs, nil)
}

// RunWith is Run with destinations: ORT writes each output named in outputs into that tensor,
// which must be a writable host tensor in C order with the output's dtype and shape (memory of a
// Gonum matrix, a memory-mapped file, ...). The result holds every output, the given tensors
// among them. For repeated inference into the same destinations, RunInto does the same without
// the maps.
func (s *Session) RunWith(inputs, outputs map[string]*core.Tensor) (map[string]*core.Tensor, error) {
	if len(inputs) != len(s.inputs) {
		for n := range inputs {
			if !has(s.inputs, n) {
				return nil, fmt.Errorf("%w: no input %q in the session (it takes %s)", ErrModel, n, strings.Join(names(s.inputs), ", "))
			}
		}
	}
	var inBuf, outBuf [4]*core.Tensor // most models have few inputs and outputs: no allocation
	ins, outs := inBuf[:0], outBuf[:0]
	for _, info := range s.inputs {
		ins = append(ins, inputs[info.Name])
	}
	found := 0
	for _, info := range s.outputs {
		t, ok := outputs[info.Name]
		if ok {
			found++
		}
		outs = append(outs, t)
	}
	if found != len(outputs) { // some name is not an output: say which
		for n := range outputs {
			if !has(s.outputs, n) {
				return nil, fmt.Errorf("%w: no output %q in the session (it gives %s)", ErrModel, n, strings.Join(names(s.outputs), ", "))
			}
		}
	}
	if err := s.run(ins, outs, true); err != nil {
		return nil, err
	}
	result := make(map[string]*core.Tensor, len(s.outputs))
	for i, info := range s.outputs {
		result[info.Name] = outs[i]
	}
	return result, nil
}

// RunInto runs the model on inputs, one tensor per input in the order of Inputs, and writes the
// outputs into outputs, one writable host tensor in C order per output in the order of Outputs,
// with the output's dtype and its shape for these inputs. It is the path for repeated inference:
// when the tensors are the ones of the previous run (same tensors, memory and shapes), the ORT
// values made for that run are used again, and RunInto allocates nothing.
func (s *Session) RunInto(inputs, outputs []*core.Tensor) error {
	if len(inputs) != len(s.inputs) || len(outputs) != len(s.outputs) {
		return fmt.Errorf("%w: RunInto got %d inputs and %d outputs, the session takes %d and gives %d",
			ErrModel, len(inputs), len(outputs), len(s.inputs), len(s.outputs))
	}
	return s.run(inputs, outputs, false) // which refuses nil outputs, as fill is unset
}

// run runs the model. outs[i] nil means the output is allocated here (known shape) or by ORT;
// run fills it in. With fill unset every output is a destination. (The work is in runLocked:
// run has few returns, so that its defers stay open-coded and cheap.)
func (s *Session) run(ins, outs []*core.Tensor, fill bool) error {
	var temps temps
	defer temps.release()
	b := s.b
	if !b.mu.TryLock() { // another run uses the kept values: make this run's own
		return s.runLocked(ins, outs, fill, false, make([]ort.Value, len(ins)), make([]ort.Value, len(outs)), &temps)
	}
	defer b.mu.Unlock()
	clear(b.outVals)
	err := s.runLocked(ins, outs, fill, true, b.inVals, b.outVals, &temps)
	clear(b.outVals) // hold no output ORT allocated: the tensor over it owns it now
	return err
}

// temps are the values made for one run only.
type temps []built

func (ts *temps) release() {
	for _, t := range *ts {
		t.release()
	}
}

// runLocked is run with its scratch values; with cached set, it holds s.b.mu and may use and
// replace the kept values.
func (s *Session) runLocked(ins, outs []*core.Tensor, fill, cached bool, inVals, outVals []ort.Value, temps *temps) error {
	b := s.b
	for i, t := range ins {
		if cached && b.in[i].matches(t) {
			// t fitted when its value was made, and a tensor's dtype, shape and flags do not change
			inVals[i] = b.in[i].b.value
			continue
		}
		info := &s.inputs[i]
		if t == nil {
			return fmt.Errorf("%w: input %q is missing", ErrModel, info.Name)
		}
		if err := s.fits("input", info, s.inDT[i], t); err != nil {
			return err
		}
		v, err := toValue(t, adapters.Options{}, false)
		if err != nil {
			return fmt.Errorf("onnxx: input %q: %w", info.Name, err)
		}
		if cached && v.src == t && t.Ndim() > 0 {
			b.in[i].drop()
			b.in[i] = slot{t: t, data: t.Data(), b: v}
		} else {
			*temps = append(*temps, v)
		}
		inVals[i] = v.value
	}

	var key uint64
	var seen *shapeEntry
	if fill && s.dynamic && slices.Contains(outs, nil) {
		key = shapeKey(ins)
		s.mu.Lock()
		if e, ok := s.shapes[key]; ok && e.matches(ins) {
			seen = &e
		}
		s.mu.Unlock()
	}
	given := 0          // outputs the caller passed
	var scalarDst []int // 0-d outputs: ORT writes an ort.Scalar, copied out after the run
	for i, t := range outs {
		info := &s.outputs[i]
		mine := t == nil
		if mine && !fill {
			return fmt.Errorf("%w: RunInto needs a destination for output %q", ErrModel, info.Name)
		}
		if mine {
			var out [][]int64
			if seen != nil {
				out = seen.out
			}
			shape, ok := knownShape(*info, out, i)
			if !ok {
				if customType(info.DataType) {
					return fmt.Errorf("%w: output %q is %s of dynamic shape %v, not known before this run; onnxruntime_go cannot return it (it copies too few bytes of ORT's output): pass a destination to RunWith or RunInto",
						ErrModel, info.Name, info.DataType, info.Dimensions)
				}
				continue // ORT allocates it, onnxruntime_go copies it
			}
			if err := s.outDT[i].err; err != nil {
				return fmt.Errorf("onnxx: output %q: %w", info.Name, err)
			}
			var err error
			if t, err = core.New(s.outDT[i].dt, shape...); err != nil {
				return fmt.Errorf("onnxx: output %q: %w", info.Name, err)
			}
		} else {
			given++
			if cached && b.out[i].matches(t) { // fitted, and writable, when its value was made
				outVals[i] = b.out[i].b.value
				continue
			}
			if err := s.fits("output", info, s.outDT[i], t); err != nil {
				return err
			}
			if t.ReadOnly() {
				return fmt.Errorf("onnxx: output %q: %w", info.Name, core.ErrReadOnly)
			}
		}
		o := adapters.Options{Policy: adapters.CopyNever}
		if t.Ndim() == 0 {
			o.Policy = adapters.CopyIfNeeded // a 0-d output lands in an ort.Scalar, copied after the run
		}
		v, err := toValue(t, o, false)
		if err != nil {
			return fmt.Errorf("onnxx: output %q: %w", info.Name, err)
		}
		outVals[i] = v.value
		switch {
		case t.Ndim() == 0:
			*temps = append(*temps, v)
			scalarDst = append(scalarDst, i)
			if mine {
				outs[i] = nil // made from the ort.Scalar after the run
			}
			continue
		case cached && !mine:
			b.out[i].drop()
			b.out[i] = slot{t: t, data: t.Data(), b: v}
		default:
			*temps = append(*temps, v)
		}
		outs[i] = t // ORT writes into t itself
	}
	if err := s.s.Run(inVals, outVals); err != nil {
		for i, v := range outVals { // values onnxruntime_go made before it failed
			if v != nil && outs[i] == nil && !slices.Contains(scalarDst, i) {
				v.Destroy()
			}
		}
		return fmt.Errorf("onnxx: running the model: %w", err)
	}
	learn := fill && s.dynamic
	if given == len(outs) && scalarDst == nil && !learn {
		return nil // every output is in the caller's tensors
	}
	var firstErr error
	for i, info := range s.outputs {
		if outs[i] != nil && !slices.Contains(scalarDst, i) {
			continue
		}
		// ORT allocated it (onnxruntime_go copied it), or it is 0-d, in an ort.Scalar.
		t, err := FromValue(outVals[i])
		if err != nil {
			if !slices.Contains(scalarDst, i) {
				outVals[i].Destroy()
			}
			if firstErr == nil {
				firstErr = fmt.Errorf("onnxx: output %q: %w", info.Name, err)
			}
			continue
		}
		if dst := outs[i]; dst != nil { // a 0-d destination: copy the one element in
			if err := adapters.Copy(dst, t); err != nil && firstErr == nil {
				firstErr = fmt.Errorf("onnxx: output %q: %w", info.Name, err)
			}
			continue
		}
		outs[i] = t
	}
	if firstErr != nil {
		return firstErr
	}
	if learn {
		e := shapeEntry{out: make([][]int64, len(outs))}
		for i, t := range outs {
			e.out[i] = t.Shape()
		}
		e.in = flatShapes(ins)
		if key == 0 {
			key = shapeKey(ins)
		}
		s.mu.Lock()
		if len(s.shapes) >= maxShapeCache {
			clear(s.shapes)
		}
		s.shapes[key] = e
		s.mu.Unlock()
	}
	return nil
}

// shapeKey hashes the ranks and dimensions of ts (FNV-1a over 64-bit words), without allocating.
func shapeKey(ts []*core.Tensor) uint64 {
	h := uint64(14695981039346656037)
	mix := func(x int64) {
		h ^= uint64(x)
		h *= 1099511628211
	}
	for _, t := range ts {
		mix(int64(t.Ndim()))
		for d := range t.Ndim() {
			mix(t.Dim(d))
		}
	}
	return h | 1 // never 0, which run uses for "not computed"
}

// flatShapes lists each tensor's rank followed by its dimensions.
func flatShapes(ts []*core.Tensor) []int64 {
	var out []int64
	for _, t := range ts {
		out = append(out, int64(t.Ndim()))
		for d := range t.Ndim() {
			out = append(out, t.Dim(d))
		}
	}
	return out
}

// matches reports whether e was recorded for the shapes of ts (and not for others of the same hash).
func (e *shapeEntry) matches(ts []*core.Tensor) bool {
	j := 0
	for _, t := range ts {
		if j >= len(e.in) || e.in[j] != int64(t.Ndim()) {
			return false
		}
		j++
		for d := range t.Ndim() {
			if j >= len(e.in) || e.in[j] != t.Dim(d) {
				return false
			}
			j++
		}
	}
	return j == len(e.in)
}

func has(infos []ort.InputOutputInfo, name string) bool {
	for _, info := range infos {
		if info.Name == name {
			return true
		}
	}
	return false
}

// fits checks a tensor against the model's description of an input or output, without
// allocating unless it fails.
func (s *Session) fits(kind string, info *ort.InputOutputInfo, want dtypeOf, t *core.Tensor) error {
	if want.err != nil {
		return fmt.Errorf("onnxx: %s %q: %w", kind, info.Name, want.err)
	}
	if t.DType() != want.dt {
		return fmt.Errorf("%w: %s %q is %s, the model wants %s", ErrModel, kind, info.Name, t.DType(), want.dt)
	}
	ok := t.Ndim() == len(info.Dimensions)
	for i := 0; ok && i < len(info.Dimensions); i++ {
		ok = info.Dimensions[i] < 0 || info.Dimensions[i] == t.Dim(i)
	}
	if !ok {
		return fmt.Errorf("%w: %s %q has shape %v, the model wants %v (-1: any)", ErrModel, kind, info.Name, t.Shape(), info.Dimensions)
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
