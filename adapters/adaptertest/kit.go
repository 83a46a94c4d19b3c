// Package adaptertest is the conformance kit every adapter runs: one call, Run, converts a
// generated set of tensors to the adapter's ecosystem and back and checks that the adapter keeps
// the promises of package adapters — the right elements for every stride pattern, memory shared
// exactly when the adapter says so (proved by pointer identity and by writes that show through),
// copies when it must, ZeroCopyOnly and AlwaysCopy honoured, read-only memory never handed back
// writable, honest ReportCopy, and foreign memory kept alive as long as the converted value is
// reachable and released once it is not.
//
// It plays the part that gonum's blas/testblas plays for BLAS implementations: an adapter
// package wires it with a test of a few lines,
//
//	func TestConformance(t *testing.T) {
//		adaptertest.Run(t, adaptertest.Adapter{
//			Name:      "gonum",
//			DTypes:    []core.DLDataType{core.Float64},
//			MinNdim:   2, MaxNdim: 2,
//			RoundTrip: roundTrip, // tensor → *mat.Dense → tensor
//			Shareable: gonumx.Shareable, // the adapter's zero-copy predicate
//		})
//	}
//
// # What the kit generates
//
// Cases lists the inputs: every declared dtype × rank (0-d, empty [0] and [3 0], 1-d to 5-d with
// small sizes and dimensions of size 1) × layout (C order, Fortran order, a view at an offset, a
// step-2 slice, negative strides, a zero-stride broadcast, transposed and permuted axes,
// read-only, and foreign memory wrapped with core.Wrap whose release function flips a flag and
// overwrites the memory). Element values are deterministic and distinct.
//
// # What the kit checks
//
// For each case, each as a subtest:
//
//   - values: RoundTrip with default options succeeds and gives back the dtype, shape and
//     elements (compared as bytes of C-order copies, so NaNs compare equal).
//   - zero-copy: when Shareable(case) is true, every element of the result sits at the address of
//     the input's, a write through either is seen through the other, and RoundTrip with
//     adapters.ZeroCopyOnly succeeds (or, for a read-only input, may refuse with
//     core.ErrReadOnly). When it is false, ZeroCopyOnly fails with adapters.ErrCopyRequired and
//     the default result shares no memory with the input.
//   - always-copy: with adapters.AlwaysCopy the result shares no memory with the input.
//   - read-only: the result of a read-only input is never writable while it shares memory.
//   - report-copy: adapters.ReportCopy reports exactly whether the result shares memory.
//   - only-holder (once per adapter, not per case): inputs that are the only holders of memory
//     unmapped when released (adapters/adaptertest/foreignmem), converted again and again while collections
//     run throughout: an adapter that uses the memory after its last use of the *core.Tensor
//     without holding it (core.Hold) faults or reads wrong values — when it goes on using it for
//     longer than a collection cycle takes to find the tensor unreachable and run its cleanup
//     (milliseconds), which a short copy does not.
//   - concurrent-release (once per adapter): the same inputs, released by another goroutine at
//     every point of the conversion (a delay from 0 to about a millisecond): an adapter that
//     reads or writes the memory without holding it for the whole time faults however briefly
//     it does so; one that holds it returns the right values, or an error wrapping
//     core.ErrReleased when the release came before its hold.
//   - cast (once per source dtype and Adapter.Casts entry): the cast rule of package adapters:
//     a cast that keeps every value (adapters.Preserves) happens by default, as a reported
//     copy with memory.Cast's values; any other fails with adapters.ErrCast, naming both
//     dtypes and adapters.AllowCast, and succeeds with adapters.AllowCast().
//   - released (once per adapter): a released input is refused with an error wrapping
//     core.ErrReleased.
//   - messages: every error the kit expects (ZeroCopyOnly's, a refused cast's, a released
//     input's) leads with its cause: no sentinel's generic text first, no package prefix twice
//     (the sentinels are those of core, adapters and Adapter.Sentinels).
//   - lifetime (foreign memory): releasing the input and collecting garbage several times does
//     not run the case's release function while a result that shares the memory is reachable,
//     and the result still reads the right values; once the result is dropped, the release
//     function runs exactly once (the kit counts its calls, collecting garbage until it has run,
//     for up to 10 s), and core.LiveForeign comes back to at most its settled baseline.
//
// "Shares memory" means the byte ranges of the elements overlap. The kit reads and writes
// elements through their addresses, so it needs host tensors; it does not run its cases in
// parallel. The lifetime verdict rests on the case's own release function, so garbage other
// tests leave behind cannot sway it; its core.LiveForeign check (which is process-wide) only
// assumes that no other test holds on to newly created foreign memory while the kit runs.
package adaptertest

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/foreignmem"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// Adapter describes an adapter under test.
type Adapter struct {
	// Name names the adapter in failure messages.
	Name string
	// DTypes are the element types the adapter converts; the kit generates cases of each.
	DTypes []core.DLDataType
	// MinNdim and MaxNdim bound the ranks the adapter accepts (MaxNdim 0 means up to 5).
	MinNdim, MaxNdim int
	// RoundTrip converts t to the ecosystem's value and back to a tensor, passing opts to the
	// conversions. With a copy policy, it must honour it as a whole (ZeroCopyOnly fails if either
	// direction would copy) and ReportCopy must report whether the result shares t's memory.
	RoundTrip func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error)
	// Shareable is the adapter's zero-copy predicate (every adapter exports one under that name):
	// whether it promises to share memory for input t under the default policy (and so to succeed
	// under ZeroCopyOnly), and if not, why. When it returns false the adapter must copy. Nil
	// means the adapter never shares memory.
	Shareable func(t *core.Tensor) (ok bool, why string)
	// Casts are the adapter's conversions into a value of one fixed element type (a *mat.Dense
	// holds float64, a model's input its declared type), on which the kit checks the cast rule
	// of package adapters for every source dtype: see Cast.
	Casts []Cast
	// Sentinels are the adapter's own sentinel errors. The kit holds every error it sees to the
	// module's rule for messages (they lead with the cause: no sentinel's generic text first,
	// no package prefix twice), with these and the sentinels of core and adapters.
	Sentinels []error
}

// message holds an error the adapter returned to the rule for messages.
func (a Adapter) message(err error) error {
	if err == nil {
		return nil
	}
	if bad := errstest.Check(err, a.Sentinels...); bad != nil {
		return fmt.Errorf("an error's message does not lead with its cause: %w", bad)
	}
	return nil
}

// Cast is a conversion whose target holds one element type, To.
type Cast struct {
	// To is the element type the target holds.
	To core.DLDataType
	// RoundTrip converts t (of any dtype) to the target and back to a tensor of dtype To,
	// passing opts to the conversion. The kit checks, for every dtype From of CastDTypes: when
	// adapters.Preserves(From, To), the default options succeed, report a copy and give exactly
	// memory.Cast's values; otherwise they fail with an error wrapping adapters.ErrCast that
	// names both dtypes and adapters.AllowCast, leave ReportCopy's flag as it was, and
	// adapters.AllowCast() makes the conversion succeed with memory.Cast's values.
	RoundTrip func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error)
}

// CastDTypes are the source dtypes the cast check converts from.
var CastDTypes = []core.DLDataType{
	core.Bool, core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8, core.Uint16, core.Uint32,
	core.Uint64, core.Float16, core.BFloat16, core.Float32, core.Float64, core.Complex64, core.Complex128,
}

func (a Adapter) zeroCopy(t *core.Tensor) bool {
	if a.Shareable == nil {
		return false
	}
	ok, _ := a.Shareable(t)
	return ok
}

// check is one conformance check of one case: it builds its own fresh input.
type check struct {
	name string
	run  func(a Adapter, s spec) error
	// only, if set, restricts the check to some layouts.
	only string
}

var checks = []check{
	{name: "values", run: checkValues},
	{name: "zero-copy", run: checkZeroCopy},
	{name: "always-copy", run: checkAlwaysCopy},
	{name: "read-only", run: checkReadOnly},
	{name: "report-copy", run: checkReportCopy},
	{name: "lifetime", run: checkLifetime, only: layoutForeign},
}

// Run runs the conformance checks on a, one subtest per case and check (named like
// "float32/2d[3 4]/fortran/zero-copy"). Before it returns it collects garbage until
// core.LiveForeign has settled, so that the foreign memory its cases dropped is released by then
// and a leak check in the caller's next test starts from a quiet count.
func Run(t *testing.T, a Adapter) {
	t.Helper()
	if a.RoundTrip == nil {
		t.Fatalf("adaptertest: adapter %q has no RoundTrip", a.Name)
	}
	if len(a.DTypes) == 0 {
		t.Fatalf("adaptertest: adapter %q declares no dtypes", a.Name)
	}
	for _, s := range specs(a.DTypes, a.MinNdim, a.MaxNdim) {
		t.Run(s.name(), func(t *testing.T) {
			for _, c := range checks {
				if c.only != "" && c.only != s.layout {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					if err := c.run(a, s); err != nil {
						t.Errorf("%s: %v", a.Name, err)
					}
				})
			}
		})
	}
	for _, c := range a.Casts {
		for _, from := range CastDTypes {
			t.Run(fmt.Sprintf("cast/%s→%s", from, c.To), func(t *testing.T) {
				if err := checkCast(a, c, from); err != nil {
					t.Errorf("%s: %v", a.Name, err)
				}
			})
		}
	}
	t.Run("released", func(t *testing.T) {
		if err := checkReleased(a); err != nil {
			t.Errorf("%s: %v", a.Name, err)
		}
	})
	t.Run("only-holder", func(t *testing.T) {
		if err := checkOnlyHolder(a); err != nil {
			t.Errorf("%s: %v", a.Name, err)
		}
	})
	t.Run("concurrent-release", func(t *testing.T) {
		if err := checkConcurrentRelease(a); err != nil {
			t.Errorf("%s: %v", a.Name, err)
		}
	})
	// leave no cleanups of the cases' garbage pending, to run under the feet of the next test
	leakcheck.Settle()
}

// runAll runs every check on every case and returns the failures; the kit's own tests use it
// to show that broken adapters are caught.
func runAll(a Adapter) map[string]error {
	fails := map[string]error{}
	for _, s := range specs(a.DTypes, a.MinNdim, a.MaxNdim) {
		for _, c := range checks {
			if c.only != "" && c.only != s.layout {
				continue
			}
			if err := c.run(a, s); err != nil {
				fails[s.name()+"/"+c.name] = err
			}
		}
	}
	return fails
}

// roundTrip calls the adapter, turning a panic into an error.
func roundTrip(a Adapter, t *core.Tensor, opts ...adapters.Option) (back *core.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("RoundTrip panicked: %v", r)
		}
	}()
	back, err = a.RoundTrip(t, opts...)
	if err == nil && back == nil {
		err = errors.New("RoundTrip returned a nil tensor and no error")
	}
	return back, err
}

// contiguousBytes returns the elements of t in C order as bytes.
func contiguousBytes(t *core.Tensor) ([]byte, error) {
	c, err := memory.Contiguous(t)
	if err != nil {
		return nil, err
	}
	b, err := c.ReadOnlyBytes()
	if err != nil {
		return nil, err
	}
	return append([]byte{}, b...), nil
}

// sameElements checks back against the input's dtype, shape and C-order bytes.
func sameElements(in *core.Tensor, want []byte, back *core.Tensor) error {
	if back.DType() != in.DType() {
		return fmt.Errorf("dtype %s came back as %s", in.DType(), back.DType())
	}
	if !slices.Equal(back.Shape(), in.Shape()) {
		return fmt.Errorf("shape %v came back as %v", in.Shape(), back.Shape())
	}
	got, err := contiguousBytes(back)
	if err != nil {
		return fmt.Errorf("reading the result: %w", err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("elements differ: sent % x, got back % x", want, got)
	}
	return nil
}

func checkValues(a Adapter, s spec) error {
	c := s.build()
	defer c.Tensor.Release()
	want, err := contiguousBytes(c.Tensor)
	if err != nil {
		return err
	}
	back, err := roundTrip(a, c.Tensor)
	if err != nil {
		return fmt.Errorf("RoundTrip of %s: %w", c.Tensor, err)
	}
	return sameElements(c.Tensor, want, back)
}

// addresses returns the address of every element of t, in C order of its indices.
func addresses(t *core.Tensor) []uintptr {
	n := t.Len()
	if n == 0 {
		return nil
	}
	size := int64(t.DType().Size())
	base := uintptr(t.Data())
	out := make([]uintptr, 0, n)
	for idx := range core.Indices(t.Shape()) {
		off, _ := t.Offset(idx...) // every index comes from the tensor's own shape
		out = append(out, base+uintptr(off*size))
	}
	return out
}

// flipFirst toggles the lowest bit of the first byte of element k (C order) of t: for every
// dtype that is another valid value (false↔true for bool). It writes through t's own address.
func flipFirst(t *core.Tensor, k int) {
	addr := addresses(t)[k]
	p := (*byte)(unsafe.Add(t.Data(), int(addr-uintptr(t.Data()))))
	*p ^= 1
}

// visible flips element k of `through` and reports whether the C-order contents of `seen`
// changed accordingly, then flips it back.
func visible(through, seen *core.Tensor, k int) (bool, error) {
	before, err := contiguousBytes(seen)
	if err != nil {
		return false, err
	}
	flipFirst(through, k)
	after, err := contiguousBytes(seen)
	flipFirst(through, k)
	if err != nil {
		return false, err
	}
	return !bytes.Equal(before, after), nil
}

func checkZeroCopy(a Adapter, s spec) error {
	c := s.build()
	defer c.Tensor.Release()
	in := c.Tensor
	want, err := contiguousBytes(in)
	if err != nil {
		return err
	}
	if !a.zeroCopy(in) {
		if _, err := roundTrip(a, in, adapters.ZeroCopyOnly()); !errors.Is(err, adapters.ErrCopyRequired) {
			return fmt.Errorf("Shareable says %s must be copied, yet RoundTrip with ZeroCopyOnly returned %v, not ErrCopyRequired", in, err)
		} else if err := a.message(err); err != nil {
			return err
		}
		back, err := roundTrip(a, in)
		if err != nil {
			return fmt.Errorf("RoundTrip of %s: %w", in, err)
		}
		if err := independent(in, back); err != nil {
			return fmt.Errorf("Shareable says %s is copied, but %w", in, err)
		}
		return nil
	}
	back, err := roundTrip(a, in)
	if err != nil {
		return fmt.Errorf("RoundTrip of %s: %w", in, err)
	}
	if err := sameElements(in, want, back); err != nil {
		return err
	}
	if err := sameAddresses(in, back); err != nil {
		return fmt.Errorf("Shareable promised shared memory: %w", err)
	}
	if n := int(in.Len()); n > 0 {
		if !in.ReadOnly() {
			if seen, err := visible(in, back, 0); err != nil || !seen {
				return fmt.Errorf("a write to input %s did not show through the result %s (err %v)", in, back, err)
			}
		}
		if !back.ReadOnly() {
			if seen, err := visible(back, in, n-1); err != nil || !seen {
				return fmt.Errorf("a write to result %s did not show through the input %s (err %v)", back, in, err)
			}
		}
	}
	only, err := roundTrip(a, in, adapters.ZeroCopyOnly())
	switch {
	case err != nil && in.ReadOnly() && errors.Is(err, core.ErrReadOnly):
		return nil // refusing to share read-only memory is allowed
	case err != nil:
		return fmt.Errorf("Shareable promised shared memory, yet RoundTrip with ZeroCopyOnly failed: %w", err)
	}
	if err := sameAddresses(in, only); err != nil {
		return fmt.Errorf("RoundTrip with ZeroCopyOnly: %w", err)
	}
	runtime.KeepAlive(back)
	return nil
}

// sameAddresses checks that every element of back lies at the address of the same element of in.
func sameAddresses(in, back *core.Tensor) error {
	if !slices.Equal(back.Shape(), in.Shape()) {
		return fmt.Errorf("shape %v came back as %v", in.Shape(), back.Shape())
	}
	ia, ba := addresses(in), addresses(back)
	for k := range ia {
		if ia[k] != ba[k] {
			return fmt.Errorf("element %d of %s is at %#x in the input but at %#x in the result %s", k, in, ia[k], ba[k], back)
		}
	}
	return nil
}

func checkAlwaysCopy(a Adapter, s spec) error {
	c := s.build()
	defer c.Tensor.Release()
	in := c.Tensor
	want, err := contiguousBytes(in)
	if err != nil {
		return err
	}
	back, err := roundTrip(a, in, adapters.AlwaysCopy())
	if err != nil {
		return fmt.Errorf("RoundTrip of %s with AlwaysCopy: %w", in, err)
	}
	if err := sameElements(in, want, back); err != nil {
		return fmt.Errorf("with AlwaysCopy: %w", err)
	}
	if err := independent(in, back); err != nil {
		return fmt.Errorf("with AlwaysCopy, %w", err)
	}
	return nil
}

// independent checks that a copy shares nothing with its input: no element address in common,
// and a write to the input (when it is writable) not seen through the copy.
func independent(in, back *core.Tensor) error {
	if core.MayShareMemory(in, back) {
		return fmt.Errorf("the result %s shares memory with the input %s", back, in)
	}
	if !in.ReadOnly() && in.Len() > 0 {
		if seen, err := visible(in, back, 0); err != nil || seen {
			return fmt.Errorf("a write to input %s showed through the result %s (err %v)", in, back, err)
		}
	}
	return nil
}

func checkReadOnly(a Adapter, s spec) error {
	c := s.build()
	defer c.Tensor.Release()
	in := c.Tensor
	if !in.ReadOnly() {
		return nil
	}
	for _, o := range []struct {
		name string
		opts []adapters.Option
	}{{"default options", nil}, {"ZeroCopyOnly", []adapters.Option{adapters.ZeroCopyOnly()}}} {
		back, err := roundTrip(a, in, o.opts...)
		if err != nil {
			continue // refusals are judged by the zero-copy check
		}
		if core.MayShareMemory(in, back) && !back.ReadOnly() {
			return fmt.Errorf("with %s, read-only input %s came back writable and sharing its memory: %s", o.name, in, back)
		}
	}
	return nil
}

func checkReportCopy(a Adapter, s spec) error {
	c := s.build()
	defer c.Tensor.Release()
	in := c.Tensor
	share := a.zeroCopy(in)
	for _, o := range []struct {
		name   string
		policy adapters.Option
		copied bool // what must be reported
	}{{"default options", nil, !share}, {"AlwaysCopy", adapters.AlwaysCopy(), true}} {
		copied := !o.copied // start from the wrong answer, to catch an adapter that never reports
		back, err := roundTrip(a, in, o.policy, adapters.ReportCopy(&copied))
		if err != nil {
			return fmt.Errorf("RoundTrip of %s with %s and ReportCopy: %w", in, o.name, err)
		}
		if copied != o.copied {
			return fmt.Errorf("with %s ReportCopy said copied=%v for %s (Shareable: %v)", o.name, copied, in, share)
		}
		if in.Len() > 0 && core.MayShareMemory(in, back) == copied {
			return fmt.Errorf("with %s ReportCopy said copied=%v, but sharing memory with the result %s is %v", o.name, copied, back, core.MayShareMemory(in, back))
		}
	}
	if share {
		copied := true
		if _, err := roundTrip(a, in, adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied)); err == nil && copied {
			return fmt.Errorf("with ZeroCopyOnly ReportCopy said copied=true for %s", in)
		}
	}
	return nil
}

// Timing of the lifetime check. Cleanups run on the runtime's cleanup goroutine after the
// collection that finds their object unreachable, and a chain of them (a value attached to a
// tensor attached to another value) needs one collection per link, so the check collects
// garbage in a loop rather than once.
const (
	// lifetimeTimeout bounds the wait for the release; generous, for -race and loaded machines.
	lifetimeTimeout = 10 * time.Second
	// pollInterval is the pause between collections, for the cleanup goroutine to run.
	pollInterval = 2 * time.Millisecond
	// reachablePasses is how many collections a state must survive: no release while the
	// result is reachable, and still exactly one release some collections after the first.
	reachablePasses = 5
)

// eventually collects garbage and polls cond until it holds or the timeout passes.
func eventually(timeout time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(timeout); ; {
		runtime.GC()
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollInterval)
	}
}

// checkLifetime asserts on the case's own release function, which the kit owns and which
// counts its calls: it must not have run while the result that shares the memory is reachable,
// and once the result is dropped it must run exactly once. Counting this case's calls, rather
// than reading the process-wide core.LiveForeign, makes the verdict independent of garbage that
// earlier checks and tests leave behind.
//
// core.LiveForeign is checked too, in a form garbage cannot break: after the release, the count
// must come back to at most a baseline taken after it had settled (leakcheck.Settle: several
// consecutive collections without a change). That catches an adapter that leaks foreign memory
// of its own making (a mapping, a wrap around an ecosystem buffer), which the case's counter
// cannot see; other tests' late cleanups can only lower the count, never raise it.
func checkLifetime(a Adapter, s spec) error {
	base := leakcheck.Settle()
	releases, err := lifetimeRoundTrip(a, s)
	if err != nil {
		return err
	}
	if !eventually(lifetimeTimeout, func() bool { return releases.Load() != 0 }) {
		return fmt.Errorf("the foreign memory was never released within %v after the input was released and the result dropped", lifetimeTimeout)
	}
	for i := 0; i < reachablePasses; i++ {
		runtime.GC()
		time.Sleep(pollInterval)
	}
	if n := releases.Load(); n != 1 {
		return fmt.Errorf("the foreign memory's release function ran %d times, want exactly once", n)
	}
	if !eventually(lifetimeTimeout, func() bool { return core.LiveForeign() <= base }) {
		return fmt.Errorf("core.LiveForeign() = %d, want at most the settled baseline %d: foreign memory leaked", core.LiveForeign(), base)
	}
	return nil
}

// lifetimeRoundTrip converts a foreign tensor, releases the input, and checks that the result
// still holds the memory. It returns the case's release counter with no reference to the
// result left, so that the caller can check that the memory is released afterwards.
func lifetimeRoundTrip(a Adapter, s spec) (*atomic.Int32, error) {
	c := s.build()
	in, releases := c.Tensor, c.releases
	c = Case{}
	want, err := contiguousBytes(in)
	if err != nil {
		return nil, err
	}
	back, err := roundTrip(a, in)
	if err != nil {
		in.Release()
		return nil, fmt.Errorf("RoundTrip of %s: %w", in, err)
	}
	shares := core.MayShareMemory(in, back)
	in.Release()
	in = nil
	early := func() error {
		if n := releases.Load(); shares && n != 0 {
			return fmt.Errorf("the foreign memory was released (%d calls) while the result %s, which shares it, was reachable", n, back)
		}
		return nil
	}
	for i := 0; i < reachablePasses; i++ {
		runtime.GC()
		time.Sleep(pollInterval)
		if err := early(); err != nil {
			return nil, err
		}
	}
	got, err := contiguousBytes(back)
	if err != nil {
		return nil, fmt.Errorf("reading the result after releasing the input: %w", err)
	}
	if !bytes.Equal(got, want) {
		return nil, fmt.Errorf("after releasing the input and collecting garbage the result reads % x, want % x", got, want)
	}
	if err := early(); err != nil {
		return nil, err
	}
	runtime.KeepAlive(back)
	return releases, nil
}

// onlyHolderRounds is how many times checkOnlyHolder converts each of its inputs. With
// collections running back to back, an adapter that lets go of its input for longer than a
// collection cycle before it is done with the memory has it unmapped under it within these
// rounds (seen on 2 processors); a shorter lapse, such as a copy of these inputs, is left to
// checkConcurrentRelease.
const onlyHolderRounds = 30

// onlyHolderShape is a shape of the given rank with about 128 Ki elements: big enough that a
// copy takes long enough for collections to run during it.
func onlyHolderShape(ndim int) []int64 {
	switch ndim {
	case 0:
		return nil
	case 1:
		return []int64{1 << 17}
	case 2:
		return []int64{362, 362}
	}
	shape := []int64{64, 64}
	for len(shape) < ndim {
		shape = append(shape, 1)
	}
	shape[2] = 32
	return shape
}

// checkOnlyHolder converts inputs that are the only holders of their memory, memory that is
// unmapped when released (adapters/adaptertest/foreignmem), while collections run throughout: an adapter
// that reads or writes the memory after its last use of the *core.Tensor, without holding it
// (core.Hold), faults. The results must still read the right values afterwards.
func checkOnlyHolder(a Adapter) error {
	stop := foreignmem.Collecting()
	defer stop()
	return eachOnlyHolderInput(a, func(layout string, in *core.Tensor, want []byte) error {
		for range onlyHolderRounds {
			back, err := roundTrip(a, twin(in)) // nothing else holds the twin
			if err != nil {
				return fmt.Errorf("RoundTrip of the only holder of %s memory (%s): %w", layout, in, err)
			}
			if err := sameElements(in, want, back); err != nil {
				return fmt.Errorf("only holder, %s: %w", layout, err)
			}
		}
		return nil
	})
}

// eachOnlyHolderInput calls f with an input of onlyHolderShape in each layout that the
// adapter's rank allows, and its elements' C-order bytes; the input is released after f.
func eachOnlyHolderInput(a Adapter, f func(layout string, in *core.Tensor, want []byte) error) error {
	ndim := max(a.MinNdim, min(2, a.maxNdim()))
	for _, layout := range []string{layoutC, layoutTranspose, layoutNegative} {
		if (ndim < 2 && layout == layoutTranspose) || (ndim == 0 && layout != layoutC) {
			continue
		}
		c := spec{dtype: a.DTypes[0], shape: onlyHolderShape(ndim), layout: layout}.build()
		want, err := contiguousBytes(c.Tensor)
		if err == nil {
			err = f(layout, c.Tensor, want)
		}
		c.Tensor.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// checkConcurrentRelease converts inputs that are the only holders of memory unmapped when
// released (adapters/adaptertest/foreignmem) while another goroutine releases them, after a delay that
// grows from one round to the next (0 to about a millisecond), so that the release lands at
// every point of the conversion. An adapter that reads or writes the memory without holding it
// (core.Hold) for the whole time faults; one that holds it gives the right values, or an error
// wrapping core.ErrReleased when the release came first. The collections of the only-holder
// check find an adapter's lapse only where it lasts longer than a collection cycle (which
// takes milliseconds); an explicit Release frees the memory at once.
func checkConcurrentRelease(a Adapter) error {
	return eachOnlyHolderInput(a, func(layout string, orig *core.Tensor, want []byte) error {
		for i := range concurrentReleaseRounds {
			in := twin(orig)
			delay := time.Duration(i) * concurrentReleaseStep
			var started atomic.Bool
			done := make(chan struct{})
			go func() {
				defer close(done)
				for !started.Load() {
					runtime.Gosched()
				}
				for t0 := time.Now(); time.Since(t0) < delay; {
					// spin: a sleep this short would last a scheduler tick
				}
				in.Release()
			}()
			started.Store(true)
			back, err := roundTrip(a, in)
			<-done
			switch {
			case errors.Is(err, core.ErrReleased):
				continue
			case err != nil:
				return fmt.Errorf("RoundTrip of %s memory (%s) released by another goroutine after %v: %w", layout, orig, delay, err)
			}
			if err := sameElements(orig, want, back); err != nil {
				return fmt.Errorf("input released by another goroutine after %v, %s: %w", delay, layout, err)
			}
		}
		return nil
	})
}

// concurrentReleaseRounds is how many times checkConcurrentRelease converts each of its inputs,
// with a release concurrentReleaseStep later in each round than in the one before.
const (
	concurrentReleaseRounds = 40
	concurrentReleaseStep   = 25 * time.Microsecond
)

func (a Adapter) maxNdim() int {
	if a.MaxNdim == 0 {
		return 5
	}
	return a.MaxNdim
}

// twin returns a copy of t over memory unmapped on release, or panics (the kit's own inputs
// always have one).
func twin(t *core.Tensor) *core.Tensor {
	m, err := foreignmem.Twin(t)
	if err != nil {
		panic(fmt.Sprintf("adaptertest: %v", err))
	}
	return m.Tensor
}

// castShape is the shape of the cast check's inputs: 2-D, which every fixed-type target takes
// as a matrix or reshapes.
var castShape = []int64{2, 3}

// checkCast checks the cast rule of one source dtype on one fixed-type conversion.
func checkCast(a Adapter, c Cast, from core.DLDataType) error {
	if c.To == from {
		return nil
	}
	in, err := filled(from, castShape)
	if err != nil {
		return err
	}
	defer in.Release()
	want, err := memory.Cast(in, c.To)
	if err != nil {
		return fmt.Errorf("memory.Cast of %s to %s: %w", from, c.To, err)
	}
	wantBytes, err := contiguousBytes(want)
	if err != nil {
		return err
	}
	cast := func(opts ...adapters.Option) (copied bool, err error) {
		copied = false
		back, err := c.RoundTrip(in, append(opts, adapters.ReportCopy(&copied))...)
		if err != nil {
			return copied, err
		}
		defer back.Release()
		if err := sameElements(want, wantBytes, back); err != nil {
			return copied, fmt.Errorf("%s → %s: %w", from, c.To, err)
		}
		if !copied {
			return copied, fmt.Errorf("%s → %s: a cast is a copy, and ReportCopy said copied=false", from, c.To)
		}
		return copied, nil
	}
	if adapters.Preserves(from, c.To) {
		if _, err := cast(); err != nil {
			return fmt.Errorf("%s → %s keeps every value and must cast by default: %w", from, c.To, err)
		}
		return nil
	}
	copied, err := cast()
	switch {
	case err == nil:
		return fmt.Errorf("%s → %s can change values, and the conversion cast without adapters.AllowCast()", from, c.To)
	case !errors.Is(err, adapters.ErrCast):
		return fmt.Errorf("%s → %s without adapters.AllowCast(): the error does not wrap adapters.ErrCast: %w", from, c.To, err)
	case copied:
		return fmt.Errorf("%s → %s failed, and ReportCopy's flag changed", from, c.To)
	}
	if err := a.message(err); err != nil {
		return err
	}
	msg := err.Error()
	for _, part := range []string{from.String(), c.To.String(), "adapters.AllowCast()"} {
		if !strings.Contains(msg, part) {
			return fmt.Errorf("%s → %s: the error does not name %s: %q", from, c.To, part, msg)
		}
	}
	if _, err := cast(adapters.AllowCast()); err != nil {
		return fmt.Errorf("%s → %s with adapters.AllowCast(): %w", from, c.To, err)
	}
	return nil
}

// checkReleased converts a released tensor: the adapter refuses it with an error wrapping
// core.ErrReleased whose message leads with the cause.
func checkReleased(a Adapter) error {
	c := specs(a.DTypes[:1], a.MinNdim, a.MaxNdim)[0].build()
	c.Tensor.Release()
	back, err := roundTrip(a, c.Tensor)
	if err == nil {
		back.Release()
		return fmt.Errorf("RoundTrip of a released tensor succeeded")
	}
	if !errors.Is(err, core.ErrReleased) {
		return fmt.Errorf("RoundTrip of a released tensor: %w, which does not wrap core.ErrReleased", err)
	}
	return a.message(err)
}
