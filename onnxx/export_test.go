package onnxx

import (
	"sync"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
)

// Traced is an output value ORT allocated, the tensor made over it, and how often it was released.
type Traced struct {
	Value    uintptr
	Tensor   *core.Tensor
	Released int
}

var traceMu sync.Mutex

// TraceOutputs records every output value wrapped from now on (tests run it before their runs;
// the hooks stay set for the rest of the process).
func TraceOutputs() func() []Traced {
	traceMu.Lock()
	defer traceMu.Unlock()
	var mu sync.Mutex
	var seen []Traced
	wrap := func(v uintptr, t ...*core.Tensor) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, Traced{Value: v, Tensor: t[0]})
	}
	release := func(v uintptr, _ ...*core.Tensor) {
		mu.Lock()
		defer mu.Unlock()
		for i := range seen {
			if seen[i].Value == v {
				seen[i].Released++
			}
		}
	}
	traceWrap.Store(&wrap)
	traceRelease.Store(&release)
	return func() []Traced {
		mu.Lock()
		defer mu.Unlock()
		return append([]Traced{}, seen...)
	}
}

// ValueData asks ORT for the data address of a live OrtValue (GetTensorMutableData).
func ValueData(v uintptr) (unsafe.Pointer, error) {
	a, err := loaded()
	if err != nil {
		return nil, err
	}
	var p uintptr
	if err := a.call("reading data", fnGetTensorMutableData, v, uintptr(unsafe.Pointer(&p))); err != nil {
		return nil, err
	}
	return cptr(p), nil
}

// OldestRuntimeVersion is the oldest ONNX Runtime release the tests run on.
const OldestRuntimeVersion = oldestRuntimeVersion
