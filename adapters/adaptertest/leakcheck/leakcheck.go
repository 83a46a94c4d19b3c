// Package leakcheck helps tests account for foreign memory (core.LiveForeign) without being
// fooled by garbage that earlier tests left behind: such garbage is released by cleanups that
// run after a collection, at a moment no test controls, and would move a baseline taken too early.
package leakcheck

import (
	"runtime"
	"testing"
	"time"

	"github.com/dlpack-go/dlpack/core"
)

// Settle collects garbage until core.LiveForeign has stayed the same over several consecutive
// collections (giving the cleanup goroutine time to run after each), and returns that count: a
// baseline that pending cleanups of earlier tests can no longer move. It gives up after about
// two seconds and returns the last count.
func Settle() int64 {
	const stableRounds = 4
	prev, stable := int64(-1), 0
	for i := 0; i < 400 && stable < stableRounds; i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
		n := core.LiveForeign()
		if n == prev {
			stable++
		} else {
			stable = 0
		}
		prev = n
	}
	return prev
}

// Timeout bounds every wait of this package: generous, for the race detector on a loaded
// machine.
const Timeout = 10 * time.Second

// Check is the leak check of one test: it takes a settled baseline of core.LiveForeign now and,
// when the test ends (t.Cleanup), collects garbage until the count is back to at most that
// baseline, failing the test with the number of blocks still held after Timeout. Call it first
// in a test that makes foreign memory: the memory the test made must all be released by its
// end, whether by Release or by collection of its holders.
func Check(tb testing.TB) {
	tb.Helper()
	base := Settle()
	tb.Cleanup(func() {
		if !Until(func() bool { return core.LiveForeign() <= base }) {
			tb.Errorf("leakcheck: %d blocks of foreign memory still held %v after the test (baseline %d)",
				core.LiveForeign()-base, Timeout, base)
		}
	})
}

// Until collects garbage, giving cleanups time to run after each collection, until cond holds,
// and reports whether it did within Timeout. Tests use it to wait for a release that follows
// the collection of a holder.
func Until(cond func() bool) bool {
	for deadline := time.Now().Add(Timeout); ; {
		runtime.GC()
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Seq returns 1, 2, ..., n as float64s: the distinct, exactly representable values tests fill
// tensors with.
func Seq(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i + 1)
	}
	return s
}
