package adaptertest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var allDTypes = []core.DLDataType{
	core.Bool, core.Int8, core.Int16, core.Int32, core.Int64,
	core.Uint8, core.Uint16, core.Uint32, core.Uint64,
	core.Float16, core.BFloat16, core.Float32, core.Float64, core.Complex64, core.Complex128,
}

// identity is the simplest honest adapter: the "ecosystem value" is a view of the tensor when
// it is C-contiguous, and a C-order copy otherwise.
var identity = viewOrCopy(func(t *core.Tensor) bool { return t.IsContiguous() }, "not C-contiguous")

// viewOrCopy is a round trip that shares t (a view) where shareable says it can, and otherwise
// copies it into C order, as the options decide; it reports only once it has succeeded.
func viewOrCopy(shareable func(*core.Tensor) bool, why string) func(*core.Tensor, ...adapters.Option) (*core.Tensor, error) {
	return func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
		o := adapters.Apply(opts...)
		copy, err := o.Choose(shareable(t), why)
		if err != nil {
			return nil, err
		}
		var back *core.Tensor
		if copy {
			back, err = memory.Contiguous(t)
		} else {
			back, err = t.View()
		}
		if err != nil {
			return nil, err
		}
		o.Report(copy)
		return back, nil
	}
}

func identityAdapter() Adapter {
	return Adapter{
		Name:      "identity",
		DTypes:    allDTypes,
		RoundTrip: identity,
		Shareable: contiguous,
	}
}

// anyLayout shares memory whatever the strides.
var anyLayout = viewOrCopy(func(*core.Tensor) bool { return true }, "")

func TestIdentityConforms(t *testing.T) {
	Run(t, identityAdapter())
}

func TestAnyLayoutConforms(t *testing.T) {
	Run(t, Adapter{
		Name:      "any-layout",
		DTypes:    []core.DLDataType{core.Float64, core.Bool, core.Complex64},
		RoundTrip: anyLayout,
		Shareable: always,
	})
}

func TestCopyOnlyConforms(t *testing.T) {
	Run(t, Adapter{
		Name:    "copy-only",
		DTypes:  []core.DLDataType{core.Int32, core.Float16},
		MinNdim: 1, MaxNdim: 3,
		RoundTrip: func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
			o := adapters.Apply(opts...)
			if _, err := o.Choose(false, "this adapter always copies"); err != nil {
				return nil, err
			}
			back, err := memory.Clone(t, memory.FortranOrder)
			if err != nil {
				return nil, err
			}
			o.Report(true)
			return back, nil
		},
	})
}

// aliasUnchecked returns a tensor over t's memory that holds nothing and drops every flag: it
// neither keeps foreign memory alive nor keeps read-only memory read-only.
func aliasUnchecked(t *core.Tensor) (*core.Tensor, error) {
	return core.WrapKeep(core.Desc{Data: t.Data(), Device: t.Device(), DType: t.DType(),
		Shape: t.Shape(), Strides: t.Strides()}, nil)
}

func TestKitCatchesBrokenAdapters(t *testing.T) {
	few := []core.DLDataType{core.Float32, core.Bool}
	tests := []struct {
		name  string
		a     Adapter
		check string // every failure expected comes from this check
	}{
		{"false zero-copy claim", Adapter{DTypes: few, RoundTrip: identity,
			Shareable: always}, "zero-copy"},
		{"undeclared sharing", Adapter{DTypes: few, RoundTrip: anyLayout,
			Shareable: contiguous}, "zero-copy"},
		{"wrong values", Adapter{DTypes: few, Shareable: contiguous,
			RoundTrip: func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
				back, err := identity(t, opts...)
				if err == nil && back.Len() > 1 && !back.ReadOnly() && back.Foreign() {
					flipFirst(back, 1) // corrupts foreign memory: seen by every check
				}
				return back, err
			}}, "values"},
		{"read-only comes back writable", Adapter{DTypes: few, Shareable: contiguous,
			RoundTrip: func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
				back, err := identity(t, opts...)
				if err != nil || back.Flags()&core.FlagIsCopied != 0 {
					return back, err
				}
				return aliasUnchecked(t)
			}}, "read-only"},
		{"copy reported as shared", Adapter{DTypes: few, Shareable: contiguous,
			RoundTrip: func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
				back, err := identity(t, opts...)
				adapters.Apply(opts...).Report(false)
				return back, err
			}}, "report-copy"},
		{"chain that does not hold foreign memory", Adapter{DTypes: few, Shareable: contiguous,
			RoundTrip: func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
				back, err := identity(t, opts...)
				if err != nil || back.Flags()&core.FlagIsCopied != 0 || !t.Foreign() {
					return back, err
				}
				loose, err := aliasUnchecked(t)
				if err != nil {
					return nil, err
				}
				return chainedView(loose, 3) // the chain holds a tensor that holds nothing
			}}, "lifetime"},
		{"view that does not hold foreign memory", Adapter{DTypes: few, Shareable: contiguous,
			RoundTrip: func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
				back, err := identity(t, opts...)
				if err != nil || back.Flags()&core.FlagIsCopied != 0 || !t.Foreign() {
					return back, err
				}
				return aliasUnchecked(t)
			}}, "lifetime"},
		{"panics", Adapter{DTypes: few, RoundTrip: func(*core.Tensor, ...adapters.Option) (*core.Tensor, error) {
			panic("boom")
		}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fails := runAll(tt.a)
			require.NotEmpty(t, fails, "the kit passed a broken adapter")
			found := false
			for name, err := range fails {
				require.Error(t, err)
				if tt.check == "" || strings.HasSuffix(name, "/"+tt.check) {
					found = true
				}
			}
			assert.True(t, found, "no failure from the %q check among %v", tt.check, fails)
		})
	}
}

func TestCases(t *testing.T) {
	cs := Cases([]core.DLDataType{core.Float32}, 0, 0)
	names := map[string]bool{}
	layouts := map[string]bool{}
	for _, c := range cs {
		require.NotNil(t, c.Tensor, c.Name)
		assert.False(t, names[c.Name], "duplicate case %s", c.Name)
		names[c.Name] = true
		layouts[c.Name[strings.LastIndex(c.Name, "/")+1:]] = true
		assert.LessOrEqual(t, c.Tensor.Ndim(), 5)
	}
	for _, l := range []string{layoutC, layoutFortran, layoutOffset, layoutStep2, layoutNegative,
		layoutBroadcast, layoutTranspose, layoutPermuted, layoutReadOnly, layoutForeign} {
		assert.True(t, layouts[l], "no %s case", l)
	}
	assert.True(t, names["float32/0d[]/c"])
	assert.True(t, names["float32/2d[3 0]/c"])
	assert.True(t, names["float32/5d[2 2 1 3 2]/permuted"])

	// the layouts are what they say
	byName := map[string]*core.Tensor{}
	for _, c := range cs {
		byName[c.Name] = c.Tensor
	}
	assert.True(t, byName["float32/2d[3 4]/fortran"].IsFortranContiguous())
	assert.False(t, byName["float32/2d[3 4]/fortran"].IsContiguous())
	assert.Equal(t, []int64{-4, -1}, byName["float32/2d[3 4]/negative"].Strides())
	assert.Equal(t, []int64{0, 1}, byName["float32/2d[3 4]/broadcast"].Strides())
	assert.True(t, byName["float32/2d[3 4]/broadcast"].ReadOnly())
	assert.Equal(t, []int64{8, 2}, byName["float32/2d[3 4]/step2"].Strides())
	assert.True(t, byName["float32/2d[3 4]/readonly"].ReadOnly())
	assert.True(t, byName["float32/2d[3 4]/foreign"].Foreign())
	assert.Equal(t, []int64{1, 3}, byName["float32/2d[3 4]/transposed"].Strides())

	// ranks are filtered
	for _, c := range Cases([]core.DLDataType{core.Int8, core.Uint64}, 2, 3) {
		assert.Contains(t, []int{2, 3}, c.Tensor.Ndim(), c.Name)
	}
}

func TestCaseValuesDistinct(t *testing.T) {
	for _, dt := range allDTypes {
		if dt == core.Bool {
			continue
		}
		c := spec{dtype: dt, shape: []int64{2, 2, 1, 3, 2}, layout: layoutStep2}.build()
		b, err := contiguousBytes(c.Tensor)
		require.NoError(t, err)
		size := dt.Size()
		seen := map[string]bool{}
		for k := 0; k*size < len(b); k++ {
			e := string(b[k*size : (k+1)*size])
			assert.False(t, seen[e], "%s: element %d repeats", dt, k)
			seen[e] = true
		}
	}
}

// chainedView returns a view of t's memory held through depth Go values, each attached to a
// tensor over the memory and kept by the next: releasing the memory after the view is dropped
// takes one collection (and one cleanup run) per link.
func chainedView(t *core.Tensor, depth int) (*core.Tensor, error) {
	d := core.Desc{Data: t.Data(), Device: t.Device(), DType: t.DType(), Shape: t.Shape(), Strides: t.Strides()}
	cur := t
	for i := 0; i < depth; i++ {
		link := new([16]byte) // big enough not to be a tiny-allocator object
		if err := core.Attach(link, cur); err != nil {
			return nil, err
		}
		next, err := core.WrapKeep(d, link)
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// chained shares C-contiguous memory through a chain of holders.
func chained(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
	back, err := identity(t, opts...)
	if err != nil || back.Flags()&core.FlagIsCopied != 0 || !t.Foreign() || t.ReadOnly() {
		return back, err
	}
	return chainedView(t, 4)
}

// TestLifetimeWaitsForChainedCleanups: memory held through a chain of values is released only
// after several collections; the kit must wait for it rather than call it a leak.
func TestLifetimeWaitsForChainedCleanups(t *testing.T) {
	Run(t, Adapter{
		Name:      "chained",
		DTypes:    []core.DLDataType{core.Float32, core.Int8},
		RoundTrip: chained,
		Shareable: contiguous,
	})
}

// TestLifetimeIgnoresOtherGarbage: foreign memory that other code dropped earlier, whose
// (chained) cleanups run while the kit works, lowers core.LiveForeign under the kit's feet; the
// verdict must not change.
func TestLifetimeIgnoresOtherGarbage(t *testing.T) {
	released := 0
	var mu sync.Mutex
	for i := 0; i < 200; i++ {
		buf := make([]float32, 8)
		x, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.CPUDevice,
			DType: core.Float32, Shape: []int64{8}}, func() { mu.Lock(); released++; mu.Unlock() })
		require.NoError(t, err)
		_, err = chainedView(x, i%8) // dropped at once: garbage whose release takes i%8 collections
		require.NoError(t, err)
	}
	Run(t, Adapter{
		Name:      "identity-among-garbage",
		DTypes:    []core.DLDataType{core.Float64, core.Uint16},
		RoundTrip: identity,
		Shareable: contiguous,
	})
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 200, released, "the garbage was all released by the end")
}

// contiguous is a zero-copy predicate for adapters that share C-contiguous tensors only.
func contiguous(t *core.Tensor) (bool, string) { return t.IsContiguous(), "not C-contiguous" }

// always is the zero-copy predicate of an adapter that claims to share everything.
func always(*core.Tensor) (bool, string) { return true, "" }

// unheld is an adapter that copies its input without holding it: it takes a tensor over the
// input's memory that holds nothing, then copies from it.
func unheld(t *core.Tensor, _ ...adapters.Option) (*core.Tensor, error) {
	loose, err := aliasUnchecked(t)
	if err != nil {
		return nil, err
	}
	return memory.Contiguous(loose)
}

// TestKitCatchesUnheldReads: an adapter that reads its input's memory without holding it faults
// when another goroutine releases the input during the copy. The fault kills the process, so the
// check runs in a child process of this test binary.
func TestKitCatchesUnheldReads(t *testing.T) {
	if os.Getenv("ADAPTERTEST_UNHELD") == "1" {
		// the release must land during a copy: on a machine busy with other work the releasing
		// goroutine may miss every window of one pass, so the child tries a few passes
		var err error
		for range 5 {
			err = checkConcurrentRelease(Adapter{DTypes: []core.DLDataType{core.Float32}, RoundTrip: unheld})
		}
		fmt.Println("no fault:", err)
		return
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("foreignmem unmaps released memory on unix only")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKitCatchesUnheldReads$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ADAPTERTEST_UNHELD=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the kit passed an adapter that reads memory it does not hold:\n%s", out)
	assert.Contains(t, string(out), "unexpected fault address")
}

// castTo is a fixed-type conversion: an honest one checks the cast rule (CheckCast) before it
// casts; a guessing one casts whatever it is given.
func castTo(to core.DLDataType, honest bool) func(*core.Tensor, ...adapters.Option) (*core.Tensor, error) {
	return func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
		o := adapters.Apply(opts...)
		if err := o.CheckCast(t.DType(), to, "the target"); err != nil && honest {
			return nil, err
		}
		out, err := memory.Cast(t, to)
		if err != nil {
			return nil, err
		}
		o.Report(true)
		return out, nil
	}
}

func TestCastCheck(t *testing.T) {
	for _, to := range []core.DLDataType{core.Float64, core.Float32, core.Int32, core.Complex128} {
		honest := Cast{To: to, RoundTrip: castTo(to, true)}
		for _, from := range CastDTypes {
			require.NoError(t, checkCast(Adapter{}, honest, from), "%s → %s", from, to)
			err := checkCast(Adapter{}, Cast{To: to, RoundTrip: castTo(to, false)}, from)
			if adapters.Preserves(from, to) {
				assert.NoError(t, err, "%s → %s", from, to)
			} else {
				assert.ErrorContains(t, err, "cast without adapters.AllowCast()", "%s → %s", from, to)
			}
		}
	}
	// an adapter that refuses even the casts that keep every value
	strict := Cast{To: core.Float64, RoundTrip: func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
		if t.DType() != core.Float64 {
			return nil, fmt.Errorf("%w: only float64", adapters.ErrUnsupported)
		}
		return t.View()
	}}
	assert.ErrorContains(t, checkCast(Adapter{}, strict, core.Float32), "must cast by default")
	assert.ErrorContains(t, checkCast(Adapter{}, strict, core.Complex128), "does not wrap adapters.ErrCast")
	// one that casts without reporting the copy
	silent := Cast{To: core.Float64, RoundTrip: func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
		return memory.Cast(t, core.Float64)
	}}
	assert.ErrorContains(t, checkCast(Adapter{}, silent, core.Float32), "ReportCopy said copied=false")
}

func TestKitHoldsMessagesToTheRule(t *testing.T) {
	errMine := fmt.Errorf("mine: malformed")
	a := Adapter{Name: "chatty", DTypes: []core.DLDataType{core.Float32}, Sentinels: []error{errMine},
		RoundTrip: func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
			if t.Released() {
				return nil, fmt.Errorf("%w: mine: input: %w", adapters.ErrUnsupported, core.ErrReleased)
			}
			return t.View()
		}}
	assert.ErrorContains(t, checkReleased(a), "leads with the generic")
	a.RoundTrip = func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
		return nil, fmt.Errorf("mine: input: %w", core.ErrReleased)
	}
	assert.NoError(t, checkReleased(a))
	a.RoundTrip = func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
		return nil, fmt.Errorf("%w: mine: input: %w", errMine, core.ErrReleased)
	}
	assert.ErrorContains(t, checkReleased(a), "leads with the generic")
	a.RoundTrip = func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
		return nil, fmt.Errorf("gonumx: input: gonumx: %w", core.ErrReleased)
	}
	assert.ErrorContains(t, checkReleased(a), `"gonumx:" appears twice`)
	a.RoundTrip = func(*core.Tensor, ...adapters.Option) (*core.Tensor, error) { return core.New(core.Float32, 1) }
	assert.ErrorContains(t, checkReleased(a), "succeeded")
}
