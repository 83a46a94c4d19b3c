package onnxx

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/ccall"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// CastInputs is the option that lets a run convert an input whose element type is not the
// model's (a float64 Gonum matrix for a float32 model) with memory.Cast: a copy, reported by
// adapters.ReportCopy and refused by adapters.ZeroCopyOnly. Without it an input whose cast can
// change values fails with ErrDType (and adapters.ErrCast); one whose cast keeps every value
// (adapters.Preserves: float32 for a float64 model) is cast anyway. It is adapters.AllowCast.
func CastInputs() adapters.Option { return adapters.AllowCast() }

// Shareable reports whether ORT can read t in place (ok), or says what prevents it: t must be in C
// order, of an element type ONNX Runtime has (see ToDType), in CPU memory (or CUDA memory, for a
// session with the CUDA execution provider). Inputs that are not shareable are copied into C
// order, as the adapters options allow; destinations must be shareable.
func Shareable(t *core.Tensor) (ok bool, why string) {
	switch {
	case t == nil:
		return false, "onnxx: nil tensor"
	case !t.HostAccessible() && t.Device().DeviceType != core.CUDA:
		return false, fmt.Sprintf("onnxx: %s is in %s memory, which ORT is not given here", t, t.Device())
	case !t.IsContiguous():
		return false, fmt.Sprintf("onnxx: ORT needs C-order elements, %s has strides %v", t, t.Strides())
	}
	if _, err := ToDType(t.DType()); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// Run runs the model on inputs (one tensor per input name) and returns every output by name.
// Outputs whose shape the model fixes are core tensors in Go memory that ORT wrote into: blocks
// the session lends out, which serve a later run once the output is released (see the package
// documentation, Ownership), or allocated for this run; the others (dynamic shapes) are tensors
// over the memory ORT allocated, with no copy: each owns its ORT value and releases it exactly
// once, on its last Release or when collected (core.Wrap). Release the outputs when done with
// them; the next runs then allocate nothing for them. A lent output handed to another library
// (gonumx.ToDense: core.Attach) is never lent again; one over ORT's buffer is held by the
// library's value, not by views derived from it (see the package documentation, Ownership).
// An output that is one of the inputs comes back as a copy of it. opts are the adapters options:
// adapters.ZeroCopyOnly refuses inputs that are not in C order, adapters.ReportCopy says whether
// some input was copied, CastInputs converts inputs of another element type.
func (s *Session) Run(inputs map[string]*core.Tensor, opts ...adapters.Option) (map[string]*core.Tensor, error) {
	return s.RunWith(inputs, nil, opts...)
}

// RunWith is Run with destinations: ORT writes each output named in outputs into that tensor,
// which must be a writable tensor in C order with the output's dtype and shape (memory of a Gonum
// matrix, a memory-mapped file, ...), overlapping no input and no other destination. The result
// holds every output, the given tensors among them. For repeated inference into the same
// destinations, RunInto does the same without the maps.
func (s *Session) RunWith(inputs, outputs map[string]*core.Tensor, opts ...adapters.Option) (map[string]*core.Tensor, error) {
	return s.runWith(inputs, outputs, 0, opts)
}

// runWith is RunWith with ORT run options ro (0: none).
func (s *Session) runWith(inputs, outputs map[string]*core.Tensor, ro uintptr, opts []adapters.Option) (map[string]*core.Tensor, error) {
	var inBuf, outBuf [4]*core.Tensor // most models have few inputs and outputs: no allocation
	ins, err := gather("input", s.inputs, inputs, inBuf[:0])
	if err != nil {
		return nil, s.initializerError(inputs, err)
	}
	outs, err := gather("output", s.outputs, outputs, outBuf[:0])
	if err != nil {
		return nil, err
	}
	var o adapters.Options
	if len(opts) > 0 {
		o = adapters.Apply(opts...)
	}
	if err := s.run(ins, outs, true, o, ro); err != nil {
		return nil, err
	}
	result := make(map[string]*core.Tensor, len(s.outputs))
	for i := range s.outputs {
		result[s.outputs[i].Name] = outs[i]
	}
	return result, nil
}

// gather lists m's tensors in the order of infos (nil where m has none), refusing names that are
// not in infos.
func gather(kind string, infos []IOInfo, m map[string]*core.Tensor, buf []*core.Tensor) ([]*core.Tensor, error) {
	if len(m) == 0 { // Run's outputs: no lookups (nor IOInfo reads) needed
		for range infos {
			buf = append(buf, nil)
		}
		return buf, nil
	}
	found := 0
	for i := range infos {
		t, ok := m[infos[i].Name]
		if ok {
			found++
		}
		buf = append(buf, t)
	}
	if found != len(m) {
		for n := range m {
			if index(infos, n) < 0 {
				return nil, unknownName(kind, n, infos)
			}
		}
	}
	return buf, nil
}

// initializerError is err, the error of a run fed a name that is not one of the session's inputs,
// or, when that name is an overridable initializer of the model, an error saying how to feed it.
func (s *Session) initializerError(inputs map[string]*core.Tensor, err error) error {
	for n := range inputs {
		if index(s.inputs, n) < 0 && index(s.inits, n) >= 0 {
			return errs.Errorf(ErrModel, "onnxx: input %q is an overridable initializer of the model, which this session does not take: name it in NewSession's inputNames to feed it (inputs: %s)",
				n, quoted(s.inputs))
		}
	}
	return err
}

// RunInto runs the model on inputs, one tensor per input in the order of Inputs, and writes the
// outputs into outputs, one destination per output in the order of Outputs (see RunWith). It is
// the path for repeated inference: when the tensors are the ones of the previous run, the ORT
// values made for that run are used again, and RunInto makes one ORT call and allocates nothing.
func (s *Session) RunInto(inputs, outputs []*core.Tensor, opts ...adapters.Option) error {
	return s.runInto(inputs, outputs, 0, opts)
}

// runInto is RunInto with ORT run options ro (0: none).
func (s *Session) runInto(inputs, outputs []*core.Tensor, ro uintptr, opts []adapters.Option) error {
	var o adapters.Options // adapters.Apply allocates its result; runs without options need none
	if len(opts) > 0 {
		o = adapters.Apply(opts...)
	}
	if len(inputs) != len(s.inputs) || len(outputs) != len(s.outputs) {
		return errs.Errorf(ErrModel, "onnxx: RunInto got %d inputs and %d outputs, the session takes %d (%s) and gives %d (%s)",
			len(inputs), len(outputs), len(s.inputs), quoted(s.inputs), len(s.outputs), quoted(s.outputs))
	}
	return s.run(inputs, outputs, false, o, ro) // which refuses nil outputs, as fill is unset
}

// Run loads the model at path, runs it once on inputs and returns the named outputs (nil: all),
// then frees the session. It calls Init. For repeated runs, make a Session.
func Run(path string, inputs map[string]*core.Tensor, outputNames []string, opts ...adapters.Option) (map[string]*core.Tensor, error) {
	s, err := NewSession(path, nil, outputNames, nil)
	if err != nil {
		return nil, err
	}
	defer s.Destroy()
	return s.Run(inputs, opts...)
}

// # One run engine
//
// Every run goes the same way: run holds the tensors, runHeld takes the session's scratch and
// runStaged binds each input and output to an ORT value (bindInput, bindOutput), checks them,
// calls ORT (invoke) and collects the outputs. What makes repeated inference cheap is a state of
// the session's bindings, not another call chain: a slot keeps the value made over a caller's
// tensor, and a run all of whose values are already there is settled (stage.settled).
//
// The invariant that makes a settled run equal to one that binds afresh: a run is settled only
// when binding afresh would bind exactly the slots' values, so that the ORT call is the same call.
// A slot is kept (slot.kept) only for a tensor a run bound as it is (no copy, no cast), in host
// memory, and not a [1] tensor fed for a declared scalar; a tensor's memory, shape and dtype
// never change, so the same *core.Tensor passes every check of binding again. A settled run
// further uses the session's scratch (it may read and write the slots), asks for no copy
// (adapters.AlwaysCopy), has no destination for an output that echoes an input, and takes each
// output without a destination from a free lease of its declared shape. Binding then skips, for
// the values it finds kept, the per-tensor checks that passed when they were made; the one check
// that involves several tensors, overlap, is skipped once the slots' tensors are known to share
// no memory with one another nor with a lease block (bindings.apart), which covers every tensor a
// settled run can be given: a lease made later is new memory, which no live tensor shares, and
// lent blocks are distinct. A settled run of a session without execution providers calls ORT
// through the session's I/O binding (invokeKept), the same call with the bound lists kept; one
// that is not settled calls Run (invokeHost). A settled run therefore copies nothing and reports
// so, and its errors are those of the same run bound afresh (overlap, ORT's status).
// TestRunPathsAgree runs every model of the tests, settled and not, both ways, and compares
// outputs, ReportCopy results and errors.

// run runs the model, with ORT run options ro (0: none). outs[i] nil means the output is
// allocated here (known shape) or by ORT; run fills it in. With fill unset every output must be
// a destination. It holds every tensor it was given for the whole run.
func (s *Session) run(ins, outs []*core.Tensor, fill bool, o adapters.Options, ro uintptr) error {
	hin, err := core.Hold(ins...)
	if err != nil {
		return wrapf(err, "input %s", releasedName(ins, s.inputs))
	}
	defer hin.Release()
	hout, err := core.Hold(outs...)
	if err != nil {
		return wrapf(err, "the destination of output %s", releasedName(outs, s.outputs))
	}
	defer hout.Release()
	return s.runHeld(ins, outs, fill, o, ro)
}

// unlend releases the tensors a run lent (giving their leases back) and takes them out of outs,
// when the run does not return them.
func (s *Session) unlend(st *stage, outs []*core.Tensor) {
	for i, lent := range st.lent {
		if lent {
			outs[i].Release()
			outs[i], st.lent[i], st.outVals[i], st.ours[i] = nil, false, 0, false
		}
	}
}

// runHeld is run once the tensors are held. (The run is split into functions so that the defers
// of each are open-coded, which the compiler does only for few defers times returns.)
func (s *Session) runHeld(ins, outs []*core.Tensor, fill bool, o adapters.Options, ro uintptr) error {
	s.h.mu.RLock()
	defer s.h.mu.RUnlock()
	if s.h.session == 0 {
		return errDestroyed
	}
	st := s.stage()
	st.runOpts = ro
	defer s.unstage(st)
	if err := s.runStaged(st, ins, outs, fill, o); err != nil {
		return err
	}
	o.Report(st.copied) // once, for all inputs, and only for a run that succeeded
	return nil
}

// releasedName names the first released tensor of ts.
func releasedName(ts []*core.Tensor, infos []IOInfo) string {
	for i, t := range ts {
		if t != nil && t.Released() && i < len(infos) {
			return fmt.Sprintf("%q", infos[i].Name)
		}
	}
	return "(released)"
}

// runStaged binds the values (made anew, or kept: see "One run engine"), checks them, runs ORT
// and collects the outputs.
func (s *Session) runStaged(st *stage, ins, outs []*core.Tensor, fill bool, o adapters.Options) error {
	b := s.b
	st.settled = st.cached && o.Policy != adapters.CopyAlways // until a value is bound anew
	for i, t := range ins {
		if sl := &b.in[i]; st.settled && sl.keeps(t) { // checked when its value was made
			st.inVals[i] = sl.v
		} else if err := s.bindInput(st, i, t, o); err != nil {
			return err
		}
	}
	for i, t := range outs {
		if sl := &b.out[i]; st.settled && t != nil && sl.keeps(t) { // never an echo's (kept unset)
			st.outVals[i], st.ours[i] = sl.v, true
		} else if err := s.bindOutput(st, i, t, outs, fill); err != nil {
			return err
		}
	}
	if !st.settled { // ORT reads the inputs found kept before the run was unsettled as they are
		for i, x := range st.srcs {
			if x == nil {
				st.srcs[i] = ins[i]
			}
		}
	}
	err := s.checkRun(st, ins, outs)
	if err == nil && st.settled {
		b.settledRuns++
	}
	if err == nil {
		err = s.invoke(st)
	}
	if err != nil {
		s.unlend(st, outs) // the leases of a failed run are free again
		return err
	}
	if st.settled { // every output is a value of the session's
		return nil
	}
	return s.collect(st, outs)
}

// checkRun makes the check of a run that involves several tensors (checkOverlap), unless the run
// is settled and the slots are known to be apart (bindings.checked); a settled run that passes it
// finds out whether they are.
func (s *Session) checkRun(st *stage, ins, outs []*core.Tensor) error {
	if !st.settled {
		return s.checkOverlap(st.srcs, outs)
	}
	b := s.b
	if b.checked {
		return nil
	}
	err := s.checkOverlap(ins, outs) // what ORT reads of a settled run: the inputs themselves
	b.checked = err == nil && b.apart()
	return err
}

// bindInput puts the value of input i into the stage, for a run that is not settled (see
// runStaged): the slot's if t is the tensor it was made over, else a new one over t (or over a
// copy of t, as o allows), kept in the slot when the run may use the slots.
func (s *Session) bindInput(st *stage, i int, t *core.Tensor, o adapters.Options) error {
	st.settled = false
	info, sl := &s.inputs[i], &s.b.in[i]
	if st.cached && o.Policy != adapters.CopyAlways && sl.matches(t) {
		st.inVals[i], st.srcs[i] = sl.v, t
		st.loose = st.loose || loose(info, t)
		return st.noteDevice(s, "input", info.Name, t)
	}
	if t == nil {
		return errs.Errorf(ErrModel, "onnxx: input %q is missing (inputs: %s)", info.Name, quoted(s.inputs))
	}
	src, err := s.inputSource(st, info, t, o)
	if err != nil {
		return err
	}
	v, err := s.api.newValue(st, src, info.ElementType, s.api.memInfo(src))
	if err != nil {
		return wrapf(err, "input %q", info.Name)
	}
	st.inVals[i], st.srcs[i] = v, src
	if st.cached && src == t {
		s.b.setSlot(&s.b.in[i], t, v, t.HostAccessible() && !loose(info, t))
	} else {
		st.keep(v, src)
	}
	return nil
}

// inputSource checks t against input info and returns what ORT reads: t, or its copy in C order
// or in the model's element type.
func (s *Session) inputSource(st *stage, info *IOInfo, t *core.Tensor, o adapters.Options) (*core.Tensor, error) {
	if err := st.noteDevice(s, "input", info.Name, t); err != nil {
		return nil, err
	}
	if err := fitsShape("input", info, t); err != nil {
		return nil, err
	}
	st.loose = st.loose || loose(info, t)
	if t.DType() != info.DType {
		return s.castInput(st, info, t, o)
	}
	ok, why := Shareable(t)
	cp, err := o.Choose(ok, why) // the run reports, once it has succeeded
	if err != nil {
		return nil, wrapf(err, "input %q", info.Name)
	}
	if !cp {
		return t, nil
	}
	c, err := memory.Contiguous(t)
	if err != nil {
		return nil, wrapf(err, "input %q: copying into C order", info.Name)
	}
	st.copied = true
	return c, nil
}

// castInput converts an input of another element type as the cast rule says
// (adapters.CheckCast): by default when the cast keeps every value (float32 for a float64 model),
// and otherwise only with CastInputs (adapters.AllowCast). A cast is a copy, reported and refused
// by adapters.ZeroCopyOnly.
func (s *Session) castInput(st *stage, info *IOInfo, t *core.Tensor, o adapters.Options) (*core.Tensor, error) {
	from, to := t.DType(), info.DType
	if err := o.CheckCast(from, to, fmt.Sprintf("the model's input %q", info.Name)); err != nil {
		var ce *adapters.CastError
		if errors.As(err, &ce) {
			ce.Also = ErrDType
		}
		return nil, errorf([]error{err, ErrDType, ErrModel},
			"onnxx: input %q is %s, the model wants %s: pass onnxx.CastInputs() to convert (a copy; casting would %s), or convert it first with memory.Cast",
			info.Name, from, to, adapters.CastLoss(from, to))
	}
	if o.Policy == adapters.CopyNever {
		return nil, errs.Errorf(adapters.ErrCopyRequired, "onnxx: input %q is %s, the model wants %s: casting it is a copy, and adapters.ZeroCopyOnly() forbids one", info.Name, from, to)
	}
	c, err := memory.Cast(t, to)
	if err != nil {
		return nil, wrapf(err, "input %q: casting %s to %s", info.Name, from, to)
	}
	st.copied = true
	return c, nil
}

// loose reports whether t is a [1] tensor for input info, declared a scalar: ORT takes it, and
// the outputs computed from it may not have their declared shapes.
func loose(info *IOInfo, t *core.Tensor) bool {
	return !info.UnknownRank && len(info.Shape) == 0 && t.Ndim() == 1
}

// fitsShape checks t's rank and fixed dimensions against the model's, as ORT does: any shape
// for a value of unknown rank, and a [1] tensor for an input declared a scalar.
func fitsShape(kind string, info *IOInfo, t *core.Tensor) error {
	if info.UnknownRank || kind == "input" && len(info.Shape) == 0 && t.Ndim() == 1 && t.Dim(0) == 1 {
		return nil
	}
	ok := t.Ndim() == len(info.Shape)
	for i := 0; ok && i < len(info.Shape); i++ {
		ok = info.Shape[i] < 0 || info.Shape[i] == t.Dim(i)
	}
	if !ok {
		return errs.Errorf(ErrModel, "onnxx: %s %q has shape %v, the model wants %v (-1: any)", kind, info.Name, t.Shape(), info.Shape)
	}
	return nil
}

// bindOutput puts the value of output i into the stage, unless it is a settled run's destination
// (see runStaged): over the destination t (kept in the slot for the next run), over a tensor lent
// or allocated here when the shape is known, or none (ORT allocates).
func (s *Session) bindOutput(st *stage, i int, t *core.Tensor, outs []*core.Tensor, fill bool) error {
	info := &s.outputs[i]
	if t == nil {
		return s.allocateOutput(st, i, info, outs, fill)
	}
	st.settled = false
	sl := &s.b.out[i]
	st.dynamicDst = st.dynamicDst || info.Dynamic()
	if s.echo[i] { // ORT gets no buffer; collect writes t
		st.dsts[i] = t
		return s.checkDestination(st, info, t)
	}
	if st.cached && sl.matches(t) { // checked when its value was made
		st.outVals[i], st.ours[i] = sl.v, true
		return st.noteDevice(s, "output", info.Name, t)
	}
	if err := s.checkDestination(st, info, t); err != nil {
		return err
	}
	v, err := s.api.newValue(st, t, info.ElementType, s.api.memInfo(t))
	if err != nil {
		return wrapf(err, "output %q", info.Name)
	}
	st.outVals[i], st.ours[i] = v, true
	if st.cached {
		s.b.setSlot(&s.b.out[i], t, v, t.HostAccessible())
	} else {
		st.keep(v, t)
	}
	return nil
}

// allocateOutput makes a Go tensor for an output of known shape (prealloc): lent from a lease,
// which keeps the run settled, or new; others ORT allocates.
func (s *Session) allocateOutput(st *stage, i int, info *IOInfo, outs []*core.Tensor, fill bool) error {
	if !fill {
		return errs.Errorf(ErrModel, "onnxx: RunInto needs a destination for output %q", info.Name)
	}
	if st.device >= 0 || st.loose {
		st.settled = false
		return nil // ORT allocates it (on the inputs' device)
	}
	if b := s.b; st.cached && b.lends[i] {
		if b.allLent.Load() > 0 {
			b.allLent.Add(-1)
		} else if t, v, err := s.lend(st, i); err != nil {
			return wrapf(err, "output %q", info.Name)
		} else if t != nil {
			st.putLent(i, t, v, outs)
			return nil
		}
	}
	st.settled = false
	if !s.prealloc[i] {
		return nil // ORT allocates it
	}
	t, err := core.New(info.DType, info.Shape...)
	if err != nil {
		return wrapf(err, "output %q", info.Name)
	}
	v, err := s.api.newValue(st, t, info.ElementType, s.api.cpuInfo)
	if err != nil {
		return wrapf(err, "output %q", info.Name)
	}
	st.outVals[i], st.ours[i] = v, true
	st.keep(v, t)
	outs[i] = t
	return nil
}

// checkDestination checks a caller's tensor for output info before ORT runs.
func (s *Session) checkDestination(st *stage, info *IOInfo, t *core.Tensor) error {
	if err := st.noteDevice(s, "output", info.Name, t); err != nil {
		return err
	}
	if t.DType() != info.DType {
		return errorf([]error{ErrDType, ErrModel}, "onnxx: the destination of output %q is %s, the output is %s", info.Name, t.DType(), info.DType)
	}
	if err := fitsShape("output", info, t); err != nil {
		return err
	}
	if !t.IsContiguous() {
		return errs.Errorf(adapters.ErrCopyRequired, "onnxx: output %q: ORT writes C order, the destination %s has strides %v", info.Name, t, t.Strides())
	}
	if t.ReadOnly() {
		return wrapf(core.ErrReadOnly, "output %q", info.Name)
	}
	return nil
}

// checkOverlap refuses destinations that share memory with an input ORT reads or with another
// destination: ORT would read elements it has already overwritten.
func (s *Session) checkOverlap(srcs, outs []*core.Tensor) error {
	for i, d := range outs {
		if d == nil {
			continue
		}
		for j, x := range srcs[:len(s.inputs)] {
			if x != nil && core.MayShareMemory(d, x) {
				return errs.Errorf(ErrOverlap, "onnxx: the destination of output %q overlaps input %q", s.outputs[i].Name, s.inputs[j].Name)
			}
		}
		for k := i + 1; k < len(outs); k++ {
			if outs[k] != nil && core.MayShareMemory(d, outs[k]) {
				return errs.Errorf(ErrOverlap, "onnxx: the destinations of outputs %q and %q overlap", s.outputs[i].Name, s.outputs[k].Name)
			}
		}
	}
	return nil
}

// invoke runs ORT on the staged values: through an I/O binding made for the run when some tensor
// is in device memory, through the session's kept I/O binding for a settled run of a session
// without execution providers (invokeKept), and with Run otherwise.
func (s *Session) invoke(st *stage) error {
	switch {
	case st.device >= 0:
		return s.invokeBound(st)
	case st.settled && s.bindKept:
		return s.invokeKept(st)
	}
	return s.runError(st, s.invokeHost(st))
}

// invokeHost calls ORT's Run on the staged values, with the stage's run options, and returns
// its status.
func (s *Session) invokeHost(st *stage) uintptr {
	// every pointer is into memory the session or the stage keeps on the heap
	status := ccall.Call8(s.api.f(fnRun), s.h.session, st.runOpts,
		uintptr(unsafe.Pointer(unsafe.SliceData(s.inNames))), uintptr(unsafe.Pointer(&st.inVals[0])), uintptr(len(s.inputs)),
		uintptr(unsafe.Pointer(unsafe.SliceData(s.outNames))), uintptr(len(s.outputs)), uintptr(unsafe.Pointer(&st.outVals[0])))
	runtime.KeepAlive(s)
	return status
}

// runError is the error of ORT's run that returned status (nil if none), releasing the outputs
// ORT allocated (see failed).
func (s *Session) runError(st *stage, status uintptr) error {
	if status == noStatus {
		return nil
	}
	st.dropForeign(s.api, len(s.outputs))
	return s.failed(st, status)
}

// failed is the error of ORT's run that returned status (nil if none). With a destination for a
// dynamic output, it says that the destination's shape may be what is wrong. (A settled run does
// not note its destinations' shapes: every output of dynamic shape has one, as lent ones are of
// fixed shape.)
func (s *Session) failed(st *stage, status uintptr) error {
	if status == noStatus {
		return nil
	}
	err := s.api.statusError("running the model", status)
	if st.dynamicDst || st.settled && s.dynamicOut {
		return errorf([]error{ErrModel, err}, "onnxx: a destination's shape may not be the output's for these inputs: %s", bare(err))
	}
	return err
}

// invokeKept runs ORT on a settled run's values through the session's I/O binding: a value is
// bound once and stays bound while it is the one the runs use, so that a repeated run is one
// RunWithBinding call, which takes ORT's bound name and value lists as they are where Run builds
// them anew from its arguments (BenchmarkSmallModelRounds measures the difference). Only
// sessions without execution providers use it (bindKept): on the CPU, binding a value copies
// nothing, so the bound value reads the tensor's memory as it is at each run. The caller holds
// the bindings' lock and the handle's read lock (the binding is the handle's, released before
// the session, and so are the run options it makes with it for runs that have none: ORT would
// otherwise make and drop default ones on every run).
func (s *Session) invokeKept(st *stage) error {
	a, b, h := s.api, s.b, s.h
	if h.io == 0 {
		var io, ro uintptr
		if err := a.call("creating run options", fnCreateRunOptions, uintptr(unsafe.Pointer(&ro))); err != nil {
			return err
		}
		if err := a.call("creating an I/O binding", fnCreateIoBinding, h.session, uintptr(unsafe.Pointer(&io))); err != nil {
			a.do(fnReleaseRunOptions, ro)
			return err
		}
		h.io, h.ro = io, ro
	}
	nin := len(s.inputs)
	if err := s.rebind("input", fnBindInput, s.inputs, s.inNames, st.inVals[:nin], b.bound[:nin]); err != nil {
		return err
	}
	if err := s.rebind("output", fnBindOutput, s.outputs, s.outNames, st.outVals[:len(s.outputs)], b.bound[nin:]); err != nil {
		return err
	}
	ro := st.runOpts
	if ro == 0 {
		ro = h.ro
	}
	// every output is bound to a value of the session's: ORT allocates none, nothing to drop
	return s.failed(st, ccall.Call3(a.f(fnRunWithBinding), h.session, ro, h.io))
}

// rebind binds to the session's I/O binding, with bind (BindInput or BindOutput), each of vals
// that is not the value bound[i] records, and records it.
func (s *Session) rebind(kind string, bind fn, infos []IOInfo, names, vals, bound []uintptr) error {
	for i, v := range vals {
		if bound[i] == v {
			continue
		}
		bound[i] = 0
		if err := s.api.call("binding "+kind+" "+infos[i].Name, bind, s.h.io, names[i], v); err != nil {
			return err
		}
		bound[i] = v
	}
	return nil
}

// collect makes tensors of the outputs ORT allocated: over ORT's memory, each owning its value,
// unless ORT handed back memory that is not the output's own (see settle).
func (s *Session) collect(st *stage, outs []*core.Tensor) error {
	var first error
	for i := range outs {
		if st.ours[i] {
			continue
		}
		v := st.outVals[i]
		st.outVals[i] = 0
		t, err := s.api.wrapValue(st, v)
		if err == nil {
			t, err = s.settle(st, i, t, outs)
		}
		if err != nil {
			if first == nil {
				first = wrapf(err, "output %q", s.outputs[i].Name)
			}
			continue
		}
		outs[i] = t
	}
	if first != nil {
		for i, t := range outs {
			if !st.ours[i] && st.dsts[i] == nil && t != nil {
				t.Release()
				outs[i] = nil
			}
		}
	}
	return first
}

// settle checks output i, a tensor t over the value ORT returned, and returns the output. ORT
// does not always compute an output into memory of its own: for a graph output that is a graph
// input (or what ORT folds into one) it hands back the input's value, which is the caller's
// tensor, or this package's C-order copy of it that the run frees. When t shares memory with an
// input or with another output, the output is a copy of t (flagged core.FlagIsCopied); for an
// echo output with a destination, t is copied into the destination. t is released either way.
// The run holds the inputs and destinations, so the memory read is valid.
func (s *Session) settle(st *stage, i int, t *core.Tensor, outs []*core.Tensor) (*core.Tensor, error) {
	if d := st.dsts[i]; d != nil {
		defer t.Release()
		if !slices.Equal(d.Shape(), t.Shape()) {
			return nil, errs.Errorf(ErrModel, "onnxx: the output has shape %v, its destination %v", t.Shape(), d.Shape())
		}
		if err := memory.Copy(d, t); err != nil {
			return nil, err
		}
		return d, nil
	}
	shared := false
	for _, x := range st.srcs[:len(s.inputs)] {
		shared = shared || x != nil && core.MayShareMemory(t, x)
	}
	for k, x := range outs {
		shared = shared || k != i && x != nil && core.MayShareMemory(t, x)
	}
	if !shared {
		return t, nil
	}
	defer t.Release()
	return memory.Contiguous(t)
}

// dummy stands for the data of tensors without elements, which ORT never reads or writes.
var dummy [8]byte

// newValue makes an OrtValue over t's memory (C order, described by info) with element type et.
// The caller keeps t's memory valid and pinned while the value lives. It builds the call in the
// stage's scratch (shape, result), so that it allocates nothing.
func (a *ortAPI) newValue(st *stage, t *core.Tensor, et ElementType, info uintptr) (uintptr, error) {
	nd := t.Ndim()
	for d := range nd {
		st.shape[d] = t.Dim(d)
	}
	data, n := t.Data(), t.NumBytes()
	if n == 0 || data == nil {
		data, n = unsafe.Pointer(&dummy[0]), 0
	}
	st.val = 0
	status := ccall.Call7(a.f(fnCreateTensorWithDataAsOrtValue), info, uintptr(data), uintptr(n),
		uintptr(unsafe.Pointer(&st.shape[0])), uintptr(nd), uintptr(et), uintptr(unsafe.Pointer(&st.val)))
	runtime.KeepAlive(t)
	if status != noStatus {
		return 0, a.statusError("making a tensor value", status)
	}
	return st.val, nil
}

// wrapValue makes a tensor over the memory of an OrtValue ORT allocated, owning it: ReleaseValue
// runs exactly once, when the last tensor over it is released or collected. On error the value
// is released. The value is in the memory of the run's device (st.device: a CUDA device, or -1
// for CPU memory).
func (a *ortAPI) wrapValue(st *stage, v uintptr) (*core.Tensor, error) {
	d, err := a.describeValue(st, v)
	if err != nil {
		a.do(fnReleaseValue, v)
		return nil, err
	}
	t, err := core.Wrap(d, func() { // Wrap releases on error too
		a.do(fnReleaseValue, v)
		if f := traceRelease.Load(); f != nil {
			(*f)(v)
		}
	})
	if f := traceWrap.Load(); err == nil && f != nil {
		(*f)(v, t)
	}
	return t, err
}

// traceWrap and traceRelease, set by tests only (before any run), see each output value wrapped
// and released.
var traceWrap, traceRelease atomic.Pointer[func(v uintptr, t ...*core.Tensor)]

// describeValue reads an OrtValue's element type, shape and data address: two C calls, the shape
// read in place (GetTensorElementTypeAndShapeDataReference, which allocates nothing, where
// GetTensorTypeAndShape makes an info object to read and release in five calls more). The calls
// write their results into the stage's scratch (st.out), so that it allocates nothing.
func (a *ortAPI) describeValue(st *stage, v uintptr) (core.Desc, error) {
	o := &st.out
	*o = outScratch{}
	if status := ccall.Call4(a.f(fnGetTensorElementTypeAndShapeDataReference), v,
		uintptr(unsafe.Pointer(&o.et)), uintptr(unsafe.Pointer(&o.shape)), uintptr(unsafe.Pointer(&o.nd))); status != noStatus {
		return core.Desc{}, errs.Errorf(ErrValue, "%w", a.statusError("reading an output's type and shape", status))
	}
	shape, nd := o.shape, o.nd
	dt, err := FromDType(ElementType(o.et))
	if err != nil {
		return core.Desc{}, err
	}
	if err := checkRank(nd); err != nil {
		return core.Desc{}, err
	}
	var dims []int64
	if nd > 0 {
		if shape == 0 {
			return core.Desc{}, errs.Errorf(ErrValue, "onnxx: ORT reports rank %d and no dimensions", nd)
		}
		// the value's own array: the tensor copies it (core.Wrap) before the value can change
		dims = unsafe.Slice((*int64)(cptr(shape)), nd)
	}
	if status := ccall.Call2(a.f(fnGetTensorMutableData), v, uintptr(unsafe.Pointer(&o.data))); status != noStatus {
		return core.Desc{}, a.statusError("reading an output's data address", status)
	}
	dev := core.CPUDevice
	if st.device >= 0 {
		dev = core.DLDevice{DeviceType: core.CUDA, DeviceID: st.device}
	}
	return core.Desc{Data: cptr(o.data), Device: dev, DType: dt, Shape: dims}, nil
}
