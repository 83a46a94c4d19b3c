package ggufx

import "github.com/dlpack-go/dlpack/internal/mmap"

// LiveMappings and Unmaps expose the mapping counters to the tests.
func LiveMappings() int64 { return mmap.Live() }

// Unmaps is how many mappings have been undone.
func Unmaps() int64 { return mmap.Unmaps() }

// CPUClock is cpuClock, for the benchmarks of package ggufx_test.
var CPUClock = cpuClock

// FreshFloats is freshFloats, for the benchmarks of package ggufx_test.
var FreshFloats = freshFloats
