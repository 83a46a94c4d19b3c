package onnxx

import (
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/onnxx/tinyonnx"
)

// IOInfo describes one input or output of a model.
type IOInfo struct {
	// Name is the input's or output's name in the graph.
	Name string
	// DType is its element type as a core dtype.
	DType core.DLDataType
	// ElementType is its ONNX element type.
	ElementType ElementType
	// Shape has one entry per dimension: the size, or -1 for a dynamic dimension. It is empty
	// both for a scalar and for a value of unknown rank (UnknownRank).
	Shape []int64
	// Symbols has one entry per dimension: the symbolic name of a dynamic dimension ("batch"),
	// "" for fixed and unnamed ones.
	Symbols []string
	// UnknownRank is set when the model does not state the rank (its type has no shape): such
	// an input takes a tensor of any shape, and such an output comes back in the shape the run
	// computes. It is not a scalar, whose Shape is empty too with UnknownRank unset.
	UnknownRank bool
	// Initializer is set for an overridable initializer: a value the model holds (a weight, a
	// constant) that a run may replace, as ORT allows for an initializer the graph also lists
	// among its inputs. Session.Initializers lists them; a session takes one as an input when
	// NewSession's inputNames names it.
	Initializer bool

	err error // why this package cannot pass it (refused when a session is asked to use it)
}

// Dynamic reports whether the shape is not known before a run: the rank is unknown, or some
// dimension is dynamic (-1).
func (i IOInfo) Dynamic() bool {
	if i.UnknownRank {
		return true
	}
	for _, d := range i.Shape {
		if d < 0 {
			return true
		}
	}
	return false
}

func (i IOInfo) clone() IOInfo {
	i.Shape = append([]int64{}, i.Shape...)
	i.Symbols = append([]string{}, i.Symbols...)
	return i
}

// Session runs an ONNX model on core tensors through ONNX Runtime's C API. Each run hands ORT
// values over the input tensors' own memory and over output tensors that ORT writes into (or ORT
// allocates outputs whose shape is not known before the run, and the results are tensors over ORT's
// memory). The session remembers the values it made over the tensors the caller passed (by tensor:
// a tensor's memory and shape never change), so that a later run with the same tensors reuses them:
// repeated inference with RunInto on the same tensors makes one ORT call and allocates nothing. A
// Session is safe for concurrent use; Destroy it when done (one that becomes unreachable is freed
// by the collector).
type Session struct {
	api             *ortAPI
	h               *handle
	inputs, outputs []IOInfo
	inits           []IOInfo  // the model's overridable initializers (see Initializers)
	inNames         []uintptr // const char* of each input name, into names
	outNames        []uintptr
	names           [][]byte // the NUL-terminated names the pointers point into
	cuda            bool     // the CUDA execution provider was added
	// bindKept: settled runs go through an I/O binding (invokeKept). Only for sessions
	// without execution providers: ORT's BindInput copies an input that a provider wants on its
	// device at bind time, and a binding used again would then feed it that stale copy.
	bindKept   bool
	dynamicOut bool // some output has a dynamic shape
	// prealloc[i]: output i, without a destination, is allocated (or lent) here before the run:
	// its shape is known, it is at most SessionOptions.MaxOutputAlloc bytes, and it is not an
	// echo. Other outputs ORT allocates.
	prealloc []bool
	// echo[i]: output i may be handed back by ORT as an input's own value (it is a graph
	// input, or an Identity chain of one), in place of the buffer it would be given: it is
	// never given one, and what ORT returns is checked against the inputs (see collect).
	echo    []bool
	anyEcho bool
	b       *bindings
}

// handle is the OrtSession, released once by Destroy or by the cleanup of an unreachable Session.
type handle struct {
	mu      sync.RWMutex // runs hold it for reading, Destroy for writing
	session uintptr
	io      uintptr // the OrtIoBinding of settled runs (see invokeKept); 0 until its first run
	ro      uintptr // default OrtRunOptions of settled runs, made with io
	api     *ortAPI
}

func (h *handle) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.io != 0 {
		h.api.do(fnReleaseIoBinding, h.io)
		h.api.do(fnReleaseRunOptions, h.ro)
		h.io, h.ro = 0, 0
	}
	if h.session != 0 {
		h.api.do(fnReleaseSession, h.session)
		h.session = 0
	}
}

// NewSession loads the model at path for running with the named inputs and outputs (nil means all
// of the model's, in the model's order). inputNames may also name overridable initializers (see
// Session.Initializers): the session then takes each as an input, which every run feeds like
// the others, in place of the model's value. opts may be nil (ORT's defaults, ORT silent). It calls
// Init. Inputs or outputs that are not numeric or bool tensors (strings, sequences, maps) are
// refused with ErrValue: leave such outputs out with outputNames.
func NewSession(path string, inputNames, outputNames []string, opts *SessionOptions) (*Session, error) {
	g, err := readGraphFile(path)
	if err != nil {
		return nil, err
	}
	p := cstr(path)
	return newSession("model "+path, g, inputNames, outputNames, opts, func(a *ortAPI, so uintptr, out *uintptr) error {
		return a.call("loading model "+path, fnCreateSession, a.env, ptr(p), so, uintptr(unsafe.Pointer(out)))
	})
}

// NewSessionFromBytes is NewSession for a model held in memory (a go:embed file, a download). ORT
// reads model during the call only; the caller may reuse it afterwards.
func NewSessionFromBytes(model []byte, inputNames, outputNames []string, opts *SessionOptions) (*Session, error) {
	if len(model) == 0 {
		return nil, errs.Errorf(ErrModel, "onnxx: empty model bytes")
	}
	g, _ := tinyonnx.ReadGraphBytes(model) // nil for what it cannot read (see readGraphFile)
	return newSession(fmt.Sprintf("model of %d bytes", len(model)), g, inputNames, outputNames, opts, func(a *ortAPI, so uintptr, out *uintptr) error {
		return a.call("loading a model from bytes", fnCreateSessionFromArray, a.env, ptr(model), uintptr(len(model)), so,
			uintptr(unsafe.Pointer(out)))
	})
}

// readGraphFile opens the model file at path, failing with ErrModel and the system's words
// ("onnxx: open model.onnx: no such file or directory") if it cannot be read, and reads its graph
// declarations; the graph is nil if they cannot be read (a model in ORT's own format, which ORT
// reads): the session then knows only what ORT's C API says (a value of unknown rank reads as a
// scalar, and echo outputs by name only).
func readGraphFile(path string) (*tinyonnx.Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errs.Errorf(ErrModel, "onnxx: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, errs.Errorf(ErrModel, "onnxx: %w", err)
	}
	if st.IsDir() {
		return nil, errs.Errorf(ErrModel, "onnxx: model %s is a directory: %w", path, fs.ErrInvalid)
	}
	g, _ := tinyonnx.ReadGraph(f, st.Size())
	return g, nil
}

// newSession makes the session options, calls create, and describes the session's inputs and
// outputs, with what g (nil: nothing) declares.
func newSession(what string, g *tinyonnx.Graph, inputNames, outputNames []string, opts *SessionOptions,
	create func(a *ortAPI, so uintptr, out *uintptr) error) (*Session, error) {
	a, err := loaded()
	if err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &SessionOptions{}
	}
	so, err := a.sessionOptions(opts)
	if err != nil {
		return nil, err
	}
	var sess uintptr
	err = create(a, so, &sess)
	a.do(fnReleaseSessionOptions, so)
	if err != nil {
		return nil, err // the error names the model
	}
	s := &Session{api: a, h: &handle{session: sess, api: a}}
	for _, p := range opts.Providers {
		s.cuda = s.cuda || p.cuda()
	}
	s.bindKept = len(opts.Providers) == 0
	runtime.AddCleanup(s, (*handle).release, s.h)
	if err := s.describe(g, inputNames, outputNames); err != nil {
		s.h.release()
		return nil, errorf([]error{err}, "%s (%s)", err, what)
	}
	s.plan(opts.MaxOutputAlloc)
	s.b = newBindings(a, len(s.inputs), s.outputs, s.prealloc)
	s.dynamicOut = slices.ContainsFunc(s.outputs, IOInfo.Dynamic)
	runtime.AddCleanup(s, (*bindings).drop, s.b)
	return s, nil
}

// describe reads the model's inputs and outputs, completes them with what g declares, finds the
// echo outputs and keeps those asked for.
func (s *Session) describe(g *tinyonnx.Graph, inputNames, outputNames []string) error {
	ins, err := s.infos("input", fnSessionGetInputCount, fnSessionGetInputName, fnSessionGetInputTypeInfo)
	if err != nil {
		return err
	}
	outs, err := s.infos("output", fnSessionGetOutputCount, fnSessionGetOutputName, fnSessionGetOutputTypeInfo)
	if err != nil {
		return err
	}
	inits, err := s.infos("overridable initializer", fnSessionGetOverridableInitializerCount,
		fnSessionGetOverridableInitializerName, fnSessionGetOverridableInitializerTypeInfo)
	if err != nil {
		return err
	}
	for i := range inits {
		inits[i].Initializer = true
	}
	if g != nil {
		declare(ins, g.Inputs)
		declare(inits, g.Inputs)
		declare(outs, g.Outputs)
	}
	s.inits = inits
	echoes := echoes(g, append(slices.Clip(ins), inits...))
	if s.inputs, err = pickInputs(ins, inits, inputNames); err != nil {
		return err
	}
	if s.outputs, err = pick("output", outs, outputNames); err != nil {
		return err
	}
	for _, set := range []struct {
		kind  string
		infos []IOInfo
	}{{"input", s.inputs}, {"output", s.outputs}} {
		for _, m := range set.infos {
			if m.err != nil {
				return wrapf(m.err, "%s %q", set.kind, m.Name)
			}
		}
	}
	s.inNames, s.outNames = s.cnames(s.inputs), s.cnames(s.outputs)
	s.echo = make([]bool, len(s.outputs))
	for i, o := range s.outputs {
		s.echo[i] = echoes[o.Name]
		s.anyEcho = s.anyEcho || s.echo[i]
	}
	return nil
}

// declare marks the infos whose value the model declares as a tensor without a shape: ORT's C
// API reports zero dimensions for them, as for a scalar.
func declare(infos []IOInfo, decl []tinyonnx.ValueInfo) {
	for i := range infos {
		for _, d := range decl {
			if d.Name == infos[i].Name && d.Tensor && !d.HasShape && len(infos[i].Shape) == 0 {
				infos[i].UnknownRank, infos[i].Shape, infos[i].Symbols = true, nil, nil
			}
		}
	}
}

// echoes names the values that ORT may hand back as one of the inputs' own values: the graph
// inputs, and what Identity nodes make of them (g nil: the inputs only).
func echoes(g *tinyonnx.Graph, ins []IOInfo) map[string]bool {
	e := make(map[string]bool, len(ins))
	for _, in := range ins {
		e[in.Name] = true
	}
	if g == nil {
		return e
	}
	next := map[string][]string{} // Identity's input -> its outputs
	for _, n := range g.Nodes {
		if n.Op == "Identity" && len(n.Inputs) == 1 && len(n.Outputs) == 1 {
			next[n.Inputs[0]] = append(next[n.Inputs[0]], n.Outputs[0])
		}
	}
	work := make([]string, 0, len(ins))
	for name := range e {
		work = append(work, name)
	}
	for len(work) > 0 {
		name := work[len(work)-1]
		work = work[:len(work)-1]
		for _, o := range next[name] {
			if !e[o] {
				e[o] = true
				work = append(work, o)
			}
		}
	}
	return e
}

// plan decides which outputs are allocated here before a run (prealloc): of known shape, not
// echoes, and at most max bytes (0: DefaultMaxOutputAlloc; negative: none).
func (s *Session) plan(max int64) {
	if max == 0 {
		max = DefaultMaxOutputAlloc
	}
	s.prealloc = make([]bool, len(s.outputs))
	for i := range s.outputs {
		info := &s.outputs[i]
		if info.Dynamic() || s.echo[i] {
			continue
		}
		n, err := memory.AllocSize(info.DType, info.Shape...)
		s.prealloc[i] = err == nil && n <= max
	}
}

// cnames makes the NUL-terminated names ORT's Run takes and returns pointers to them.
func (s *Session) cnames(infos []IOInfo) []uintptr {
	out := make([]uintptr, len(infos)+1) // never empty: &out[0] is always valid
	for i, info := range infos {
		b := cstr(info.Name)
		s.names = append(s.names, b)
		out[i] = ptr(b)
	}
	return out[:len(infos)]
}

// infos reads the names and type information of the model's inputs or outputs.
func (s *Session) infos(kind string, count, name, typeInfo fn) ([]IOInfo, error) {
	a, sess := s.api, s.h.session
	var n uintptr
	if err := a.call("counting "+kind+"s", count, sess, uintptr(unsafe.Pointer(&n))); err != nil {
		return nil, err
	}
	out := make([]IOInfo, 0, min(n, 1<<12))
	for i := range n {
		var p uintptr
		if err := a.call("reading an "+kind+" name", name, sess, i, a.allocator, uintptr(unsafe.Pointer(&p))); err != nil {
			return nil, err
		}
		info := IOInfo{Name: goString(p, maxNameLen)}
		a.do(fnAllocatorFree, a.allocator, p)
		var ti uintptr
		if err := a.call("reading "+kind+" "+info.Name+"'s type", typeInfo, sess, i, uintptr(unsafe.Pointer(&ti))); err != nil {
			return nil, err
		}
		err := a.describeType(ti, &info)
		a.do(fnReleaseTypeInfo, ti)
		if err != nil {
			// kept with its reason: refused only if the session is asked to use it
			info.err = err
		}
		out = append(out, info)
	}
	return out, nil
}

// describeType fills info from an OrtTypeInfo.
func (a *ortAPI) describeType(ti uintptr, info *IOInfo) error {
	var kind int32
	if err := a.call("reading a value kind", fnGetOnnxTypeFromTypeInfo, ti, uintptr(unsafe.Pointer(&kind))); err != nil {
		return err
	}
	if kind != ortTypeTensor {
		what := map[int32]string{ortTypeSequence: "a sequence", ortTypeMap: "a map"}[kind]
		if what == "" {
			what = fmt.Sprintf("an ONNX value of kind %d", kind)
		}
		return errs.Errorf(ErrValue, "it is %s, not a tensor", what)
	}
	var tt uintptr // const, owned by ti
	if err := a.call("reading tensor info", fnCastTypeInfoToTensorInfo, ti, uintptr(unsafe.Pointer(&tt))); err != nil {
		return err
	}
	var et int32
	if err := a.call("reading an element type", fnGetTensorElementType, tt, uintptr(unsafe.Pointer(&et))); err != nil {
		return err
	}
	info.ElementType = ElementType(et)
	shape, syms, err := a.shapeOf(tt, true)
	if err != nil {
		return err
	}
	info.Shape, info.Symbols = shape, syms
	if info.ElementType == String {
		return errs.Errorf(ErrValue, "it is a tensor of strings")
	}
	dt, err := FromDType(info.ElementType)
	if err != nil {
		return err
	}
	info.DType = dt
	return nil
}

// checkRank refuses a rank ORT reports past maxRank, before anything that size is allocated or
// read.
func checkRank(n uintptr) error {
	if n > maxRank {
		return errs.Errorf(core.ErrNdim, "onnxx: ORT reports rank %d", n)
	}
	return nil
}

// shapeOf reads the dimensions (and with symbols set, their symbolic names) of an
// OrtTensorTypeAndShapeInfo.
func (a *ortAPI) shapeOf(tt uintptr, symbols bool) ([]int64, []string, error) {
	var n uintptr
	if err := a.call("reading a rank", fnGetDimensionsCount, tt, uintptr(unsafe.Pointer(&n))); err != nil {
		return nil, nil, err
	}
	if err := checkRank(n); err != nil {
		return nil, nil, err
	}
	dims := make([]int64, n+1)
	if err := a.call("reading dimensions", fnGetDimensions, tt, uintptr(unsafe.Pointer(&dims[0])), n); err != nil {
		return nil, nil, err
	}
	dims = dims[:n]
	if !symbols {
		return dims, nil, nil
	}
	ps := make([]uintptr, n+1)
	if err := a.call("reading symbolic dimensions", fnGetSymbolicDimensions, tt, uintptr(unsafe.Pointer(&ps[0])), n); err != nil {
		return nil, nil, err
	}
	syms := make([]string, n)
	for i := range syms {
		syms[i] = goString(ps[i], maxNameLen)
	}
	return dims, syms, nil
}

// pick keeps the infos named in want, in want's order (nil: all).
func pick(kind string, infos []IOInfo, want []string) ([]IOInfo, error) {
	if want == nil {
		return infos, nil
	}
	out := make([]IOInfo, 0, len(want))
	for _, n := range want {
		i := index(infos, n)
		if i < 0 {
			return nil, unknownName(kind, n, infos)
		}
		out = append(out, infos[i])
	}
	return out, nil
}

// pickInputs keeps the inputs named in want, in want's order (nil: all of ins), each one of ins
// or of the overridable initializers inits.
func pickInputs(ins, inits []IOInfo, want []string) ([]IOInfo, error) {
	if want == nil {
		return ins, nil
	}
	out := make([]IOInfo, 0, len(want))
	for _, n := range want {
		i := index(ins, n)
		switch {
		case i >= 0:
			out = append(out, ins[i])
		case index(inits, n) >= 0:
			out = append(out, inits[index(inits, n)])
		default:
			if len(inits) == 0 {
				return nil, unknownName("input", n, ins)
			}
			return nil, errs.Errorf(ErrModel, "onnxx: input %q is not an input or overridable initializer of the model (inputs: %s; overridable initializers: %s)",
				n, quoted(ins), quoted(inits))
		}
	}
	return out, nil
}

func index(infos []IOInfo, name string) int {
	for i := range infos {
		if infos[i].Name == name {
			return i
		}
	}
	return -1
}

// unknownName is the error for a name the model does not have, listing the names it has.
func unknownName(kind, name string, infos []IOInfo) error {
	return errs.Errorf(ErrModel, "onnxx: %s %q is not an %s of the model (%ss: %s)", kind, name, kind, kind, quoted(infos))
}

func quoted(infos []IOInfo) string {
	q := make([]string, len(infos))
	for i := range infos {
		q[i] = fmt.Sprintf("%q", infos[i].Name)
	}
	return strings.Join(q, ", ")
}

// Inputs describes the inputs the session takes, in order.
func (s *Session) Inputs() []IOInfo { return cloneInfos(s.inputs) }

// Initializers describes the model's overridable initializers: values the model holds that a run
// may replace (ORT's SessionGetOverridableInitializer*: initializers the graph also lists among
// its inputs), with Initializer set. To feed one, name it in NewSession's inputNames.
func (s *Session) Initializers() []IOInfo { return cloneInfos(s.inits) }

// Outputs describes the outputs the session returns, in order.
func (s *Session) Outputs() []IOInfo { return cloneInfos(s.outputs) }

func cloneInfos(in []IOInfo) []IOInfo {
	out := make([]IOInfo, len(in))
	for i := range in {
		out[i] = in[i].clone()
	}
	return out
}

// Destroy frees the ORT session and the values it kept. Tensors the session returned stay valid
// (those over ORT's memory own it). Runs after Destroy fail with ErrModel. It is idempotent.
func (s *Session) Destroy() error {
	s.h.release()
	s.b.drop()
	return nil
}

// errDestroyed is returned by runs on a destroyed session.
var errDestroyed = errs.Errorf(ErrModel, "onnxx: the session was destroyed")
