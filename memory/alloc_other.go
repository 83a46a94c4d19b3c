//go:build !linux

package memory

import "unsafe"

// canMap says whether NewUninit can map memory here: not outside Linux, where it uses Go memory.
const canMap = false

func mapBlock(size int64, huge bool) (unsafe.Pointer, bool) { return nil, false }

func unmapBlock(b block) {}

// systemMemory is unknown here: allocations are bounded by maxAlloc alone.
func systemMemory() int64 { return 0 }
