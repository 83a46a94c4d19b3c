package memory

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
)

// Allocation says where NewUninit puts the memory of a new tensor. Tensors smaller than
// MappedMin get Go memory, like core.New; larger ones get memory mapped from the operating system
// (anonymous, private), which Go neither zeroes nor counts in its heap. Mapped memory is foreign
// memory in every respect: the tensor's Foreign reports true, core.LiveForeign counts each block,
// and the block is given back exactly once, when the last holder lets go (Release, or the
// collector's cleanup), never under a Hold. Given back means kept in a small cache for the next
// NewUninit of a similar size, whose pages are then already mapped in (no page faults, no
// zeroing), or unmapped when the cache is full or the block has been idle for CacheIdle.
//
// Where the operating system offers no anonymous mappings here (anything but Linux), NewUninit
// always uses Go memory.
type Allocation struct {
	// MappedMin is the size in bytes from which NewUninit maps memory; zero or negative means
	// never (NewUninit is then core.New).
	MappedMin int64
	// HugePages asks the kernel for transparent huge pages (madvise MADV_HUGEPAGE) on mapped
	// blocks of 4 MiB and more, which are then 2 MiB aligned: a 2 MiB page faults in once
	// instead of 512 times. The kernel honours it when
	// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or "always".
	HugePages bool
	// CacheBytes bounds the bytes of released blocks kept for reuse; zero keeps none (every
	// release unmaps).
	CacheBytes int64
	// CacheIdle is how long a released block stays cached without being reused before it is
	// unmapped.
	CacheIdle time.Duration
}

// DefaultAllocation is the setting in force until SetAllocation: blocks from 4 MiB (the size
// from which NumPy too asks for huge pages) are mapped, with huge pages, and up to 1 GiB of
// released blocks stay cached for two seconds.
func DefaultAllocation() Allocation {
	return Allocation{MappedMin: 4 << 20, HugePages: true, CacheBytes: 1 << 30, CacheIdle: 2 * time.Second}
}

// SetAllocation changes how NewUninit allocates from now on and returns the previous setting.
// Cached blocks beyond the new CacheBytes are unmapped now. Tensors already made keep their
// memory.
func SetAllocation(a Allocation) (previous Allocation) {
	pool.mu.Lock()
	previous = pool.cfg
	pool.cfg = a
	freed := pool.shrink(max(a.CacheBytes, 0), time.Time{})
	if pool.timer != nil { // come back after the new idle time
		pool.timer.Stop()
		pool.timer = nil
	}
	if len(pool.cache) > 0 {
		pool.timer = time.AfterFunc(a.CacheIdle, trimIdle)
	}
	pool.mu.Unlock()
	unmapAll(freed)
	return previous
}

// NewUninit allocates a C-order tensor whose elements are not initialised: the caller must
// write every element before reading any (the copy and cast kernels do, and Clone, Contiguous
// and Cast use it). Small tensors get zeroed Go memory, as from core.New; large
// ones get mapped memory that is not zeroed and that is given back when the tensor is released
// (see Allocation for the sizes and SetAllocation to choose). Release such a tensor when done
// with it: its block then goes back to the cache at once, instead of when the collector finds
// the tensor unreachable. The data is 64-byte aligned either way.
func NewUninit(dtype core.DLDataType, shape ...int64) (*core.Tensor, error) {
	return newUninit(dtype, 0, shape)
}

// NewUninitBytes is NewUninit for a writer that fills a new tensor through its bytes (a file
// reader, a decoder, a dequantizer): it returns the C-order tensor, made with flags
// (core.FlagIsCopied for a copy of a file's bytes, say; 0 for none), and its NumBytes bytes, to
// be written whole before any is read. The bytes are the tensor's memory, writable whatever
// flags say: they stay valid while t is held, so the caller fills them before it releases t or
// hands it to anyone, and then lets go of them. Memory comes from where NewUninit takes it, and
// the errors are NewUninit's.
func NewUninitBytes(dtype core.DLDataType, flags core.Flags, shape ...int64) (t *core.Tensor, b []byte, err error) {
	t, err = newUninit(dtype, flags, shape)
	if err != nil {
		return nil, nil, err
	}
	// the tensor is new, C-order and on the host: only FlagReadOnly could refuse Bytes
	if b, err = t.ReadOnlyBytes(); err != nil { // not reached
		t.Release()
		return nil, nil, err
	}
	return t, b, nil
}

// newUninit is NewUninit, the tensor made with flags.
func newUninit(dtype core.DLDataType, flags core.Flags, shape []int64) (*core.Tensor, error) {
	nbytes, err := newSize(dtype, shape)
	if err != nil {
		return nil, err
	}
	if b, ok := takeMapped(nbytes); ok {
		return core.Wrap(core.Desc{Data: b.base, Device: core.CPUDevice, DType: dtype, Shape: shape, Flags: flags}, func() { putBlock(b) })
	}
	if flags == 0 {
		return core.New(dtype, shape...)
	}
	// Go memory, zeroed and aligned as New's
	p := goAligned(max(nbytes, 1))
	return core.Wrap(core.Desc{Data: p, Device: core.CPUDevice, DType: dtype, Shape: shape, Flags: flags}, nil)
}

// takeMapped takes a mapped block of n bytes where the setting in force maps that size; ok is
// false where n gets Go memory instead (below MappedMin, no mappings here, or the system
// refused one).
func takeMapped(n int64) (block, bool) {
	pool.mu.Lock()
	cfg := pool.cfg
	pool.mu.Unlock()
	if cfg.MappedMin <= 0 || n < cfg.MappedMin || !canMap {
		return block{}, false
	}
	return takeBlock(n, cfg.HugePages && n >= hugeMin)
}

// goAligned returns n zeroed bytes of Go memory at a core.Alignment boundary, as core.New
// allocates them: the data pointers of the tensors over them keep them alive.
func goAligned(n int64) unsafe.Pointer {
	buf := make([]byte, n+core.Alignment-1)
	p := unsafe.Pointer(unsafe.SliceData(buf))
	return unsafe.Add(p, (core.Alignment-uintptr(p)%core.Alignment)%core.Alignment)
}

// AllocSize returns the bytes a new C-order tensor of dtype and shape takes, or the error
// core.New and NewUninit would return for it: a bad dtype or shape, a size past int64
// (core.ErrOverflow), or more memory and swap than this process may have (core.ErrTooLarge).
// Adapters that allocate a copy in another library's memory ask it first: Go's allocator ends
// the process when it cannot have the memory.
func AllocSize(dtype core.DLDataType, shape ...int64) (int64, error) {
	return newSize(dtype, shape)
}

// newSize is core.CompactSize for a new tensor: also refused when the machine could never give it.
func newSize(dtype core.DLDataType, shape []int64) (int64, error) {
	nbytes, err := core.CompactSize(dtype, shape...)
	if err != nil {
		return 0, err
	}
	if err := core.FitsMemory(nbytes); err != nil {
		return 0, fmt.Errorf("%w (%v of %s)", err, shape, dtype)
	}
	return nbytes, nil
}

// maxAlloc bounds what a tensor may take (core's own bound on Go allocations).
const maxAlloc = 1<<47 - core.Alignment

// machineMemory is the bytes of memory and swap this process may have (maxAlloc where the
// system does not say), read once, when first needed.
var machineMemory = sync.OnceValue(func() int64 {
	if m := systemMemory(); m > 0 && m < maxAlloc {
		return m
	}
	return maxAlloc
})

// core.New refuses what this machine could never give, once this package is in the program.
func init() { core.SetMemoryLimit(machineMemory) }

const (
	hugeMin   = 4 << 20  // the smallest block that asks for huge pages
	hugeAlign = 2 << 20  // the size and alignment of a transparent huge page
	pageAlign = 64 << 10 // the size granule of smaller blocks
	// gcStep is the least growth of mapped memory under tensors that makes NewUninit run a
	// collection (see takeBlock)
	gcStep = 256 << 20
)

// block is one mapping.
type block struct {
	base  unsafe.Pointer
	size  int64 // bytes mapped at base
	huge  bool
	freed time.Time // when it entered the cache
}

// poolState is the state of mapped allocation: the setting, the cache of released blocks, and
// the bytes handed out.
type poolState struct {
	mu         sync.Mutex
	cfg        Allocation
	cache      []block // oldest first
	cached     int64   // bytes in cache
	live       int64   // bytes of blocks under tensors
	floor      int64   // the least live has been since the last collection that takeBlock ran
	collecting bool
	timer      *time.Timer
}

// pool is the one poolState of the process.
var pool = poolState{cfg: DefaultAllocation()}

// takeBlock returns a block of at least n bytes: a cached one of a similar size (at most a
// quarter larger), or a new mapping.
func takeBlock(n int64, huge bool) (block, bool) {
	align := int64(pageAlign)
	if huge {
		align = hugeAlign
	}
	size := (n + align - 1) &^ (align - 1)
	pool.mu.Lock()
	best := -1
	for i, b := range pool.cache {
		if b.size >= size && b.size-size <= size/4 && b.huge == huge && (best < 0 || b.size < pool.cache[best].size) {
			best = i
		}
	}
	if best >= 0 {
		b := pool.cache[best]
		pool.cache = slices.Delete(pool.cache, best, best+1)
		pool.cached -= b.size
		pool.live += b.size
		pool.mu.Unlock()
		return b, true
	}
	pool.live += size
	// Mapped memory is invisible to the collector's pacing: when what is mapped under tensors
	// has grown by as much as it was at its least since the last collection (at least gcStep),
	// run one here, so that tensors dropped without Release give their blocks back.
	collect := pool.live-pool.floor > max(pool.floor, gcStep) && !pool.collecting
	pool.collecting = pool.collecting || collect
	pool.mu.Unlock()
	if collect {
		collectAndDrain()
		pool.mu.Lock()
		// the cleanups that give blocks back run from now on, lowering floor as they do
		pool.floor, pool.collecting = pool.live, false
		pool.mu.Unlock()
	}
	base, ok := mapBlock(size, huge)
	if !ok {
		pool.mu.Lock()
		pool.live -= size
		pool.mu.Unlock()
		return block{}, false
	}
	return block{base: base, size: size, huge: huge}, true
}

// cleanupWait bounds how long collectAndDrain waits for the collector's cleanups to start.
const cleanupWait = 100 * time.Millisecond

// collectAndDrain runs a collection and then gives the cleanups it queued (which give back the
// blocks of tensors dropped without Release) a chance to run before takeBlock measures what is
// still mapped: it waits, for at most cleanupWait, until a cleanup queued by the same collection
// has run. Without the wait, a machine too busy to schedule the cleanup goroutines right away
// made takeBlock take every dropped block for live, and each later collection waited for twice
// as much mapped memory as the one before.
func collectAndDrain() {
	ran := make(chan struct{})
	// an allocation of its own, unreachable once AddCleanup returns
	runtime.AddCleanup(new([16]byte), func(ch chan struct{}) { close(ch) }, ran)
	runtime.GC() // returns with every span swept: every cleanup of this collection is queued
	select {
	case <-ran:
		runtime.Gosched() // cleanups run in parallel: let those beside the sentinel's finish
	case <-time.After(cleanupWait):
	}
}

// putBlock takes back the block of a tensor whose last holder let go: into the cache, making
// room by unmapping the oldest cached blocks, or unmapped when it does not fit at all.
func putBlock(b block) {
	now := time.Now()
	pool.mu.Lock()
	pool.live -= b.size
	pool.floor = min(pool.floor, pool.live)
	limit := max(pool.cfg.CacheBytes, 0)
	if b.size > limit {
		pool.mu.Unlock()
		unmapBlock(b)
		return
	}
	freed := pool.shrink(limit-b.size, time.Time{})
	b.freed = now
	pool.cache = append(pool.cache, b)
	pool.cached += b.size
	if pool.timer == nil {
		pool.timer = time.AfterFunc(pool.cfg.CacheIdle, trimIdle)
	}
	pool.mu.Unlock()
	unmapAll(freed)
}

// shrink removes cached blocks, oldest first, until the cache holds at most limit bytes, and
// those that entered it before idleBefore; it returns them for unmapping outside the lock.
func (p *poolState) shrink(limit int64, idleBefore time.Time) []block {
	var out []block
	for len(p.cache) > 0 && (p.cached > limit || p.cache[0].freed.Before(idleBefore)) {
		out = append(out, p.cache[0])
		p.cached -= p.cache[0].size
		p.cache = p.cache[1:]
	}
	return out
}

// trimIdle unmaps the blocks that stayed in the cache for CacheIdle, and comes back for the
// others when they will have.
func trimIdle() {
	now := time.Now()
	pool.mu.Lock()
	idle := pool.cfg.CacheIdle
	freed := pool.shrink(pool.cached, now.Add(-idle))
	pool.timer = nil
	if len(pool.cache) > 0 {
		pool.timer = time.AfterFunc(max(pool.cache[0].freed.Add(idle).Sub(now), time.Millisecond), trimIdle)
	}
	pool.mu.Unlock()
	unmapAll(freed)
}

func unmapAll(bs []block) {
	for _, b := range bs {
		unmapBlock(b)
	}
}
