package onnxx

import (
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// A lease is an output block of the session's (memory.Lease) with an ORT value over it, made once
// and kept: a run that finds a free lease for an output of known shape returns the tensor the
// lease lends, and gives ORT the kept value, so that it neither allocates the output nor makes
// and releases a value for it (what brings Run of a small model close to onnxruntime_go with
// reused tensors: BenchmarkSmallModelRounds, BENCHMARKS.md). The block is free again when the
// caller has released the tensor and every view of it; a tensor dropped without Release is
// collected with its block, and the session makes a new lease in place of the lost one. A session
// keeps at most maxLeases leases per output, of outputs up to leaseMax bytes: while all are lent,
// the run allocates the output as before (core.New).
//
// The value points into Go memory between runs, when ORT never touches it; during a run the lent
// tensor, new and not yet returned, is the run's alone (nobody else can release it), and it keeps
// the block alive; Go's collector does not move memory. A lost lease's value is released without
// being used again.
type lease struct {
	l      *memory.Lease
	v      uintptr // ORT value over the block, with the output's shape
	lo, hi uintptr // the block's addresses (core.Tensor.ByteRange)
}

// overlaps reports whether t's elements may lie in the lease's block.
func (x *lease) overlaps(t *core.Tensor) bool {
	lo, hi := t.ByteRange()
	return lo < x.hi && x.lo < hi
}

// maxLeases is how many leases a session keeps per output; leaseMax is the largest output, in
// bytes, it leases (beyond it the run itself dwarfs what a lease saves, and leases would keep
// large blocks alive).
const (
	maxLeases = 4
	leaseMax  = 64 << 10
)

// skipLeases is how many outputs the runs of a session allocate without looking at its leases
// once it found every lease of an output lent (a caller that leaves its results to the collector):
// a run that tries the leases first costs more than one that does not, and the leases of
// dropped tensors come back only after a collection.
const skipLeases = 64

// takesLeases reports whether output info is lent from leases: of fixed shape, with elements, and
// up to leaseMax bytes.
func takesLeases(info *IOInfo) bool {
	if info.Dynamic() {
		return false
	}
	n, err := memory.AllocSize(info.DType, info.Shape...)
	return err == nil && n > 0 && n <= leaseMax
}

// lend returns the tensor of a free lease of output i, which takes leases (bindings.lends), making
// a lease if the session has fewer than maxLeases for it (or in place of a lost one), and the
// lease's value; nil if every lease is lent. The caller holds the bindings' lock.
func (s *Session) lend(st *stage, i int) (*core.Tensor, uintptr, error) {
	ls := s.b.leases[i]
	for k, x := range ls {
		if t := x.l.Lend(); t != nil {
			return t, x.v, nil
		}
		if x.l.Lost() { // dropped unreleased: its block is gone
			s.api.do(fnReleaseValue, x.v)
			s.b.unbind()
			ls = append(ls[:k], ls[k+1:]...)
			s.b.leases[i] = ls
			break
		}
	}
	if len(ls) == maxLeases {
		s.b.allLent.Store(skipLeases)
		return nil, 0, nil
	}
	x, err := s.newLease(st, &s.outputs[i])
	if err != nil {
		return nil, 0, err
	}
	s.b.leases[i] = append(ls, x)
	return x.l.Lend(), x.v, nil
}

// newLease allocates a block for output info and makes its value.
func (s *Session) newLease(st *stage, info *IOInfo) (lease, error) {
	l, err := memory.NewLease(info.DType, info.Shape...)
	if err != nil {
		return lease{}, err
	}
	t := l.Lend()
	defer t.Release()
	v, err := s.api.newValue(st, t, info.ElementType, s.api.cpuInfo)
	if err != nil {
		return lease{}, err
	}
	lo, hi := t.ByteRange()
	return lease{l: l, v: v, lo: lo, hi: hi}, nil
}

// putLent records the tensor t that output i was lent, over the lease's value v (unlend undoes
// it).
func (st *stage) putLent(i int, t *core.Tensor, v uintptr, outs []*core.Tensor) {
	st.outVals[i], st.ours[i], st.lent[i], outs[i] = v, true, true, t
}

// dropLeases releases the values of every lease; lent tensors stay valid (their memory is Go's).
func (b *bindings) dropLeases() {
	for i, ls := range b.leases {
		for _, x := range ls {
			b.api.do(fnReleaseValue, x.v)
		}
		b.leases[i] = nil
	}
	b.unbind()
}
