//go:build unix

package memory_test

import (
	"io"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/foreignmem"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/stretchr/testify/require"
)

// TestOperationsHoldTheirOperands runs every operation of this package with an operand that is
// the only holder of memory unmapped on release, while collections run throughout: an operation
// that let go of its operand before it was done with the memory would fault (or corrupt memory
// that the runtime reused). Each operand plays each role it can: source and destination.
func TestOperationsHoldTheirOperands(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 1))
	leakcheck.Check(t)
	const n = 384 // 384×384 float64: 1.1 MiB, long enough for collections to run during a copy
	// rounds of each operation: with collections running back to back, an operation that does
	// not hold its operand had it unmapped under it in every run of this test seen so far
	const rounds = 100
	src := randomTensor(t, r, core.Float64, n, n)
	tr, err := src.Transpose()
	require.NoError(t, err)
	rev, err := src.Reverse(0)
	require.NoError(t, err)
	var releases []*atomic.Int32
	// mk returns a twin of x over memory unmapped on release; the twin is its only holder
	mk := func(x *core.Tensor) *core.Tensor {
		m, err := foreignmem.Twin(x)
		require.NoError(t, err)
		releases = append(releases, m.Releases)
		return m.Tensor
	}
	dst := func() *core.Tensor { d, err := core.New(core.Float64, n, n); require.NoError(t, err); return d }

	foreignmem.Collect(t)
	ops := []struct {
		name string
		run  func() error
	}{
		{"Copy source", func() error { return memory.Copy(dst(), mk(tr)) }},
		{"Copy destination", func() error { return memory.Copy(mk(dst()), tr) }},
		{"Copy destination reversed", func() error { return memory.Copy(mk(rev), src) }},
		{"Clone", func() error { _, err := memory.Clone(mk(tr), memory.COrder); return err }},
		{"Clone Fortran", func() error { _, err := memory.Clone(mk(src), memory.FortranOrder); return err }},
		{"Contiguous", func() error { _, err := memory.Contiguous(mk(rev)); return err }},
		{"Cast", func() error { _, err := memory.Cast(mk(tr), core.Float32); return err }},
		{"Cast float16", func() error { _, err := memory.Cast(mk(src), core.Float16); return err }},
		{"CastOrder", func() error { _, err := memory.CastOrder(mk(src), core.Int32, memory.FortranOrder); return err }},
		{"At", func() error { _, err := memory.At(mk(src), n-1, n-1); return err }},
		{"SetAt", func() error { return memory.SetAt(mk(dst()), 2, n-1, 0) }},
		{"WriteTo gathered", func() error { _, err := memory.WriteTo(io.Discard, mk(tr)); return err }},
		{"WriteTo contiguous", func() error { _, err := memory.WriteTo(io.Discard, mk(src)); return err }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			for range rounds {
				require.NoError(t, op.run())
			}
		})
	}
	require.True(t, leakcheck.Until(func() bool { return foreignmem.ReleasedOnce(releases...) }), "an operand was never released")
}
