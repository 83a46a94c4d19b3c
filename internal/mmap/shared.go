package mmap

import (
	"os"
	"sync"
	"sync/atomic"
)

// Shared is one memory map of a whole file, shared by the file value that opened it and every
// tensor over it: it counts its holders and is unmapped exactly once, when the count drops to
// zero (safetensorsx and ggufx follow this rule).
type Shared struct {
	b    []byte
	refs atomic.Int64
}

// live and unmaps count shared mappings, for the tests of their users.
var live, unmaps atomic.Int64

// NewShared takes over b, a mapping made by Map, with one holder: the caller.
func NewShared(b []byte) *Shared {
	m := &Shared{b: b}
	m.refs.Store(1)
	live.Add(1)
	return m
}

// Bytes is the mapped memory; use it only while holding a reference.
func (m *Shared) Bytes() []byte { return m.b }

// Retain adds a holder, unless the mapping is already gone (then it returns false).
func (m *Shared) Retain() bool {
	for {
		n := m.refs.Load()
		if n <= 0 {
			return false
		}
		if m.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Drop lets go of one holder's reference; the last one unmaps.
func (m *Shared) Drop() {
	switch n := m.refs.Add(-1); {
	case n == 0:
		Unmap(m.b)
		live.Add(-1)
		unmaps.Add(1)
	case n < 0:
		panic("mmap: shared mapping released more often than held")
	}
}

// Live is the number of shared mappings not yet unmapped, and Unmaps how many have been
// unmapped, in this process (for tests).
func Live() int64   { return live.Load() }
func Unmaps() int64 { return unmaps.Load() }

// Source is what a mapped file value's Close (and its cleanup) lets go of: its reference to the
// mapping, or, when the file is not mapped, the open file itself. Close runs once.
type Source struct {
	M      *Shared  // nil when nothing is mapped
	F      *os.File // the open file when it is not mapped
	closed atomic.Bool
	once   sync.Once
}

// Close drops the mapping's reference or closes the file, once; later calls return nil.
func (s *Source) Close() error {
	var err error
	s.once.Do(func() {
		s.closed.Store(true)
		if s.M != nil {
			s.M.Drop()
		}
		if s.F != nil {
			err = s.F.Close()
		}
	})
	return err
}

// Closed reports whether Close has run.
func (s *Source) Closed() bool { return s.closed.Load() }
