package adapters

import (
	"fmt"
	"testing"
	"unsafe"
)

func tbP[W word](dst, src unsafe.Pointer, rows, cols, ldd, lds, br, bc int) {
	var w W
	size := int(unsafe.Sizeof(w))
	dRow, sCol := ldd*size, lds*size
	for r0 := 0; r0 < rows; r0 += br {
		r1 := min(r0+br, rows)
		for c0 := 0; c0 < cols; c0 += bc {
			c1 := min(c0+bc, cols)
			for r := r0; r+4 <= r1; r += 4 {
				dp := unsafe.Add(dst, r*dRow+c0*size)
				sp := unsafe.Add(src, r*size+c0*sCol)
				for range c1 - c0 {
					q := (*[4]W)(sp)
					*(*W)(dp) = q[0]
					*(*W)(unsafe.Add(dp, dRow)) = q[1]
					*(*W)(unsafe.Add(dp, 2*dRow)) = q[2]
					*(*W)(unsafe.Add(dp, 3*dRow)) = q[3]
					dp = unsafe.Add(dp, size)
					sp = unsafe.Add(sp, sCol)
				}
			}
		}
	}
}

// 8 rows per micro-step
func tb8[W word](dst, src unsafe.Pointer, rows, cols, ldd, lds, br, bc int) {
	var w W
	size := int(unsafe.Sizeof(w))
	dRow, sCol := ldd*size, lds*size
	for r0 := 0; r0 < rows; r0 += br {
		r1 := min(r0+br, rows)
		for c0 := 0; c0 < cols; c0 += bc {
			c1 := min(c0+bc, cols)
			for r := r0; r+8 <= r1; r += 8 {
				dp := unsafe.Add(dst, r*dRow+c0*size)
				sp := unsafe.Add(src, r*size+c0*sCol)
				for range c1 - c0 {
					q := (*[8]W)(sp)
					*(*W)(dp) = q[0]
					*(*W)(unsafe.Add(dp, dRow)) = q[1]
					*(*W)(unsafe.Add(dp, 2*dRow)) = q[2]
					*(*W)(unsafe.Add(dp, 3*dRow)) = q[3]
					dp4 := unsafe.Add(dp, 4*dRow)
					*(*W)(dp4) = q[4]
					*(*W)(unsafe.Add(dp4, dRow)) = q[5]
					*(*W)(unsafe.Add(dp4, 2*dRow)) = q[6]
					*(*W)(unsafe.Add(dp4, 3*dRow)) = q[7]
					dp = unsafe.Add(dp, size)
					sp = unsafe.Add(sp, sCol)
				}
			}
		}
	}
}

// 4x4 micro tile: 4 src columns x 4 contiguous, 4 dst rows x 4 contiguous
func tb44(dst, src unsafe.Pointer, rows, cols, ldd, lds, br, bc int) {
	const size = 4
	dRow, sCol := ldd*size, lds*size
	for r0 := 0; r0 < rows; r0 += br {
		r1 := min(r0+br, rows)
		for c0 := 0; c0 < cols; c0 += bc {
			c1 := min(c0+bc, cols)
			for r := r0; r+4 <= r1; r += 4 {
				dp := unsafe.Add(dst, r*dRow+c0*size)
				sp := unsafe.Add(src, r*size+c0*sCol)
				for c := c0; c+4 <= c1; c += 4 {
					a := *(*[4]uint32)(sp)
					b := *(*[4]uint32)(unsafe.Add(sp, sCol))
					cc := *(*[4]uint32)(unsafe.Add(sp, 2*sCol))
					d := *(*[4]uint32)(unsafe.Add(sp, 3*sCol))
					*(*[4]uint32)(dp) = [4]uint32{a[0], b[0], cc[0], d[0]}
					*(*[4]uint32)(unsafe.Add(dp, dRow)) = [4]uint32{a[1], b[1], cc[1], d[1]}
					*(*[4]uint32)(unsafe.Add(dp, 2*dRow)) = [4]uint32{a[2], b[2], cc[2], d[2]}
					*(*[4]uint32)(unsafe.Add(dp, 3*dRow)) = [4]uint32{a[3], b[3], cc[3], d[3]}
					dp = unsafe.Add(dp, 4*size)
					sp = unsafe.Add(sp, 4*sCol)
				}
			}
		}
	}
}

func BenchmarkZZ(b *testing.B) {
	const n = 4096
	src := make([]uint32, n*n)
	dst := make([]uint32, n*n)
	for i := range src {
		src[i] = uint32(i)
		dst[i] = 1
	}
	sp, dp := unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0])
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(n * n * 4)
		for b.Loop() {
			copy(dst, src)
		}
	})
	for _, bs := range [][2]int{{64, 64}, {16, 16}, {16, 8}, {8, 16}, {8, 8}, {32, 8}, {8, 32}, {16, 4096}, {8, 4096}, {32, 16}, {16, 32}} {
		b.Run(fmt.Sprintf("m4/%dx%d", bs[0], bs[1]), func(b *testing.B) {
			b.SetBytes(n * n * 4)
			for b.Loop() {
				tbP[uint32](dp, sp, n, n, n, n, bs[0], bs[1])
			}
		})
		b.Run(fmt.Sprintf("m8/%dx%d", bs[0], bs[1]), func(b *testing.B) {
			b.SetBytes(n * n * 4)
			for b.Loop() {
				tb8[uint32](dp, sp, n, n, n, n, bs[0], bs[1])
			}
		})
		b.Run(fmt.Sprintf("m44/%dx%d", bs[0], bs[1]), func(b *testing.B) {
			b.SetBytes(n * n * 4)
			for b.Loop() {
				tb44(dp, sp, n, n, n, n, bs[0], bs[1])
			}
		})
	}
}
