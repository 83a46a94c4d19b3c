//go:build !(386 || arm || mips || mipsle)

package cuda

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rows of these copies lie past 4 GiB, and their pitches reach it: 64-bit address spaces only
// (the CUDA driver has no other).

func TestMemcpyRowsOverMaxPitch(t *testing.T) {
	f := installFakeDriver(t)
	const (
		dst, src = uintptr(1 << 40), uintptr(1 << 44)
		wide     = MaxPitch + 1 // a row too wide to be a cuMemcpy2D pitch
		far      = 1 << 32      // a pitch too long for cuMemcpy2D
		s        = Stream(0x5000)
	)
	one := func(op string, d, sr uintptr, n int64, st Stream) fakeCopy {
		return fakeCopy{Op: op, Dst: d, Src: sr, Width: uintptr(n), Height: 1, Stream: st}
	}
	cases := []struct {
		name  string
		c     Copy2D
		async bool
		want  []fakeCopy
	}{
		{"managed row wider than MaxPitch",
			Copy2D{Dst: dst, DstKind: Unified, Src: src, SrcKind: Host, Width: wide, Height: 1}, false,
			[]fakeCopy{one("cuMemcpy", dst, src, wide, 0)}},
		{"managed row wider than MaxPitch, on a stream",
			Copy2D{Dst: dst, DstKind: Device, Src: src, SrcKind: Unified, Width: wide, Height: 1}, true,
			[]fakeCopy{one("cuMemcpyAsync", dst, src, wide, s)}},
		{"managed rows wider than MaxPitch",
			Copy2D{Dst: dst, DstKind: Unified, DstPitch: far, Src: src, SrcKind: Unified, SrcPitch: far, Width: wide, Height: 2}, false,
			[]fakeCopy{one("cuMemcpy", dst, src, wide, 0), one("cuMemcpy", dst+far, src+far, wide, 0)}},
		{"managed rows with pitches over MaxPitch, on a stream",
			Copy2D{Dst: dst, DstKind: Unified, DstPitch: far, Src: src, SrcKind: Host, SrcPitch: 64, Width: 64, Height: 2}, true,
			[]fakeCopy{one("cuMemcpyAsync", dst, src, 64, s), one("cuMemcpyAsync", dst+far, src+64, 64, s)}},
		{"compact managed rows: one 1-D copy",
			Copy2D{Dst: dst, DstKind: Unified, DstPitch: 1 << 30, Src: src, SrcKind: Device, SrcPitch: 1 << 30, Width: 1 << 30, Height: 4}, false,
			[]fakeCopy{one("cuMemcpy", dst, src, 4<<30, 0)}},
		{"device rows wider than MaxPitch",
			Copy2D{Dst: dst, DstKind: Device, DstPitch: far, Src: src, SrcKind: Device, SrcPitch: far, Width: wide, Height: 2}, false,
			[]fakeCopy{one("cuMemcpyDtoD_v2", dst, src, wide, 0), one("cuMemcpyDtoD_v2", dst+far, src+far, wide, 0)}},
		{"device rows with pitches over MaxPitch, on a stream",
			Copy2D{Dst: dst, DstKind: Host, DstPitch: 16, Src: src, SrcKind: Device, SrcPitch: far, Width: 16, Height: 2}, true,
			[]fakeCopy{one("cuMemcpyDtoHAsync_v2", dst, src, 16, s), one("cuMemcpyDtoHAsync_v2", dst+16, src+far, 16, s)}},
		{"managed rows within MaxPitch stay one 2-D copy",
			Copy2D{Dst: dst, DstKind: Unified, DstPitch: 128, Src: src, SrcKind: Host, SrcPitch: 64, Width: 64, Height: 3}, false,
			[]fakeCopy{{Op: "cuMemcpy2D_v2", Dst: dst, Src: src, DstKind: Unified, SrcKind: Host, DstPitch: 128, SrcPitch: 64, Width: 64, Height: 3}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, Memcpy(0, c.c, s, c.async))
			assert.Equal(t, c.want, f.calls())
		})
	}
}
