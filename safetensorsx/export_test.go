package safetensorsx

// LiveMappings and Unmaps expose the mapping counters to the tests.
func LiveMappings() int64 { return liveMappings.Load() }

// Unmaps is how many mappings were undone since the process started.
func Unmaps() int64 { return unmaps.Load() }
