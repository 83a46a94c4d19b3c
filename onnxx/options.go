package onnxx

import (
	"maps"
	"runtime"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// The configuration of a session: SessionOptions and what it holds (providers, the arena, graph
// optimization), and how it becomes ORT's session options.

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
