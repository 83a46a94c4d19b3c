package foreignmem

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Collect forces garbage collections on another goroutine until the test (or benchmark) ends,
// so that cleanups of unreachable holders run while the code under test works. It returns a
// function that stops the collections early; the test's cleanup stops them anyway.
func Collect(tb testing.TB) (stop func()) {
	stop = Collecting()
	tb.Cleanup(stop)
	return stop
}

// Collecting is Collect without a test: the caller must call stop.
func Collecting() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
				runtime.GC()
				runtime.Gosched()
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

// ReleasedOnce reports whether each counter shows exactly one release.
func ReleasedOnce(counters ...*atomic.Int32) bool {
	for _, c := range counters {
		if c.Load() != 1 {
			return false
		}
	}
	return true
}
