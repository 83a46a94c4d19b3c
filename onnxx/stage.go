package onnxx

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/ccall"
)

// bindings are the ORT values a Session made over the caller's tensors, kept for the next run,
// the output buffers it lends out (leases, per output), and the scratch of the run that holds mu
// (one at a time; a run that finds mu taken makes its own stage and keeps nothing).
type bindings struct {
	mu      sync.Mutex
	in, out []slot
	leases  [][]lease    // per output, by value: a run reads each in place
	lends   []bool       // the output takes leases (see takesLeases)
	allLent atomic.Int32 // runs left that skip the leases: see lend
	// checked: the slots are apart (see apart), found so by a settled run (checkRun); reset
	// whenever a slot changes.
	checked bool
	// settledRuns counts the settled runs (see runStaged), for the tests.
	settledRuns int
	// bound[i] is the value the session's I/O binding (handle.io) holds for input i (the first
	// len(in)) or output i (after them); 0: none, or one that may be gone. unbind clears them
	// whenever a kept value is released, so that a new value ORT makes at a released one's
	// address is never taken for it.
	bound []uintptr
	api   *ortAPI
	st    stage
	room  bindRoom
}

// fewIO is the most inputs, and the most outputs, whose arrays a session keeps inside its
// bindings and stage (bindRoom, stageRoom) rather than in slices allocated apart: ORT's run
// evicts the Go side's data from the first-level cache, and each allocation of its own is one
// more cache line for the next run to fetch.
const fewIO = 4

// bindRoom is where the bindings of up to fewIO inputs and outputs keep their arrays: the slots
// of the inputs and then of the outputs in one array, so that a model's first input and output
// slots are neighbours.
type bindRoom struct {
	slots  [2 * fewIO]slot
	bound  [2 * fewIO]uintptr
	leases [fewIO][]lease
	lends  [fewIO]bool
}

func newBindings(a *ortAPI, nin int, outputs []IOInfo, prealloc []bool) *bindings {
	nout := len(outputs)
	b := &bindings{api: a}
	if r := &b.room; nin <= fewIO && nout <= fewIO {
		b.in, b.out = r.slots[:nin:nin], r.slots[nin:nin+nout:nin+nout]
		b.leases, b.lends, b.bound = r.leases[:nout:nout], r.lends[:nout:nout], r.bound[:nin+nout:nin+nout]
	} else {
		b.in, b.out = make([]slot, nin), make([]slot, nout)
		b.leases, b.lends, b.bound = make([][]lease, nout), make([]bool, nout), make([]uintptr, nin+nout)
	}
	for i := range outputs {
		b.lends[i] = prealloc[i] && takesLeases(&outputs[i])
	}
	b.st.init(nin, nout)
	return b
}

// drop releases every kept value, the leases' among them.
func (b *bindings) drop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.in {
		b.in[i].drop()
	}
	for i := range b.out {
		b.out[i].drop()
	}
	b.checked = false
	b.dropLeases()
	b.unbind()
}

// apart reports whether no slot's tensor shares memory that a run may write with another's or
// with a lease block: no input's with a destination's or a lease's, no destination's with
// another's or a lease's (inputs may share memory: ORT only reads them).
func (b *bindings) apart() bool {
	for i := range b.out {
		d := b.out[i].t
		if d == nil {
			continue
		}
		for k := range b.in {
			if x := b.in[k].t; x != nil && core.MayShareMemory(d, x) {
				return false
			}
		}
		for k := i + 1; k < len(b.out); k++ {
			if x := b.out[k].t; x != nil && core.MayShareMemory(d, x) {
				return false
			}
		}
	}
	for _, ls := range b.leases {
		for _, l := range ls {
			for _, set := range [][]slot{b.in, b.out} {
				for k := range set {
					if t := set[k].t; t != nil && l.overlaps(t) {
						return false
					}
				}
			}
		}
	}
	return true
}

// unbind forgets what the I/O binding holds: every value is bound again before the next settled run.
func (b *bindings) unbind() { clear(b.bound) }

// slot is one kept value, over t's memory in t's shape. A tensor's memory, shape and element
// type never change, and the slot keeps t reachable, so t's address stands for all of them. The
// value does not hold t's memory: every run holds the tensors it is given (core.Hold).
type slot struct {
	t *core.Tensor
	v uintptr
	// kept: a settled run may use the value (see "One run engine"): t was bound as it is, is in
	// host memory and, for an input, is not a [1] tensor fed for a declared scalar (loose), whose
	// outputs ORT allocates.
	kept bool
	pin  *runtime.Pinner
	api  *ortAPI
}

// matches reports whether the slot's value is over t, which is not released.
func (sl *slot) matches(t *core.Tensor) bool { return sl.t == t && sl.v != 0 && !t.Released() }

// keeps reports whether a settled run may use the slot's value for t, which the run holds.
func (sl *slot) keeps(t *core.Tensor) bool { return sl.t == t && sl.kept }

// setSlot replaces the value of sl, one of b's slots, with v, made over t, and forgets that the
// slots' tensors passed the overlap check (checked). kept is the slot's kept.
func (b *bindings) setSlot(sl *slot, t *core.Tensor, v uintptr, kept bool) {
	sl.set(b.api, t, v, kept)
	b.checked = false
	b.unbind()
}

// set replaces the slot's value with v, made over t.
func (sl *slot) set(a *ortAPI, t *core.Tensor, v uintptr, kept bool) {
	sl.drop()
	pin := new(runtime.Pinner)
	if t.Data() != nil {
		pin.Pin(t.Data()) // a no-op for memory Go did not allocate
	}
	*sl = slot{t: t, v: v, kept: kept, pin: pin, api: a}
}

func (sl *slot) drop() {
	if sl.v != 0 {
		sl.api.do(fnReleaseValue, sl.v)
	}
	if sl.pin != nil {
		sl.pin.Unpin()
	}
	*sl = slot{}
}

// stage is the scratch of one run: the value arrays ORT reads and fills, the tensor each input
// value reads, and the values made for this run only.
type stage struct {
	cached     bool      // the run holds bindings.mu: it may use and replace the slots
	settled    bool      // every value so far is a kept slot's or a lease's (see "One run engine")
	runOpts    uintptr   // the run's OrtRunOptions* (0: none)
	inVals     []uintptr // OrtValue* of each input (one spare entry: never empty)
	outVals    []uintptr // OrtValue* of each output; 0: ORT allocates it
	ours       []bool    // outVals[i] is a value over a tensor of ours or the caller's
	lent       []bool    // outVals[i] is a lease's value (see lend)
	srcs       []*core.Tensor
	dsts       []*core.Tensor // destinations of echo outputs, written after the run (see collect)
	temps      []uintptr      // values to release after the run
	keepAlive  []*core.Tensor
	pin        runtime.Pinner
	copied     bool  // some input was copied
	loose      bool  // some input is a [1] tensor for a declared scalar: ORT allocates the outputs
	dynamicDst bool  // some destination is for an output of dynamic shape
	device     int32 // the CUDA device of device tensors, -1 if none
	room       stageRoom

	shape [core.MaxNdim]int64 // scratch of the C calls: the shape of a new value, and the value
	val   uintptr
	out   outScratch // what ORT says of an output it allocated
}

// outScratch is where describeValue's C calls write: an output's element type, the address and
// length of its shape (ORT's own array) and its data address.
type outScratch struct {
	et              int32
	shape, nd, data uintptr
}

// stageRoom is where a stage of up to fewIO inputs and outputs keeps its arrays.
type stageRoom struct {
	inVals, outVals [fewIO + 1]uintptr
	srcs, dsts      [fewIO]*core.Tensor
	ours, lent      [fewIO]bool
}

func (st *stage) init(nin, nout int) {
	if r := &st.room; nin <= fewIO && nout <= fewIO {
		st.inVals, st.outVals = r.inVals[:nin+1:nin+1], r.outVals[:nout+1:nout+1]
		st.srcs, st.dsts = r.srcs[:nin:nin], r.dsts[:nout:nout]
		st.ours, st.lent = r.ours[:nout:nout], r.lent[:nout:nout]
	} else {
		st.inVals, st.outVals = make([]uintptr, nin+1), make([]uintptr, nout+1)
		st.srcs, st.dsts = make([]*core.Tensor, nin), make([]*core.Tensor, nout)
		st.ours, st.lent = make([]bool, nout), make([]bool, nout)
	}
	st.device = -1
}

// stage returns the scratch of a run: the session's own if no other run uses it.
func (s *Session) stage() *stage {
	if s.b.mu.TryLock() {
		s.b.st.cached = true
		return &s.b.st
	}
	st := new(stage)
	st.init(len(s.inputs), len(s.outputs))
	return st
}

// unstage releases what the run made for itself and hands the session's scratch back. A settled
// run made nothing for itself and staged only its values.
func (s *Session) unstage(st *stage) {
	if st.settled {
		st.clearArrays()
		st.cached = false
		s.b.mu.Unlock()
		return
	}
	for _, v := range st.temps {
		st.release(s.api, v)
	}
	st.pin.Unpin()
	clear(st.temps)
	clear(st.keepAlive)
	clear(st.dsts)
	st.temps, st.keepAlive = st.temps[:0], st.keepAlive[:0]
	st.copied, st.loose, st.device = false, false, -1
	st.clearValues(s.api)
	if st.cached {
		st.cached = false
		s.b.mu.Unlock()
	}
}

// clearValues clears what a run stages: the inputs' tensors, and what clearArrays clears once the
// outputs ORT allocated that no tensor took are released.
func (st *stage) clearValues(a *ortAPI) {
	clear(st.srcs)
	st.dropForeign(a, len(st.ours))
	st.dynamicDst = false
	st.clearArrays()
}

// clearArrays clears what every run stages, and all a settled run does: the value arrays, the
// outputs' flags and the run options.
func (st *stage) clearArrays() {
	clear(st.inVals)
	clear(st.outVals)
	clear(st.ours)
	clear(st.lent)
	st.runOpts, st.settled = 0, false
}

// keep records a value made for this run over t's memory: pinned, released after the run.
func (st *stage) keep(v uintptr, t *core.Tensor) {
	st.temps = append(st.temps, v)
	st.keepAlive = append(st.keepAlive, t)
	if t.Data() != nil {
		st.pin.Pin(t.Data())
	}
}

// dropForeign releases output values ORT allocated that nobody took (after a failure).
func (st *stage) dropForeign(a *ortAPI, n int) {
	for i := range n {
		if !st.ours[i] && st.outVals[i] != 0 {
			st.release(a, st.outVals[i])
		}
		st.outVals[i] = 0
	}
}

// noteDevice checks that the session can take t's memory, and records the CUDA device of device
// tensors (one device per run).
func (st *stage) noteDevice(s *Session, kind, name string, t *core.Tensor) error {
	if t.HostAccessible() {
		return nil
	}
	dev := t.Device()
	switch {
	case dev.DeviceType != core.CUDA:
		return unsupportedDevice(kind, name, "%s is in %s memory; ORT is given CPU memory, and CUDA memory with the CUDA execution provider", t, dev)
	case !s.cuda:
		return unsupportedDevice(kind, name, "%s is in CUDA memory, and the session has no CUDA execution provider (SessionOptions.Providers)", t)
	case st.device >= 0 && st.device != dev.DeviceID:
		return unsupportedDevice(kind, name, "%s is on CUDA device %d, other tensors of this run on device %d", t, dev.DeviceID, st.device)
	}
	st.device = dev.DeviceID
	return nil
}

// memInfo describes where t's memory is, for ORT.
func (a *ortAPI) memInfo(t *core.Tensor) uintptr {
	if t.HostAccessible() {
		return a.cpuInfo
	}
	info, err := a.cudaInfo(t.Device().DeviceID)
	if err != nil {
		return a.cpuInfo // unreachable in practice: cudaInfo fails only if ORT cannot make memory info
	}
	return info
}

var (
	cudaInfoMu sync.Mutex
	cudaInfos  = map[int32]uintptr{}
)

// cudaInfo is the OrtMemoryInfo of CUDA device dev, made once per process.
func (a *ortAPI) cudaInfo(dev int32) (uintptr, error) {
	cudaInfoMu.Lock()
	defer cudaInfoMu.Unlock()
	if info, ok := cudaInfos[dev]; ok {
		return info, nil
	}
	name := cstr(cudaName)
	var info uintptr
	if err := a.call("making CUDA memory info", fnCreateMemoryInfo, ptr(name), ortDeviceAllocator, uintptr(dev),
		ortMemTypeDefault, uintptr(unsafe.Pointer(&info))); err != nil {
		return 0, err
	}
	cudaInfos[dev] = info
	return info, nil
}

// invokeBound runs the model through an I/O binding: inputs and destinations bound as values
// (device memory included), other outputs allocated by ORT on the run's CUDA device, and read
// back as values over that device memory.
func (s *Session) invokeBound(st *stage) error {
	a := s.api
	info, err := a.cudaInfo(st.device)
	if err != nil {
		return err
	}
	var b uintptr
	if err := a.call("creating an I/O binding", fnCreateIoBinding, s.h.session, uintptr(unsafe.Pointer(&b))); err != nil {
		return err
	}
	defer a.do(fnReleaseIoBinding, b)
	for i := range s.inputs {
		if err := a.call("binding input "+s.inputs[i].Name, fnBindInput, b, s.inNames[i], st.inVals[i]); err != nil {
			return err
		}
	}
	for i := range s.outputs {
		if st.ours[i] {
			err = a.call("binding output "+s.outputs[i].Name, fnBindOutput, b, s.outNames[i], st.outVals[i])
		} else {
			err = a.call("binding output "+s.outputs[i].Name+" to the device", fnBindOutputToDevice, b, s.outNames[i], info)
		}
		if err != nil {
			return err
		}
	}
	if err := a.call("running the model with I/O binding", fnRunWithBinding, s.h.session, st.runOpts, b); err != nil {
		return err
	}
	var arr, n uintptr
	if err := a.call("reading bound outputs", fnGetBoundOutputValues, b, a.allocator, uintptr(unsafe.Pointer(&arr)),
		uintptr(unsafe.Pointer(&n))); err != nil {
		return err
	}
	vals := unsafe.Slice((*uintptr)(cptr(arr)), n)
	for i, v := range vals {
		if i < len(s.outputs) && !st.ours[i] {
			st.outVals[i] = v
		} else {
			a.do(fnReleaseValue, v) // a new reference to a value of ours
		}
	}
	a.do(fnAllocatorFree, a.allocator, arr)
	return nil
}

// release releases an OrtValue (no allocation).
func (st *stage) release(a *ortAPI, v uintptr) { ccall.Call1(a.f(fnReleaseValue), v) }
