package main

import (
	"errors"
	"sync"
	"time"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/pyexchange"
)

// The registered functions of test_functions.py's Review tests: functions that misuse or keep
// their arguments in every way the call path has to survive.

func init() {
	for _, r := range []struct {
		name string
		fn   any
		doc  string
	}{
		{"keep_raw", keepRaw, "keep_raw(x)\n\nStores x itself (no view, no hold) beyond the call."},
		{"raw_state", rawState, "raw_state()\n\nWhat core.Hold says of the tensor keep_raw stored: 'live' or the error."},
		{"keep_views", keepViews, "keep_views(x)\n\nKeeps a Slice (every other element of axis 0) and a Transpose of x beyond the call."},
		{"kept_total", keptTotal, "kept_total()\n\nThe sum of the elements of every view keep and keep_views kept."},
		{"pair", pair, "pair(a, b)\n\nThe element counts of a and b added (two tensor arguments)."},
		{"keep_pair", keepPair, "keep_pair(a, b)\n\nKeeps views of a and b beyond the call."},
		{"release_arg", releaseArg, "release_arg(x)\n\nReleases x during the call, then returns its element count."},
		{"keep_async", keepAsync, "keep_async(x, ms)\n\nKeeps a view of x that a goroutine releases ms milliseconds later."},
		{"async_done", asyncDone, "async_done()\n\nWaits for the goroutines of keep_async; returns how many ran."},
		{"keep_many", keepMany, "keep_many(x, n)\n\nKeeps n views of x beyond the call (released by drop_kept)."},
		{"forget_kept", forgetKept, "forget_kept()\n\nDrops the views keep kept without releasing them (the collector's cleanups do)."},
		{"released_result", releasedResult, "released_result(x)\n\nReturns a view of x that it released already."},
		{"tensor_and_float", func(x *core.Tensor, f float64, y *core.Tensor) error { return nil },
			"tensor_and_float(x, f, y)\n\nTwo tensors around a float (conversion in the middle)."},
		{"string_and_float", func(s string, f float64) error { return nil },
			"string_and_float(s, f)\n\nA string, then a float (a conversion failing after a string)."},
		{"shadowing", func(x *core.Tensor, n int, l int) (*core.Tensor, int, int, error) { return x, n, l, nil },
			"shadowing(_lib, _handles, _legacy)\n\nReturns its arguments: parameters named as the generated Python function's own names."},
	} {
		pyexchange.MustRegister(r.name, r.fn, r.doc)
	}
}

var raw *core.Tensor

func keepRaw(x *core.Tensor) error {
	keptMu.Lock()
	raw = x
	keptMu.Unlock()
	return nil
}

func rawState() (string, error) {
	keptMu.Lock()
	raw := raw
	keptMu.Unlock()
	if raw == nil {
		return "none", nil
	}
	h, err := core.Hold(raw)
	if err != nil {
		if errors.Is(err, core.ErrReleased) {
			return "released", nil
		}
		return err.Error(), nil
	}
	h.Release()
	return "live", nil
}

func keepViews(x *core.Tensor) error {
	if x.Ndim() == 0 {
		return keep(x)
	}
	s, err := x.Slice(0, 0, x.Dim(0), 2)
	if err != nil {
		return err
	}
	tr, err := x.Transpose()
	if err != nil {
		s.Release()
		return err
	}
	keptMu.Lock()
	kept = append(kept, s, tr)
	keptMu.Unlock()
	return nil
}

func keptTotal() (float64, error) {
	keptMu.Lock()
	defer keptMu.Unlock()
	sum := 0.0
	for _, v := range kept {
		c, err := asFloat64("kept_total", v)
		if err != nil {
			return 0, err
		}
		e, err := core.ReadOnlyElements[float64](c)
		if err != nil {
			return 0, err
		}
		for _, x := range e {
			sum += x
		}
		c.Release()
	}
	return sum, nil
}

func pair(a, b *core.Tensor) (int64, error) { return a.Len() + b.Len(), nil }

func keepPair(a, b *core.Tensor) error {
	if err := keep(a); err != nil {
		return err
	}
	return keep(b)
}

func releaseArg(x *core.Tensor) (int64, error) {
	n := x.Len()
	x.Release()
	x.Release()
	return n, nil
}

var (
	asyncWG   sync.WaitGroup
	asyncRuns int64
	asyncMu   sync.Mutex
)

func keepAsync(x *core.Tensor, ms int) error {
	v, err := x.View()
	if err != nil {
		return err
	}
	asyncWG.Add(1)
	go func() {
		defer asyncWG.Done()
		time.Sleep(time.Duration(ms) * time.Millisecond)
		v.Release()
		asyncMu.Lock()
		asyncRuns++
		asyncMu.Unlock()
	}()
	return nil
}

func asyncDone() (int64, error) {
	asyncWG.Wait()
	asyncMu.Lock()
	defer asyncMu.Unlock()
	n := asyncRuns
	asyncRuns = 0
	return n, nil
}

func keepMany(x *core.Tensor, n int) error {
	for range n {
		if err := keep(x); err != nil {
			return err
		}
	}
	return nil
}

func forgetKept() (int, error) {
	keptMu.Lock()
	defer keptMu.Unlock()
	n := len(kept)
	kept = nil
	return n, nil
}

func releasedResult(x *core.Tensor) (*core.Tensor, error) {
	v, err := x.View()
	if err != nil {
		return nil, err
	}
	v.Release()
	return v, nil
}
