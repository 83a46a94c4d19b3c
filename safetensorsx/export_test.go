package safetensorsx

import "github.com/dlpack-go/dlpack/internal/mmap"

// LiveMappings and Unmaps expose the mapping counters to the tests.
func LiveMappings() int64 { return mmap.Live() }

// Unmaps is how many mappings were undone since the process started.
func Unmaps() int64 { return mmap.Unmaps() }
