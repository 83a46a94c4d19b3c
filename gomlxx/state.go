package gomlxx

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gomlxx/internal/errs"
)

// state is what a GoMLX tensor is at one moment, read under the tensor's own lock. GoMLX v0.28
// offers that lock only around its data-access callbacks (ConstFlatData, MutableFlatData): its
// state accessors (Ok, Shape, IsShared, HasLocal, Backend) read the tensor's fields without it,
// so reading them while another goroutine finalizes the tensor is a data race, and can see a
// tensor half finalized (its shape already gone while it still looks valid). withState reads them
// inside ConstFlatData, where FinalizeAll cannot run.
type state struct {
	dtype   dtypes.DType
	dims    []int           // a copy of the dimensions
	shared  bool            // the data is a shared backend buffer (IsShared)
	local   bool            // the tensor has local storage (HasLocal)
	backend compute.Backend // the backend of its on-device buffer, nil when it has none
	device  compute.DeviceNum
	flat    any // the flat data ConstFlatData gave: valid while the lock is held
}

// withState calls fn with t's state while GoMLX holds t's lock (fn must not call t's methods
// that lock it: FinalizeAll, ConstFlatData, MutableFlatData, InvalidateOnDevice, DonateBuffer).
// A nil tensor is refused with core.ErrNil, a finalized one with core.ErrReleased, whatever
// goroutine finalized it when, and any other error GoMLX reports wraps ErrGoMLX. Reading the data
// is GoMLX's ConstFlatData: on a backend without shared buffers (XLA on a GPU), a tensor whose
// data is only on the device is copied to local storage by GoMLX first, as any read of it is.
func withState(t *tensors.Tensor, fn func(st *state) error) error {
	if t == nil {
		return errs.Errorf(core.ErrNil, "gomlxx: nil *tensors.Tensor")
	}
	called := false
	var ferr error
	err := t.ConstFlatData(func(flat any) {
		called = true
		st := state{dtype: t.DType(), dims: slices.Clone(t.Shape().Dimensions), shared: t.IsShared(),
			local: t.HasLocal(), flat: flat}
		if b, err := t.Backend(); err == nil {
			st.backend = b
			st.device, _ = t.Device()
		}
		ferr = fn(&st)
	})
	if !called {
		return gomlxErr(err)
	}
	return ferr
}

// finalizedMsgs are the messages of GoMLX v0.28's validity check (Tensor.CheckValid) for a
// tensor that was finalized: by FinalizeAll (its shape is gone), or by giving up its last
// storage (DonateBuffer, FinalizeLocal).
var finalizedMsgs = []string{"Tensor shape is invalid", "Tensor has no local or on-device representation"}

// gomlxErr is the error for a GoMLX call on t that failed: core.ErrReleased when GoMLX found t
// finalized, else ErrGoMLX with GoMLX's message.
func gomlxErr(err error) error {
	if err == nil {
		return nil
	}
	for _, m := range finalizedMsgs {
		if strings.Contains(err.Error(), m) {
			return errs.Errorf(core.ErrReleased, "gomlxx: the GoMLX tensor was finalized (FinalizeAll, or donated)")
		}
	}
	return errs.Errorf(ErrGoMLX, "gomlxx: %v", err)
}

// dtypeOf returns the DLPack type of the tensor's elements, refusing a dtype GoMLX cannot hold
// on the host.
func (st *state) dtypeOf() (core.DLDataType, error) {
	dt, err := FromDType(st.dtype)
	if err != nil {
		return dt, err
	}
	if !storable(st.dtype) {
		return dt, errs.Errorf(adapters.ErrUnsupported, "gomlxx: GoMLX v0.28 has no host storage for dtype %s", st.dtype)
	}
	return dt, nil
}

// whyNotLocal says why the data is not in local storage, or "" when it is.
func (st *state) whyNotLocal() string {
	switch {
	case st.shared:
		return fmt.Sprintf("gomlxx: the tensor's data is a shared buffer of backend %s, which the backend reuses or "+
			"frees when the tensor is finalized or donated (Take moves the pure-Go backend's buffers without a copy)",
			st.backendName())
	case !st.local:
		return fmt.Sprintf("gomlxx: the tensor's data is a buffer of backend %s, which the backend reuses or frees "+
			"when the tensor is finalized or donated (Take moves the pure-Go backend's buffers without a copy)",
			st.backendName())
	}
	return ""
}

func (st *state) backendName() string {
	if st.backend != nil {
		return fmt.Sprintf("%q", st.backend.Name())
	}
	return "(none)"
}

// goBuffer reports whether the data is a buffer of the pure-Go backend: a Go slice, which stays
// valid while referenced whatever happens to the buffer pool or the backend itself.
func (st *state) goBuffer() bool {
	return isGoBackend(st.backend)
}

// goBackendPkg is where the pure-Go backend's type lives (github.com/gomlx/compute/gobackend is a
// thin wrapper that does not export it).
const goBackendPkg = "github.com/gomlx/compute/internal/gobackend"

// isGoBackend reports whether b is an instance of the pure-Go backend (gobackend.New or
// gobackend.GetBackend), whose buffers are Go slices.
func isGoBackend(b compute.Backend) bool {
	if b == nil {
		return false
	}
	rt := reflect.TypeOf(b)
	return rt.Kind() == reflect.Pointer && rt.Elem().PkgPath() == goBackendPkg && rt.Elem().Name() == "Backend"
}

// sharesHost reports whether the data is a buffer of a backend whose buffers are host memory.
func (st *state) sharesHost() bool { return st.backend != nil && st.backend.HasSharedBuffers() }
