// Package leakcheck helps tests account for foreign memory (core.LiveForeign) without being
// fooled by garbage that earlier tests left behind: such garbage is released by cleanups that
// run after a collection, at a moment no test controls, and would move a baseline taken too early.
package leakcheck

import (
	"runtime"
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
