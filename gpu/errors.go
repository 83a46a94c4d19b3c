package gpu

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu/cuda"
)

// ErrNoDevice is matched by every error that means CUDA cannot be used here (no driver library,
// no device, an ordinal that does not exist). It is cuda.ErrNoDevice.
var ErrNoDevice = cuda.ErrNoDevice

// ErrUnsupportedDevice is matched by errors about a tensor on a device this package does not
// handle (ROCm, OpenCL, Vulkan, ...), or memory that is not what its device claims (a wrapped
// address that is not CUDA memory of that kind). It matches adapters.ErrUnsupported too; it is
// not core.ErrDevice, which means a malformed device field in a descriptor.
var ErrUnsupportedDevice = fmt.Errorf("%w: gpu: unsupported device", adapters.ErrUnsupported)

// ErrStream is matched by errors about a stream argument: a Python-protocol value that is not
// one (0, or negative but -1), a stream used where it cannot be, or a stream used after it
// was closed.
var ErrStream = errors.New("gpu: bad stream")

// ErrOverlap is core.ErrOverlap: a copy's destination whose elements alias each other (a
// broadcast view), so that the result would depend on the order of the writes.
var ErrOverlap = core.ErrOverlap

// inOp puts the operation op on err: after the cause when err is this package's own (its
// message leads with "gpu: "), in front of it otherwise ("gpu: alloc: cuda: ...").
func inOp(op string, err error) error {
	if strings.HasPrefix(err.Error(), "gpu: ") {
		return fmt.Errorf("%w (%s)", err, op)
	}
	return fmt.Errorf("gpu: %s: %w", op, err)
}
