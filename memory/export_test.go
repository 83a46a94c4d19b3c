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
