package ggufx

// LiveMappings and Unmaps expose the mapping counters to the tests.
func LiveMappings() int64 { return liveMappings.Load() }

// Unmaps is how many mappings have been undone.
func Unmaps() int64 { return unmaps.Load() }
