package cuda

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// Kind says where an address of a copy lives.
type Kind uint32

// The kinds of memory a copy reads or writes (CUmemorytype values).
const (
	Host    Kind = 1 // CU_MEMORYTYPE_HOST: host memory, pageable or pinned
	Device  Kind = 2 // CU_MEMORYTYPE_DEVICE: device memory (managed memory included)
	Unified Kind = 4 // CU_MEMORYTYPE_UNIFIED: any address of the unified address space
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Host:
		return "host"
	case Device:
		return "device"
	case Unified:
		return "unified"
	}
	return fmt.Sprintf("Kind(%d)", uint32(k))
}

// MaxPitch is the largest row pitch (and row width) this package hands to cuMemcpy2D; copies
// with longer pitches or wider rows are split into one 1-D copy per row, whatever the kinds of
// memory.
const MaxPitch = 1<<31 - 1

// Copy2D copies Height rows of Width bytes: row r goes from Src + r*SrcPitch to
// Dst + r*DstPitch. A Height of 1 is a plain 1-D copy of Width bytes. Host addresses must stay
// valid (and, for Go memory, reachable) until the copy has completed.
type Copy2D struct {
	Dst, Src           uintptr
	DstKind, SrcKind   Kind
	DstPitch, SrcPitch int64
	Width, Height      int64
}

// memcpy2D mirrors CUDA_MEMCPY2D (128 bytes on 64-bit platforms).
type memcpy2D struct {
	srcXInBytes, srcY uintptr
	srcMemoryType     uint32
	_                 uint32
	srcHost           uintptr
	srcDevice         uintptr
	srcArray          uintptr
	srcPitch          uintptr
	dstXInBytes, dstY uintptr
	dstMemoryType     uint32
	_                 uint32
	dstHost           uintptr
	dstDevice         uintptr
	dstArray          uintptr
	dstPitch          uintptr
	widthInBytes      uintptr
	height            uintptr
}

func (c Copy2D) validate() error {
	switch {
	case c.Width < 0 || c.Height < 0:
		return errs.Errorf(ErrArgument, "cuda: a copy of %d rows of %d bytes has a negative size", c.Height, c.Width)
	case c.Width == 0 || c.Height == 0:
		return nil
	case c.Dst == 0 || c.Src == 0:
		return errs.Errorf(ErrArgument, "cuda: NULL address in a copy of %d rows of %d bytes", c.Height, c.Width)
	case c.Height > 1 && (c.DstPitch < c.Width || c.SrcPitch < c.Width):
		return errs.Errorf(ErrArgument, "cuda: pitches %d, %d shorter than rows of %d bytes", c.DstPitch, c.SrcPitch, c.Width)
	}
	for _, k := range []Kind{c.DstKind, c.SrcKind} {
		if k != Host && k != Device && k != Unified {
			return errs.Errorf(ErrArgument, "cuda: memory kind %d is not host, device or unified", uint32(k))
		}
	}
	// each side spans (Height-1)*pitch + Width bytes: that must fit in an int64 (the copies
	// compute Width*Height and r*pitch) and must not wrap around the address space
	for _, side := range [2]struct {
		addr  uintptr
		pitch int64
	}{{c.Dst, c.DstPitch}, {c.Src, c.SrcPitch}} {
		pitch := uint64(side.pitch)
		if c.Height == 1 {
			pitch = 0
		}
		hi, lo := bits.Mul64(uint64(c.Height-1), pitch)
		span := lo + uint64(c.Width)
		if hi != 0 || lo > math.MaxInt64 || span > math.MaxInt64 || uint64(side.addr)+span < uint64(side.addr) {
			return errs.Errorf(ErrArgument, "cuda: %d rows of %d bytes, pitch %d, from %#x overflow", c.Height, c.Width, side.pitch, side.addr)
		}
	}
	return nil
}

// Memcpy runs c in device dev's context: synchronously, or queued on stream s when async
// (asynchronous copies from or to host memory are truly asynchronous only for pinned memory).
// 1-D copies use cuMemcpyHtoD_v2 / DtoH_v2 / DtoD_v2 (or their Async_v2 forms), or cuMemcpy
// (cuMemcpyAsync) when a side is Unified; 2-D copies cuMemcpy2D_v2 (cuMemcpy2DAsync_v2). Rows
// with a pitch above MaxPitch, and so rows wider than MaxPitch, are copied one by one with the
// 1-D calls, which have no such limit. Host-to-host copies are refused: the caller copies those
// itself.
func Memcpy(dev int, c Copy2D, s Stream, async bool) error {
	if err := c.validate(); err != nil || c.Width == 0 || c.Height == 0 {
		return err
	}
	if c.DstKind == Host && c.SrcKind == Host {
		return errs.Errorf(ErrArgument, "cuda: a host-to-host copy is not the driver's to make")
	}
	if err := load(); err != nil {
		return err
	}
	return onDevice(dev, func() error {
		if c.Height == 1 || (c.DstPitch == c.Width && c.SrcPitch == c.Width) {
			return memcpy1D(c.Dst, c.DstKind, c.Src, c.SrcKind, c.Width*c.Height, s, async)
		}
		if c.DstPitch > MaxPitch || c.SrcPitch > MaxPitch {
			// row by row, as 1-D copies: a row wider than MaxPitch would be a pitch too long
			// for cuMemcpy2D as well
			for r := int64(0); r < c.Height; r++ {
				dst, src := c.Dst+uintptr(r*c.DstPitch), c.Src+uintptr(r*c.SrcPitch)
				if err := memcpy1D(dst, c.DstKind, src, c.SrcKind, c.Width, s, async); err != nil {
					return err
				}
			}
			return nil
		}
		return memcpy2DCall(c, s, async)
	})
}

// memcpy1D copies n bytes with the direction-specific entry points, or the unified-addressing
// ones (which infer where each address lives) when a side is Unified: never cuMemcpy2D, whose
// pitch limit a long row would pass. The context is current.
func memcpy1D(dst uintptr, dk Kind, src uintptr, sk Kind, n int64, s Stream, async bool) error {
	switch {
	case (dk == Unified || sk == Unified) && async:
		return check("cuMemcpyAsync", invoke(syms[symMemcpyAsync], dst, src, uintptr(n), uintptr(s)))
	case dk == Unified || sk == Unified:
		return check("cuMemcpy", invoke(syms[symMemcpy], dst, src, uintptr(n)))
	case dk == Device && sk == Host && async:
		return check("cuMemcpyHtoDAsync_v2", invoke(syms[symMemcpyHtoDAsync], dst, src, uintptr(n), uintptr(s)))
	case dk == Device && sk == Host:
		return check("cuMemcpyHtoD_v2", invoke(syms[symMemcpyHtoD], dst, src, uintptr(n)))
	case dk == Host && sk == Device && async:
		return check("cuMemcpyDtoHAsync_v2", invoke(syms[symMemcpyDtoHAsync], dst, src, uintptr(n), uintptr(s)))
	case dk == Host && sk == Device:
		return check("cuMemcpyDtoH_v2", invoke(syms[symMemcpyDtoH], dst, src, uintptr(n)))
	case async:
		return check("cuMemcpyDtoDAsync_v2", invoke(syms[symMemcpyDtoDAsync], dst, src, uintptr(n), uintptr(s)))
	default:
		return check("cuMemcpyDtoD_v2", invoke(syms[symMemcpyDtoD], dst, src, uintptr(n)))
	}
}

// memcpy2DCall fills a CUDA_MEMCPY2D and calls cuMemcpy2D_v2 or cuMemcpy2DAsync_v2.
func memcpy2DCall(c Copy2D, s Stream, async bool) error {
	p := memcpy2D{srcMemoryType: uint32(c.SrcKind), dstMemoryType: uint32(c.DstKind),
		srcPitch: uintptr(c.SrcPitch), dstPitch: uintptr(c.DstPitch),
		widthInBytes: uintptr(c.Width), height: uintptr(c.Height)}
	if c.Height == 1 {
		p.srcPitch, p.dstPitch = uintptr(c.Width), uintptr(c.Width)
	}
	if c.SrcKind == Host {
		p.srcHost = c.Src
	} else {
		p.srcDevice = c.Src
	}
	if c.DstKind == Host {
		p.dstHost = c.Dst
	} else {
		p.dstDevice = c.Dst
	}
	if async {
		return check("cuMemcpy2DAsync_v2", invoke(syms[symMemcpy2DAsync], uintptr(unsafe.Pointer(&p)), uintptr(s)))
	}
	return check("cuMemcpy2D_v2", invoke(syms[symMemcpy2D], uintptr(unsafe.Pointer(&p))))
}
