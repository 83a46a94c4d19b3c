//go:build amd64 && !purego

package ggufx

import (
	"math"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Q1_0 and Q2_0 on amd64 with AVX2: Go expands each byte's codes into int8 values (a table
// lookup a byte) and i8AVX2 converts and scales 32 of them at a time, as
// float32(code)·d, one rounding, which is the reference's product.

// i8AVX2 writes n groups of 32 elements: element j of group i is float32(q[32i + j])·d[i]; nt as
// for q4_0AVX2 (kernels_tq_amd64.s).
//
//go:noescape
func i8AVX2(y *float32, q *int8, d *float32, n int, nt int)

// codeBatch is the elements expanded at a time.
const codeBatch = 4096

// q2Codes holds, for each byte of Q2_0, its four codes minus one as int8, in element order.
var q2Codes = func() (t [256]uint32) {
	for b := range t {
		for k := range 4 {
			t[b] |= uint32(uint8(int8(b>>(2*k)&3)-1)) << (8 * k)
		}
	}
	return t
}()

// q1Codes holds, for each byte of Q1_0, its eight signs as int8 ±1, in element order.
var q1Codes = func() (t [256]uint64) {
	for b := range t {
		for k := range 8 {
			v := int8(-1)
			if b>>k&1 != 0 {
				v = 1
			}
			t[b] |= uint64(uint8(v)) << (8 * k)
		}
	}
	return t
}()

// codesAVX2 dequantizes the blocks of x (bb bytes, bs elements each, led by an fp16 scale) into
// y: expand writes a block's bs int8 codes into q; i8AVX2 does the rest.
func codesAVX2(y []float32, x []byte, bs, bb, nt int, expand func(q []int8, b []byte)) {
	tab := f16Table()
	var q [codeBatch]int8
	var d [codeBatch / 32]float32
	per := codeBatch / bs
	for n := min(len(y)/bs, len(x)/bb); n > 0; {
		k := min(n, per)
		for i := range k {
			b := x[bb*i : bb*i+bb]
			expand(q[bs*i:bs*i+bs], b)
			s := half(tab, b)
			for g := range bs / 32 {
				d[bs/32*i+g] = s
			}
		}
		i8AVX2(&y[0], &q[0], &d[0], k*bs/32, nt)
		x, y, n = x[bb*k:], y[bs*k:], n-k
	}
}

func expandQ2_0(q []int8, x []byte) {
	b := (*[18]byte)(x)
	o := (*[64]int8)(q)
	for i := range 16 {
		*(*uint32)(unsafe.Pointer(&o[4*i])) = q2Codes[b[2+i]]
	}
}

func expandQ1_0(q []int8, x []byte) {
	b := (*[18]byte)(x)
	o := (*[128]int8)(q)
	for i := range 16 {
		*(*uint64)(unsafe.Pointer(&o[8*i])) = q1Codes[b[2+i]]
	}
}

// tq1AVX2 dequantizes the 240 elements of qs of each of n TQ1_0 blocks, block i scaled by d[i],
// the trits extracted with 16-bit multiplications as ggml does; the 16 of qh are the caller's;
// nt as for q4_0AVX2 (kernels_tq_amd64.s).
//
//go:noescape
func tq1AVX2(y *float32, x *byte, d *float32, n int, nt int)

// dqTQ1_0AVX2 is dqTQ1_0 through tq1AVX2, the last 16 elements of each block (qh's) in Go.
func dqTQ1_0AVX2(y []float32, x []byte, nt int) {
	tab := f16Table()
	var d [64]float32
	for n := min(len(y)/256, len(x)/54); n > 0; {
		k := min(n, len(d))
		for i := range k {
			d[i] = half(tab, x[54*i+52:])
		}
		tq1AVX2(&y[0], &x[0], &d[0], k, nt)
		for i := range k {
			v := tritValues(d[i])
			o := (*[16]float32)(y[256*i+240:])
			for j, q := range (*[4]byte)(x[54*i+48:]) {
				tr := &tq1Trits[q]
				o[j], o[4+j], o[8+j], o[12+j] = v[tr[0]&3], v[tr[1]&3], v[tr[2]&3], v[tr[3]&3]
			}
		}
		x, y, n = x[54*k:], y[256*k:], n-k
	}
}

// dqQ1_0AVX2 is dqQ1_0 through i8AVX2. ggml negates d where a bit is clear, and (-1)·d is -d for
// every d but a NaN, whose sign the negation flips and the product keeps: blocks with a NaN
// scale are written again by the Go kernel.
func dqQ1_0AVX2(y []float32, x []byte, nt int) {
	codesAVX2(y, x, 128, 18, nt, expandQ1_0)
	tab := f16Table()
	for i := 0; (i+1)*18 <= len(x) && (i+1)*128 <= len(y); i++ {
		if d := half(tab, x[18*i:]); math.IsNaN(float64(d)) {
			dqQ1_0(y[128*i:128*i+128], x[18*i:18*i+18])
		}
	}
}

func init() {
	if !cpu.X86.HasAVX2 {
		return
	}
	useAVX2(Q2_0, func(y []float32, x []byte, nt int) { codesAVX2(y, x, 64, 18, nt, expandQ2_0) })
	useAVX2(TQ1_0, dqTQ1_0AVX2)
	useAVX2(Q1_0, dqQ1_0AVX2)
}
