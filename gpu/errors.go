package gpu

import (
	"errors"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu/cuda"
)

// ErrNoDevice is matched by every error that means CUDA cannot be used here (no driver library,
// no device, an ordinal that does not exist). It is cuda.ErrNoDevice.
var ErrNoDevice = cuda.ErrNoDevice

// ErrDevice is matched by errors about a tensor on a device this package does not handle (ROCm,
// OpenCL, ...), or a device pointer that is not what its DLDevice claims.
var ErrDevice = errors.New("gpu: unsupported device")

// ErrStream is matched by errors about a stream argument: a Python-protocol value that is not
// one (0, or negative but -1), or a stream used where it cannot be.
var ErrStream = errors.New("gpu: bad stream")

// ErrOverlap is core.ErrOverlap: a copy's destination whose elements alias each other (a
// broadcast view), so that the result would depend on the order of the writes.
var ErrOverlap = core.ErrOverlap
