package onnxx

import (
	"context"
	"errors"
	"runtime"
	"sort"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// RunOptions are the settings of one run (ORT's OrtRunOptions), for RunContext and
// RunIntoContext. The zero value (or nil) is ORT's defaults.
type RunOptions struct {
	// Tag names the run in ORT's log lines.
	Tag string
	// LogLevel is what ORT logs for this run; LogSilent, the zero value, leaves the session's.
	LogLevel LogLevel
	// Config are run configuration entries (OrtApi AddRunConfigEntry), such as
	// "memory.enable_memory_arena_shrinkage": "cpu:0", which gives the CPU arena's unused memory
	// back to the system at the end of the run. ORT refuses keys it does not know only where it
	// reads them.
	Config map[string]string
	// Profile, when not empty, has ORT profile this run (RunOptionsEnableProfiling): at its end ORT
	// writes the run's trace, a JSON array of Chrome trace events, one per operator and step, to a
	// file whose name is Profile followed by a timestamp and ".json" (Profile may hold a
	// directory). It needs a library of C API version 25 (ONNX Runtime 1.25) or later; on an older
	// one the run fails with ErrNoRuntime before anything runs.
	Profile string
}

// RunContext is Run with a context and per-run options (ro may be nil): when ctx is cancelled or
// its deadline passes during the run, ORT is told to stop (RunOptionsSetTerminate, which it
// checks between operators) and the run fails with an error that wraps ctx.Err()
// (context.Canceled or context.DeadlineExceeded) and ErrRuntime. A ctx already done fails before
// anything runs. A run that ends before ORT sees the flag returns its results.
//
// Cancellation is not preemption: ORT checks the flag only between operators, so the run returns
// once the operator running when ctx is done has finished. A deadline bounds a run to its
// duration plus that of the model's longest operator (a 10 ms deadline on a model of a few large
// operators of about 100 ms each returns after 100 ms or more), not to the deadline itself.
func (s *Session) RunContext(ctx context.Context, inputs map[string]*core.Tensor, ro *RunOptions, opts ...adapters.Option) (map[string]*core.Tensor, error) {
	var res map[string]*core.Tensor
	err := s.withRunOptions(ctx, ro, func(h uintptr) error {
		var err error
		res, err = s.runWith(inputs, nil, h, opts)
		return err
	})
	return res, err
}

// RunIntoContext is RunInto with a context and per-run options (see RunContext).
func (s *Session) RunIntoContext(ctx context.Context, inputs, outputs []*core.Tensor, ro *RunOptions, opts ...adapters.Option) error {
	return s.withRunOptions(ctx, ro, func(h uintptr) error { return s.runInto(inputs, outputs, h, opts) })
}

// withRunOptions makes ORT run options of ro, has ctx set their terminate flag when it is done,
// calls run with them and releases them once nothing can set the flag any more.
func (s *Session) withRunOptions(ctx context.Context, ro *RunOptions, run func(h uintptr) error) error {
	if err := ctx.Err(); err != nil {
		return wrapf(err, "the run did not start")
	}
	a := s.api
	h, err := a.runOptions(ro)
	if err != nil {
		return err
	}
	defer a.do(fnReleaseRunOptions, h)
	flagged := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(flagged)
		a.do(fnRunOptionsSetTerminate, h)
	})
	err = run(h)
	if !stop() { // the flag is being set, or was: wait, so that h outlives the call
		<-flagged
	}
	if err != nil && ctx.Err() != nil {
		var re *RuntimeError
		if errors.As(err, &re) {
			return errs.Errorf(re, "onnxx: the run stopped: %w (ORT: %s)", ctx.Err(), re.Message)
		}
	}
	return err
}

// runOptions makes an OrtRunOptions of ro; the caller releases it.
func (a *ortAPI) runOptions(ro *RunOptions) (uintptr, error) {
	var h uintptr
	if err := a.call("creating run options", fnCreateRunOptions, uintptr(unsafe.Pointer(&h))); err != nil {
		return 0, err
	}
	if ro == nil {
		return h, nil
	}
	err := func() error {
		if ro.Tag != "" {
			tag := cstr(ro.Tag)
			err := a.call("setting the run tag", fnRunOptionsSetRunTag, h, ptr(tag))
			runtime.KeepAlive(tag)
			if err != nil {
				return err
			}
		}
		if ro.LogLevel != LogSilent {
			if err := a.call("setting the run log level", fnRunOptionsSetRunLogSeverityLevel, h, uintptr(ro.LogLevel.severity())); err != nil {
				return err
			}
		}
		if ro.Profile != "" {
			if a.api < apiProfiling {
				return errs.Errorf(ErrNoRuntime, "onnxx: RunOptions.Profile needs C API version %d (ONNX Runtime 1.%d or later); %s is ONNX Runtime %s (C API %d)",
					apiProfiling, apiProfiling, a.path, a.version, a.api)
			}
			prefix := cstr(ro.Profile)
			err := a.call("enabling the run's profiling", fnRunOptionsEnableProfiling, h, ptr(prefix))
			runtime.KeepAlive(prefix)
			if err != nil {
				return err
			}
		}
		keys := make([]string, 0, len(ro.Config))
		for k := range ro.Config {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			kb, vb := cstr(k), cstr(ro.Config[k])
			err := a.call("adding run config entry "+k, fnAddRunConfigEntry, h, ptr(kb), ptr(vb))
			runtime.KeepAlive(kb)
			runtime.KeepAlive(vb)
			if err != nil {
				return errorf([]error{core.ErrArgument, err}, "onnxx: run option %q = %q: %s", k, ro.Config[k], bare(err))
			}
		}
		return nil
	}()
	if err != nil {
		a.do(fnReleaseRunOptions, h)
		return 0, err
	}
	return h, nil
}
