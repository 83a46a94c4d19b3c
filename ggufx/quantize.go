package ggufx

import (
	"encoding/binary"
	"math"

	"github.com/x448/float16"
)

// quantizers quantize len(x)/BlockSize blocks of x into dst, as ggml's reference
// quantize_row_*_ref does.
var quantizers = map[Type]func(dst []byte, x []float32){
	Q8_0: quantizeQ8_0,
	Q4_0: quantizeQ4_0,
}

// quantizeQ8_0 is quantize_row_q8_0_ref: d = max|x|/127 (as a half), q = round(x/d), halves
// away from zero.
func quantizeQ8_0(dst []byte, x []float32) {
	for len(x) >= 32 {
		b := dst[:34:34]
		xs := x[:32:32]
		amax := float32(0)
		for _, v := range xs {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		d := amax / 127
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(b, float16.Fromfloat32(d).Bits())
		for j, v := range xs {
			b[2+j] = byte(int8(math.Round(float64(v * id))))
		}
		dst, x = dst[34:], x[32:]
	}
}

// quantizeQ4_0 is quantize_row_q4_0_ref: d = m/-8 for the element m of largest magnitude (as a
// half), q = min(15, trunc(x/d + 8.5)), element j in the low nibble of byte j, j+16 in its high
// nibble.
func quantizeQ4_0(dst []byte, x []float32) {
	for len(x) >= 32 {
		b := dst[:18:18]
		xs := x[:32:32]
		amax, mx := float32(0), float32(0)
		for _, v := range xs {
			if a := float32(math.Abs(float64(v))); amax < a {
				amax, mx = a, v
			}
		}
		d := mx / -8
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(b, float16.Fromfloat32(d).Bits())
		for j := range 16 {
			x0 := xs[j] * id
			x1 := xs[16+j] * id
			q0 := min(15, uint8(int8(float32(x0+8.5))))
			q1 := min(15, uint8(int8(float32(x1+8.5))))
			b[2+j] = q0 | q1<<4
		}
		dst, x = dst[18:], x[32:]
	}
}
