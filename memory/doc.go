// Package memory allocates the memory of new tensors, one floor above package core and below
// the adapters, as arrow-go's memory package sits below its arrays: core describes, validates
// and shares memory; this package decides where new memory comes from.
//
// # What it holds
//
//   - NewUninit: a C-order tensor whose elements the caller overwrites whole. Small tensors get
//     zeroed Go memory (core.New); large ones get anonymous memory mapped from the operating
//     system, unzeroed, with transparent huge pages, which Go neither zeroes nor counts in its
//     heap.
//   - NewUninitParts: one such block as many tensors (a file's weights), made in a few
//     allocations for them all, sharing one owner (core.WrapParts).
//   - AllocSize: what a new tensor would take, or why this process could never have it
//     (core.ErrTooLarge, from the machine's memory and swap and its control group's limit).
//
// # Allocation policy
//
// Allocation says which tensors are mapped (from MappedMin up), whether with huge pages, and how
// many bytes of released blocks stay cached (CacheBytes) and for how long (CacheIdle);
// SetAllocation changes it for the process, DefaultAllocation is the setting in force until then.
// A mapped block is foreign memory in every respect (core.LiveForeign counts it) and goes back
// to the cache exactly once, when its last holder lets go; a block idle for CacheIdle is
// unmapped by a timer this package runs. Because the collector does not see mapped memory, the
// allocator runs a collection when what is mapped under tensors has doubled since the last one,
// so that tensors dropped without Release give their blocks back. Outside Linux everything is Go
// memory.
//
// Importing this package also tells core.New the machine's limit (core.SetMemoryLimit), so that
// a tensor larger than this process may ever have fails with core.ErrTooLarge instead of ending
// the process.
package memory
