package adapters

import (
	"time"
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


func tbS(dst, src unsafe.Pointer, rows, cols, ldd, lds, sb, b int, k func(dst, src unsafe.Pointer, rows, cols, ldd, lds, br, bc int)) {
	const size = 4
	for R := 0; R < rows; R += sb {
		for C := 0; C < cols; C += sb {
			k(unsafe.Add(dst, (R*ldd+C)*size), unsafe.Add(src, (R+C*lds)*size), min(sb, rows-R), min(sb, cols-C), ldd, lds, b, b)
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
	for _, sb := range []int{128, 256, 512, 1024, 4096} {
		for _, bs := range []int{16, 32, 64} {
			b.Run(fmt.Sprintf("m4/%d/%d", sb, bs), func(b *testing.B) {
				b.SetBytes(n * n * 4)
				for b.Loop() {
					tbS(dp, sp, n, n, n, n, sb, bs, tbP[uint32])
				}
			})
			b.Run(fmt.Sprintf("m44/%d/%d", sb, bs), func(b *testing.B) {
				b.SetBytes(n * n * 4)
				for b.Loop() {
					tbS(dp, sp, n, n, n, n, sb, bs, tb44)
				}
			})
		}
	}
}

func TestZZMin(t *testing.T) {
	const n = 4096
	src := make([]uint32, n*n)
	dst := make([]uint32, n*n)
	for i := range src {
		src[i] = uint32(i)
		dst[i] = 1
	}
	sp, dp := unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0])
	best := func(f func()) time.Duration {
		m := time.Hour
		for range 12 {
			t0 := time.Now()
			f()
			m = min(m, time.Since(t0))
		}
		return m
	}
	cp := best(func() { copy(dst, src) })
	t.Logf("copy %v", cp)
	type v struct {
		name string
		f    func()
	}
	var vs []v
	for _, sb := range []int{256, 512, 4096} {
		for _, bs := range []int{16, 32, 64} {
			vs = append(vs, v{fmt.Sprintf("m4/%d/%d", sb, bs), func() { tbS(dp, sp, n, n, n, n, sb, bs, tbP[uint32]) }})
			vs = append(vs, v{fmt.Sprintf("m44/%d/%d", sb, bs), func() { tbS(dp, sp, n, n, n, n, sb, bs, tb44) }})
		}
	}
	for _, x := range vs {
		d := best(x.f)
		t.Logf("%-14s %v  ratio %.2f", x.name, d, float64(cp)/float64(d))
	}
	t.Logf("copy %v", best(func() { copy(dst, src) }))
}
