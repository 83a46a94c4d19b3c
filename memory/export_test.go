package memory

// PoolBytes reports the bytes of mapped blocks in NewUninit's cache and under tensors, for
// tests.
func PoolBytes() (cached, live int64) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	return pool.cached, pool.live
}

// SystemMemory is systemMemory, for tests.
var SystemMemory = systemMemory

// SlowAt and SlowSetAt are At and SetAt through Copy (their only path up to 0.8.0), for the
// benchmark beside the fast path.
var SlowAt, SlowSetAt = slowAt, slowSetAt
