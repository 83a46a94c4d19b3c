package onnxx

import (
	"fmt"
	"io/fs"
	"maps"
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

// SessionOptions configure a Session. The zero value (or a nil pointer) is ORT's defaults, with
// ORT silent.
type SessionOptions struct {
	// IntraOpThreads is the number of threads one operator may use; 0 is ORT's default (one per
	// core).
	IntraOpThreads int
	// InterOpThreads is the number of threads that run independent operators; 0 is ORT's default.
	InterOpThreads int
	// GraphOptimization is how much ORT rewrites the graph; the zero value is ORT's default
	// (OptimizeAll).
	GraphOptimization GraphOptimization
	// LogLevel is what this session's ORT logger writes to standard error; the zero value,
	// LogSilent, leaves the environment's level (silent unless SetLogLevel changed it).
	LogLevel LogLevel
	// Providers are execution providers to add, in order of preference (CPU is always last).
	Providers []Provider
	// MaxOutputAlloc bounds what a model's declarations make this package allocate before a
	// run: an output whose declared fixed shape takes more bytes is left to ORT, which allocates
	// what the run computes (the output comes back over ORT's buffer, as a dynamic one does), so
	// a model that declares a huge output cannot make every run allocate it. 0 means
	// DefaultMaxOutputAlloc; a negative value leaves every output without a destination to ORT.
	MaxOutputAlloc int64

	// CPUArena turns ORT's CPU memory arena on or off (Default: on). The arena keeps the blocks
	// of intermediate values (and of outputs ORT allocates) between runs and grows to the
	// largest run's need, never giving memory back by itself: runs allocate little, and a
	// process that ran one large input keeps that much. Off, each value is a plain allocation
	// freed after use: memory follows the current run, at the cost of an allocation per value.
	// (RunOptions.Config "memory.enable_memory_arena_shrinkage": "cpu:0" shrinks an arena that is
	// on, at the end of one run.)
	CPUArena Setting
	// MemoryPattern turns ORT's memory pattern on or off (Default: on): ORT records the
	// allocations of a run at a given input shape and makes them as one block the next time.
	// It speeds up repeated runs of one shape; off, models fed ever-changing shapes do not keep
	// a pattern (and its block) per shape. ORT turns it off itself for parallel execution.
	MemoryPattern Setting
	// ArenaExtendStrategy is how an arena grows when it runs out: ArenaNextPowerOfTwo (ORT's
	// default) rounds each extension up, for fewer extensions and more memory held;
	// ArenaSameAsRequested extends by what was asked, for the least memory. It is given to the
	// CUDA execution provider (its "arena_extend_strategy" option, unless Provider.Options sets
	// it); ORT's C API has no per-session setting of the CPU arena's strategy, so with no CUDA
	// provider it changes nothing (turn the CPU arena off instead).
	ArenaExtendStrategy ArenaExtend
}

// Setting is an on/off session option that defaults to ORT's own choice.
type Setting int8

// The values of a Setting.
const (
	Default  Setting = iota // ORT's default
	Enabled                 // on
	Disabled                // off
)

// ArenaExtend is an arena's extend strategy (SessionOptions.ArenaExtendStrategy).
type ArenaExtend int8

// The arena extend strategies.
const (
	ArenaDefault         ArenaExtend = iota // ORT's default: kNextPowerOfTwo
	ArenaNextPowerOfTwo                     // kNextPowerOfTwo
	ArenaSameAsRequested                    // kSameAsRequested
)

// ortName is ORT's name of the strategy, "" for ORT's default.
func (e ArenaExtend) ortName() (string, error) {
	switch e {
	case ArenaDefault:
		return "", nil
	case ArenaNextPowerOfTwo:
		return "kNextPowerOfTwo", nil
	case ArenaSameAsRequested:
		return "kSameAsRequested", nil
	}
	return "", errs.Errorf(core.ErrArgument, "onnxx: ArenaExtend(%d) is not a strategy", int(e))
}

// DefaultMaxOutputAlloc is the default of SessionOptions.MaxOutputAlloc: 64 MiB.
const DefaultMaxOutputAlloc = 64 << 20

// GraphOptimization is ORT's GraphOptimizationLevel.
type GraphOptimization int

// The graph optimisation levels.
const (
	OptimizeDefault  GraphOptimization = iota // ORT's default: OptimizeAll
	OptimizeDisabled                          // ORT_DISABLE_ALL
	OptimizeBasic                             // ORT_ENABLE_BASIC
	OptimizeExtended                          // ORT_ENABLE_EXTENDED
	OptimizeAll                               // ORT_ENABLE_ALL
)

// ortLevel is ORT's value of g.
func (g GraphOptimization) ortLevel() (int, error) {
	switch g {
	case OptimizeDisabled:
		return 0, nil
	case OptimizeBasic:
		return 1, nil
	case OptimizeExtended:
		return 2, nil
	case OptimizeAll, OptimizeDefault:
		return 99, nil
	}
	return 0, errs.Errorf(core.ErrArgument, "onnxx: GraphOptimization(%d) is not a level", int(g))
}

// Provider is an execution provider to append to a session's options, by the name ORT knows it
// by, with its provider options. "CUDA" (or "CUDAExecutionProvider") uses ORT's CUDA provider
// options (keys such as "device_id"); other names ("XNNPACK", "OpenVINO", "QNN", "CoreML",
// "WebGPU", ...) go to SessionOptionsAppendExecutionProvider. A provider the library was not
// built with fails with ErrProvider.
type Provider struct {
	Name    string
	Options map[string]string
}

// cuda reports whether p names the CUDA execution provider.
func (p Provider) cuda() bool { return p.Name == "CUDA" || p.Name == providerCUDA }

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
	// bindKept: the kept path runs through an I/O binding (invokeKept). Only for sessions
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
	io      uintptr // the OrtIoBinding of the kept path (see invokeKept); 0 until its first run
	ro      uintptr // default OrtRunOptions of the kept path, made with io
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

// sessionOptions makes ORT session options of opts; the caller releases them.
func (a *ortAPI) sessionOptions(opts *SessionOptions) (uintptr, error) {
	var so uintptr
	if err := a.call("creating session options", fnCreateSessionOptions, uintptr(unsafe.Pointer(&so))); err != nil {
		return 0, err
	}
	if err := a.setOptions(so, opts); err != nil {
		a.do(fnReleaseSessionOptions, so)
		return 0, err
	}
	return so, nil
}

func (a *ortAPI) setOptions(so uintptr, opts *SessionOptions) error {
	if opts.IntraOpThreads < 0 || opts.InterOpThreads < 0 {
		return errs.Errorf(core.ErrArgument, "onnxx: thread counts %d and %d must not be negative", opts.IntraOpThreads, opts.InterOpThreads)
	}
	if opts.IntraOpThreads > 0 {
		if err := a.call("setting intra-op threads", fnSetIntraOpNumThreads, so, uintptr(opts.IntraOpThreads)); err != nil {
			return err
		}
	}
	if opts.InterOpThreads > 0 {
		if err := a.call("setting inter-op threads", fnSetInterOpNumThreads, so, uintptr(opts.InterOpThreads)); err != nil {
			return err
		}
	}
	level, err := opts.GraphOptimization.ortLevel()
	if err != nil {
		return err
	}
	if err := a.call("setting the graph optimization level", fnSetSessionGraphOptimization, so, uintptr(level)); err != nil {
		return err
	}
	if opts.LogLevel != LogSilent {
		if err := a.call("setting the session log level", fnSetSessionLogSeverityLevel, so, uintptr(opts.LogLevel.severity())); err != nil {
			return err
		}
	}
	if err := a.setMemory(so, opts); err != nil {
		return err
	}
	strategy, err := opts.ArenaExtendStrategy.ortName()
	if err != nil {
		return err
	}
	for _, p := range opts.Providers {
		if _, set := p.Options["arena_extend_strategy"]; p.cuda() && strategy != "" && !set {
			p.Options = maps.Clone(p.Options)
			if p.Options == nil {
				p.Options = map[string]string{}
			}
			p.Options["arena_extend_strategy"] = strategy
		}
		if err := a.appendProvider(so, p); err != nil {
			return err
		}
	}
	return nil
}

// setMemory applies the memory settings of opts (CPUArena, MemoryPattern).
func (a *ortAPI) setMemory(so uintptr, opts *SessionOptions) error {
	for _, set := range []struct {
		what    string
		v       Setting
		on, off fn
	}{
		{"the CPU memory arena", opts.CPUArena, fnEnableCpuMemArena, fnDisableCpuMemArena},
		{"the memory pattern", opts.MemoryPattern, fnEnableMemPattern, fnDisableMemPattern},
	} {
		f := set.on
		switch set.v {
		case Default:
			continue
		case Disabled:
			f = set.off
		case Enabled:
		default:
			return errs.Errorf(core.ErrArgument, "onnxx: Setting(%d) for %s is not Default, Enabled or Disabled", int(set.v), set.what)
		}
		if err := a.call("setting "+set.what, f, so); err != nil {
			return err
		}
	}
	return nil
}

// appendProvider adds one execution provider to the session options.
func (a *ortAPI) appendProvider(so uintptr, p Provider) error {
	keys, values := make([][]byte, 0, len(p.Options)), make([][]byte, 0, len(p.Options))
	for k, v := range p.Options {
		keys, values = append(keys, cstr(k)), append(values, cstr(v))
	}
	kp, vp := make([]uintptr, len(keys)+1), make([]uintptr, len(keys)+1)
	for i := range keys {
		kp[i], vp[i] = ptr(keys[i]), ptr(values[i])
	}
	var err error
	if p.cuda() {
		err = a.appendCUDA(so, kp, vp, len(keys))
	} else {
		name := cstr(p.Name)
		err = a.call("adding execution provider "+p.Name, fnSessionOptionsAppendProvider, so, ptr(name),
			uintptr(unsafe.Pointer(&kp[0])), uintptr(unsafe.Pointer(&vp[0])), uintptr(len(keys)))
	}
	runtime.KeepAlive(keys)
	runtime.KeepAlive(values)
	if err != nil {
		return errorf([]error{ErrProvider, err}, "onnxx: execution provider %q is not available: %s", p.Name, bare(err))
	}
	return nil
}

// appendCUDA adds the CUDA execution provider through its provider options (V2).
func (a *ortAPI) appendCUDA(so uintptr, kp, vp []uintptr, n int) error {
	var opts uintptr
	if err := a.call("creating CUDA provider options", fnCreateCUDAProviderOptions, uintptr(unsafe.Pointer(&opts))); err != nil {
		return err
	}
	defer a.do(fnReleaseCUDAProviderOptions, opts)
	if n > 0 {
		if err := a.call("setting CUDA provider options", fnUpdateCUDAProviderOptions, opts,
			uintptr(unsafe.Pointer(&kp[0])), uintptr(unsafe.Pointer(&vp[0])), uintptr(n)); err != nil {
			return err
		}
	}
	return a.call("adding the CUDA execution provider", fnAppendExecutionProviderCUDAV2, so, opts)
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
