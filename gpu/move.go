package gpu

import (
	"fmt"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu/cuda"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// Device returns the DLDevice of CUDA device dev (kDLCUDA).
func Device(dev int) core.DLDevice { return core.DLDevice{DeviceType: core.CUDA, DeviceID: int32(dev)} }

// Pinned is the DLDevice of pinned host memory (kDLCUDAHost).
var Pinned = core.DLDevice{DeviceType: core.CUDAHost}

// To moves t to device dev: core.CPUDevice (Go memory), Pinned, Device(n) or a kDLCUDAManaged
// device. When t is already there, it returns a view of t (no copy); otherwise a new C-order
// tensor on dev with t's dtype, shape and values, flagged core.FlagIsCopied, complete when To
// returns. Strided and read-only inputs are fine; the copy is writable.
func To(t *core.Tensor, dev core.DLDevice) (*core.Tensor, error) { return to(t, dev, Stream{}, false) }

// ToOn is To with the copy ordered on stream s (see CopyOn): a copy between device and pinned
// memory is queued on s and the result holds the values once s reaches that point. NoSync and
// a closed stream are refused (ErrStream).
func ToOn(t *core.Tensor, dev core.DLDevice, s Stream) (*core.Tensor, error) {
	if s.noSync {
		return nil, errs.Errorf(ErrStream, "gpu: the no-sync stream cannot order a copy to %s", dev)
	}
	if err := s.usable(); err != nil {
		return nil, inOp(fmt.Sprintf("to %s", dev), err)
	}
	return to(t, dev, s, true)
}

func to(t *core.Tensor, dev core.DLDevice, s Stream, async bool) (*core.Tensor, error) {
	if t == nil {
		return nil, errs.Errorf(core.ErrNil, "gpu: a nil tensor to move to %s", dev)
	}
	if t.Device() == dev {
		return t.View()
	}
	var out *core.Tensor
	var err error
	switch dev.DeviceType {
	case core.CPU:
		out, err = core.New(t.DType(), t.Shape()...)
	case core.CUDAHost:
		out, err = AllocPinned(t.DType(), t.Shape()...)
	case core.CUDA:
		out, err = Alloc(t.DType(), int(dev.DeviceID), t.Shape()...)
	case core.CUDAManaged:
		out, err = AllocManaged(t.DType(), int(dev.DeviceID), t.Shape()...)
	default:
		err = errs.Errorf(ErrUnsupportedDevice, "gpu: cannot move a tensor to %s (want cuda or cuda_managed)", dev)
	}
	if err != nil {
		return nil, inOp(fmt.Sprintf("to %s", dev), err)
	}
	if err := copyTensors(out, t, s, async, nil); err != nil {
		out.Release()
		return nil, err
	}
	v, err := out.WithFlags(core.FlagIsCopied)
	out.Release()
	return v, err
}

// ToHost is what a host adapter (Gonum, Gorgonia, NumPy files, ...) calls on a tensor that
// may live on a device, with the caller's copy options. A host-accessible tensor comes back as
// is (under adapters.AlwaysCopy, as a copy in Go memory); managed memory is first synchronised
// with its device so the host sees the device's writes. A device tensor is refused under
// adapters.ZeroCopyOnly with an error matching both adapters.ErrCopyRequired and
// core.ErrNotHost, and is otherwise copied to Go memory (To(t, core.CPUDevice)), which
// adapters.ReportCopy reports. A released tensor fails with core.ErrReleased.
func ToHost(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
	if t == nil {
		return nil, errs.Errorf(core.ErrNil, "gpu: a nil tensor to move to the host")
	}
	if t.Released() {
		return nil, errs.Errorf(core.ErrReleased, "gpu: the tensor to move to the host was released")
	}
	o := adapters.Apply(opts...)
	if t.HostAccessible() {
		if t.Device().DeviceType == core.CUDAManaged {
			if err := cuda.Synchronize(int(t.Device().DeviceID)); err != nil {
				return nil, inOp("to host", err)
			}
		}
		if copied, _ := o.Choose(true, ""); copied {
			c, err := memory.Clone(t, memory.COrder)
			if err != nil {
				return nil, inOp("to host", err)
			}
			o.Report(true)
			return c, nil
		}
		o.Report(false)
		return t, nil
	}
	if _, err := o.Choose(false, fmt.Sprintf("tensor on %s must be copied to the host", t.Device())); err != nil {
		return nil, errs.Errorf(core.ErrNotHost, "gpu: %w", err)
	}
	c, err := To(t, core.CPUDevice)
	if err != nil {
		return nil, err
	}
	o.Report(true)
	return c, nil
}
