package pyexchange

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "call.h"
#include "pyexchange.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime/debug"
	"sync/atomic"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// The C functions below are what dlpackgo.Library uses to list and call registered functions
// (see call.c for the builtin that does the Python half of a call).

// ErrArgument: an argument of a registered function is out of the range of its Go type; raised
// in Python as OverflowError before the function runs.
var ErrArgument = errors.New("pyexchange: argument out of range")

// reportAs writes kind and the message of err into the C buffer (see report).
func reportAs(kind byte, msg string, buf *C.char, n C.size_t) {
	if buf == nil || n < 2 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
	b[0] = kind
	m := copy(b[1:len(b)-1], msg)
	b[1+m] = 0
}

// dlpackgo_call_init attaches the Python C API table of call.h (dlpackgo_call_init after
// dlpackgo_init). It returns 0, or -1 if n is wrong or an address is missing.
//
//export dlpackgo_call_init
func dlpackgo_call_init(api *C.uintptr_t, n C.int) C.int { return C.pxg_call_attach(api, n) }

// dlpackgo_functions returns the registered functions as JSON (a C string the caller frees with
// dlpackgo_free): a list of {"name", "doc", "params": [{"name", "kind", "type"}], "results":
// [{"kind", "type"}]}, in the order of registration (a function's id is its index); [] when
// the library registered none.
//
//export dlpackgo_functions
func dlpackgo_functions() *C.char {
	registry.RLock()
	funcs := registry.funcs
	if funcs == nil {
		funcs = []*function{} // [], not null: a library that registers nothing
	}
	b, err := json.Marshal(funcs)
	registry.RUnlock()
	if err != nil {
		b = []byte("[]")
	}
	return C.CString(string(b))
}

// dlpackgo_free frees memory this package allocated with C's malloc.
//
//export dlpackgo_free
func dlpackgo_free(p unsafe.Pointer) { C.free(p) }

// dlpackgo_caller returns a new reference to the builtin that calls function id (see call.c), or
// None for an unknown id. The caller holds the GIL (ctypes.PYFUNCTYPE).
//
//export dlpackgo_caller
func dlpackgo_caller(id C.int) unsafe.Pointer {
	var c C.pxg_fn
	if !fnOf(id, &c) {
		return C.pxg_none()
	}
	return C.pxg_caller_new(&c)
}

// dlpackgo_function returns a new reference to the dlpackgo.GoFunction that calls function id
// (see call.c), pythonFn (the generated Python function) taking the calls C does not, or None for
// an unknown id; NULL with a Python exception set on failure. convert is None, or the Python
// callable that turns a tensor result C did not make a NumPy array of into the value to return:
// then C takes calls with tensor results too, and makes NumPy arrays of host results, which
// arrayConvert (None: returned as they are) turns into the value to return (torch.from_numpy;
// with it, call.c makes the host results it can torch tensors itself: dlpackgo_torch_init).
// The caller holds the GIL.
//
//export dlpackgo_function
func dlpackgo_function(id C.int, pythonFn, convert, arrayConvert unsafe.Pointer) unsafe.Pointer {
	var c C.pxg_fn
	if !fnOf(id, &c) {
		return C.pxg_none()
	}
	return C.pxg_function_new(&c, pythonFn, convert, arrayConvert)
}

// dlpackgo_torch_init hands call.c torch's own DLPack import (torch._C._from_dlpack), which
// then makes the host results of functions whose results go to torch (pxg_torch_init). The
// caller holds the GIL.
//
//export dlpackgo_torch_init
func dlpackgo_torch_init(fromDLPack unsafe.Pointer) C.int { return C.pxg_torch_init(fromDLPack) }

// fnOf fills c with function id as call.c knows it; false for an unknown id.
func fnOf(id C.int, c *C.pxg_fn) bool {
	f := lookupFunc(int(id))
	if f == nil {
		return false
	}
	c.id, c.nparams, c.nresults = C.int32_t(id), C.int32_t(len(f.Params)), C.int32_t(len(f.Results))
	for i, p := range f.Params {
		c.params[i] = C.uint8_t(p.kind)
		cstr(c.pnames[i][:], p.Name)
	}
	for i, r := range f.Results {
		c.results[i] = C.uint8_t(r.kind)
	}
	cstr(c.name[:], f.Name)
	return true
}

// cstr copies s into dst, truncated and NUL-terminated.
func cstr(dst []C.char, s string) {
	n := min(len(s), len(dst)-1)
	for i := range n {
		dst[i] = C.char(s[i])
	}
	dst[n] = 0
}

// dlpackgo_releaser returns a new reference to the builtin release(handle) (see call.c). The
// caller holds the GIL.
//
//export dlpackgo_releaser
func dlpackgo_releaser() unsafe.Pointer { return C.pxg_releaser_new() }

// dlpackgo_view registers a view of handle h's tensor under a new handle (0 for an unknown
// handle): what keeps the memory of an array NumPy made from Tensor.__array_interface__.
//
//export dlpackgo_view
func dlpackgo_view(h C.uintptr_t) C.uintptr_t {
	t, err := Lookup(Handle(h))
	if err != nil {
		return 0
	}
	nh, err := NewHandle(t)
	if err != nil {
		return 0
	}
	return C.uintptr_t(nh)
}

// dlpackgo_clone registers a C-order copy of handle h's tensor (flagged IS_COPIED) under a new
// handle: Library.from_dlpack(x, copy=True). It returns 0 after reporting the error.
//
//export dlpackgo_clone
func dlpackgo_clone(h C.uintptr_t, errbuf *C.char, errlen C.size_t) C.uintptr_t {
	t, err := Lookup(Handle(h))
	if err == nil {
		var c *core.Tensor
		if c, err = memory.Contiguous(t); err == nil {
			return C.uintptr_t(register(c))
		}
	}
	report(inContext(err, "copy"), errbuf, errlen)
	return 0
}

// dlpackgo_call calls registered function id with nargs arguments (call.h's pxg_value, kinds as
// registered; the tensors' managed tensors are Go's to own from now on) and stores its results
// in res: tensor results as exports (handles == 0) or handles (n = 1: with handles != 0, and for
// tensors on a device with a StreamSync, see store). It returns 0, or -1 after writing
// the error into errbuf: its first byte is the Python exception to raise ('A' TypeError, 'O'
// OverflowError, 'P' a panic, else an Exception of ExceptionFor). The caller does not hold the
// GIL.
//
//export dlpackgo_call
func dlpackgo_call(id C.int32_t, handles C.int, args *C.pxg_value, nargs C.int, res *C.pxg_value,
	nres C.int, errbuf *C.char, errlen C.size_t) C.int {
	in := unsafe.Slice(args, max(int(nargs), 0))
	out := unsafe.Slice(res, max(int(nres), 0))
	f := lookupFunc(int(id))
	if f == nil || len(f.Params) != len(in) || len(f.Results) != len(out) {
		// cannot happen: call.c's pxg_fn is a copy of the registry's, which never changes
		reportAs('A', fmt.Sprintf("dlpackgo: function %d does not take these arguments", id), errbuf, errlen)
		return -1
	}
	drainResults() // the light results Python let go of since the last call
	if err := f.call(in, out, handles != 0); err != nil {
		var p *panicError
		switch {
		case errors.As(err, &p):
			reportAs(panicked, err.Error(), errbuf, errlen)
		case errors.Is(err, ErrArgument):
			reportAs('O', err.Error(), errbuf, errlen)
		default:
			reportAs(byte(ExceptionFor(err)), err.Error(), errbuf, errlen)
		}
		return -1
	}
	return 0
}

// panicError is a panic of a registered function, recovered.
type panicError struct {
	fn    string
	value any
	stack []byte
}

func (e *panicError) Error() string {
	return fmt.Sprintf("%s: Go panic: %v\n\n%s", e.fn, e.value, e.stack)
}

// call imports the arguments, calls f with its tensors held, releases the imports and stores
// the results.
//
// The tensors are held for the whole call: a handle's tensor (the registry's, which another
// thread may release, and which f must not release) by a view of the call's own
// (Tensor.ExplicitView); an import by its own
// reference, which only the deferred Release below lets go, and whose memory, even if f releases
// the tensor itself, is let go by call.c only once the call has returned (argRelease).
func (f *function) call(in, out []C.pxg_value, handles bool) (err error) {
	var tbuf, ibuf [4]*core.Tensor
	var rbuf [4]*argRelease
	tensors := tbuf[:0]  // every tensor argument, in order
	imported := ibuf[:0] // the imports and the handles' views: ours to release
	releases := rbuf[:0] // how the imports' managed tensors are let go
	defer func() {
		for _, t := range imported {
			t.Release()
		}
		for _, r := range releases {
			r.callReturns()
		}
	}()
	// import every tensor first: each managed tensor is ours and must be let go even if another
	// argument is wrong
	for i := range f.Params {
		p := &f.Params[i]
		if p.kind != kindTensor {
			continue
		}
		var t *core.Tensor
		var ierr error
		if in[i].n == C.PXG_ARG_HANDLE {
			var ht *core.Tensor
			if ht, ierr = Lookup(Handle(in[i].u)); ierr == nil {
				// the call's own view: f releasing its argument, or another thread the
				// handle, does not change what the other sees
				if t, ierr = ht.ExplicitView(); ierr != nil {
					ierr = fmt.Errorf("pyexchange: handle %d: %w", uint64(in[i].u), ierr)
				} else {
					imported = append(imported, t)
				}
			}
		} else {
			// call.c's guard of a producer's managed tensor, or numpy.c's over a NumPy array:
			// released when the function returns (its own views hold the memory on)
			var r *argRelease
			if t, r, ierr = importArg(&in[i]); t != nil {
				imported = append(imported, t)
				releases = append(releases, r)
			}
		}
		if ierr != nil && err == nil {
			err = inContext(ierr, fmt.Sprintf("%s() argument %d, %s", f.Name, i+1, p.Name))
		}
		if t != nil {
			tensors = append(tensors, t)
		}
	}
	if err != nil {
		return err
	}
	var vals []reflect.Value // the arguments of a call through reflect
	var fl float64           // the float argument of a direct call
	if f.direct == nil {
		vals = make([]reflect.Value, len(in))
	}
	k := 0
	for i := range f.Params {
		p := &f.Params[i]
		if p.kind == kindTensor {
			if vals != nil {
				vals[i] = reflect.ValueOf(tensors[k])
			}
			k++
			continue
		}
		v, err := scalarArg(p, &in[i])
		if err != nil {
			return errs.Errorf(ErrArgument, "pyexchange: %s() argument %d (%s): %w", f.Name, i+1, p.Name, err)
		}
		if vals != nil {
			vals[i] = v
		} else if p.kind == kindFloat {
			fl = v.Float()
		}
	}
	var results []reflect.Value
	if f.direct != nil {
		var t *core.Tensor
		if t, err = f.invokeDirect(tensors, fl); err == nil && len(f.Results) == 1 {
			results = []reflect.Value{reflect.ValueOf(t)}
		}
	} else {
		results, err = f.invoke(vals)
	}
	if err != nil {
		return err
	}
	return f.store(results, out, handles)
}

// invokeDirect is invoke for functions with a direct caller.
func (f *function) invokeDirect(ts []*core.Tensor, fl float64) (t *core.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, &panicError{fn: f.Name, value: r, stack: debug.Stack()}
		}
	}()
	return f.direct(ts, fl)
}

// invoke calls f, recovering a panic as a *panicError.
func (f *function) invoke(vals []reflect.Value) (results []reflect.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{fn: f.Name, value: r, stack: debug.Stack()}
		}
	}()
	results = f.fn.Call(vals)
	if e := results[len(results)-1]; !e.IsNil() {
		return nil, e.Interface().(error)
	}
	return results[:len(results)-1], nil
}

// importArg imports tensor argument a of a call (a managed tensor: a.n = 0 legacy, else
// versioned) with the state of its release in the same allocation (core.ImportExplicitWith). The
// managed tensor is let go exactly once: on error, by call.c after the call (a.i = 1).
func importArg(a *C.pxg_value) (*core.Tensor, *argRelease, error) {
	legacy := a.n == 0
	dl, flags, err := managedDL(a.p, legacy)
	if err != nil {
		a.i = 1
		return nil, nil, err
	}
	r := argRelease{arg: a, managed: a.p, legacy: legacy}
	if a.n == C.PXG_ARG_NUMPY {
		// numpy.c's pxg_np_arg, on call.c's stack: only the array outlives the call
		r.managed, r.array = nil, (*C.pxg_managed_versioned)(a.p).manager_ctx
	}
	t, rp, err := core.ImportExplicitWith(dl, flags, r)
	if err != nil {
		a.i = 1 // the release ran during the call: call.c deletes
		return nil, nil, fmt.Errorf("pyexchange: import: %w", err)
	}
	return t, rp, nil
}

// argRelease lets go of the managed tensor of an imported argument. Released during the call (the
// common case: the function kept no view), it leaves the deleter to call.c, which runs it once
// the call has returned and the GIL is back, instead of entering C from Go for it; released
// later, from whatever goroutine lets go of the last view, it runs the deleter itself.
type argRelease struct {
	arg     *C.pxg_value   // call.c's, valid while the call runs
	managed unsafe.Pointer // the managed tensor (nil for a NumPy array read by numpy.c)
	array   unsafe.Pointer // the NumPy array numpy.c read, whose reference is let go
	legacy  bool           // a DLManagedTensor, not a DLManagedTensorVersioned
	state   int32          // argInCall, argDue, argAfter (atomic)
}

const (
	argInCall = iota // the call is running, the tensor not released yet
	argDue           // released during the call: call.c runs the deleter (arg.i = 1)
	argAfter         // the call returned with the tensor still held: release deletes
)

// Release is the tensor's release (core.Releaser): it runs once, on the last holder.
func (r *argRelease) Release() {
	if atomic.CompareAndSwapInt32(&r.state, argInCall, argDue) {
		return
	}
	if r.array != nil {
		C.pxg_numpy_drop(r.array)
	} else if r.legacy {
		cdlpack.DeleteLegacy((*core.DLManagedTensor)(r.managed))
	} else {
		cdlpack.DeleteVersioned((*core.DLManagedTensorVersioned)(r.managed))
	}
}

// callReturns ends the call for the argument: if it was released, call.c is told to delete it.
func (r *argRelease) callReturns() {
	if !atomic.CompareAndSwapInt32(&r.state, argInCall, argAfter) {
		r.arg.i = 1
	}
}

// scalarArg converts a number, bool or string argument to the parameter's Go type, refusing
// values out of its range.
func scalarArg(p *param, a *C.pxg_value) (reflect.Value, error) {
	v := reflect.New(p.typ).Elem()
	switch p.kind {
	case kindInt:
		x := int64(a.i)
		if v.OverflowInt(x) {
			return v, fmt.Errorf("%d does not fit in %v", x, p.typ)
		}
		v.SetInt(x)
	case kindUint:
		x := uint64(a.u)
		if v.OverflowUint(x) {
			return v, fmt.Errorf("%d does not fit in %v", x, p.typ)
		}
		v.SetUint(x)
	case kindFloat:
		x := float64(a.f)
		if p.typ.Kind() == reflect.Float32 && !math.IsInf(x, 0) && !math.IsNaN(x) && math.Abs(x) > math.MaxFloat32 {
			return v, fmt.Errorf("%g does not fit in %v", x, p.typ)
		}
		v.SetFloat(x)
	case kindBool:
		v.SetBool(a.i != 0)
	case kindString:
		v.SetString(C.GoStringN((*C.char)(a.p), C.int(a.n)))
	}
	return v, nil
}

// store writes the results into out: tensors exported (or registered, with handles or on a device
// with a StreamSync), numbers, strings in C memory. On failure it lets go of what it stored already.
func (f *function) store(results []reflect.Value, out []C.pxg_value, handles bool) error {
	for i, r := range results {
		o := &out[i]
		switch f.Results[i].kind {
		case kindTensor:
			t, _ := r.Interface().(*core.Tensor)
			if t == nil {
				dropResults(f, out[:i])
				return errs.Errorf(core.ErrNil, "pyexchange: %s() returned a nil *core.Tensor as result %d without an error",
					f.Name, i)
			}
			dev := t.Device()
			o.dev_type, o.dev_id = C.int32_t(dev.DeviceType), C.int32_t(dev.DeviceID)
			// a tensor on a device with a StreamSync goes by handle too: its dlpackgo.Tensor's
			// __dlpack__ synchronizes with each consumer's stream (dlpackgo_export), which a
			// share made once here could not
			if handles || streamSyncOf(dev.DeviceType) != nil {
				h, err := NewHandle(t)
				if err != nil {
					dropResults(f, out[:i])
					return inContext(err, fmt.Sprintf("%s() result %d", f.Name, i))
				}
				o.u, o.n = C.uint64_t(h), 1
			} else {
				var m *core.DLManagedTensorVersioned
				if lightResult(t) { // a small result of Go memory: no handle, no deleter into Go
					m = exportResult(t)
				}
				var err error
				if m == nil {
					m, err = ExportVersioned(t)
				}
				if err != nil {
					dropResults(f, out[:i])
					return inContext(err, fmt.Sprintf("%s() result %d", f.Name, i))
				}
				o.p, o.n = unsafe.Pointer(m), 0
			}
		case kindInt:
			o.i = C.int64_t(r.Int())
		case kindUint:
			o.u = C.uint64_t(r.Uint())
		case kindFloat:
			o.f = C.double(r.Float())
		case kindBool:
			if r.Bool() {
				o.i = 1
			}
		case kindString:
			s := r.String()
			o.p, o.n = C.CBytes([]byte(s)), C.int64_t(len(s))
		}
	}
	return nil
}

// dropResults lets go of results stored before a failure.
func dropResults(f *function, out []C.pxg_value) {
	for i := range out {
		o := &out[i]
		switch f.Results[i].kind {
		case kindTensor:
			if o.n == 1 { // a handle (see store)
				_ = Release(Handle(o.u))
			} else if o.p != nil {
				cdlpack.DeleteVersioned((*core.DLManagedTensorVersioned)(o.p))
			}
		case kindString:
			C.free(o.p)
		}
		o.p = nil
	}
}
