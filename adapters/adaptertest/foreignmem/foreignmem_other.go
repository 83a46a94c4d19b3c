//go:build !unix

package foreignmem

import (
	"sync/atomic"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// Mapped is a tensor over foreign memory, and the count of its release.
type Mapped struct {
	Tensor   *core.Tensor
	Releases *atomic.Int32
}

// Twin returns a tensor with t's dtype, shape, flags and elements, in C order, over memory of
// its own. Without memory maps here, the release overwrites the memory with 0xA5 bytes instead of
// unmapping it: a late read sees garbage rather than faulting.
func Twin(t *core.Tensor) (Mapped, error) {
	c, err := memory.Contiguous(t)
	if err != nil {
		return Mapped{}, err
	}
	b, _ := c.Bytes()
	releases := new(atomic.Int32)
	d := core.Desc{Device: core.CPUDevice, DType: t.DType(), Shape: t.Shape(), Flags: t.Flags()}
	if len(b) > 0 {
		d.Data = unsafe.Pointer(unsafe.SliceData(b))
	}
	m, err := core.Wrap(d, func() {
		for i := range b {
			b[i] = 0xA5
		}
		releases.Add(1)
	})
	return Mapped{m, releases}, err
}

// New returns a compact C-order tensor of dtype and shape over memory of its own, filled by fill.
func New(dtype core.DLDataType, shape []int64, fill func(b []byte)) (Mapped, error) {
	t, err := core.New(dtype, shape...)
	if err != nil {
		return Mapped{}, err
	}
	if b, _ := t.Bytes(); fill != nil && len(b) > 0 {
		fill(b)
	}
	return Twin(t)
}
