//go:build amd64 && !purego

#include "textflag.h"

// The kernels of the grid types (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S; IQ1_S, IQ1_M): the Go
// side has already looked up each group of 8 elements' grid bytes (mags), sign byte and scale;
// these widen and scale them, each value computed with the reference's operations in its order.

// G8(ST): one group of 8: scale·magnitude, then the sign byte's row of sign-bit masks XORed in
// (a flip, as ggml negates).
#define G8(ST) \
	VPMOVZXBD (SI), Y1 \
	VCVTDQ2PS Y1, Y1 \
	VBROADCASTSS (DX), Y0 \
	VMULPS Y0, Y1, Y1 \
	MOVBQZX (BX), R8 \
	SHLQ $5, R8 \
	VXORPS (AX)(R8*1), Y1, Y1 \
	ST Y1, (DI) \
	ADDQ $8, SI \
	ADDQ $1, BX \
	ADDQ $4, DX \
	ADDQ $32, DI

// func grid8AVX2(y *float32, mags *uint64, sg *uint8, d *float32, masks *uint32, n int, nt int)
//
// grid8AVX2 writes n groups of 8 elements: element j of group i is d[i]·byte j of mags[i], its
// sign bit flipped by masks[8·sg[i] + j]; nt not zero writes with non-temporal stores (y 32-byte
// aligned).
TEXT ·grid8AVX2(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), DI
	MOVQ mags+8(FP), SI
	MOVQ sg+16(FP), BX
	MOVQ d+24(FP), DX
	MOVQ masks+32(FP), AX
	MOVQ n+40(FP), CX
	MOVQ nt+48(FP), R9
	TESTQ CX, CX
	JLE g8done
	TESTQ R9, R9
	JNZ g8nt

g8loop:
	G8(VMOVUPS)
	DECQ CX
	JNZ g8loop
	JMP g8done

g8nt:
	G8(VMOVNTPS)
	DECQ CX
	JNZ g8nt
	SFENCE

g8done:
	VZEROUPPER
	RET

// I8(ST): one IQ1 group of 8: scale·(grid value + delta).
#define I8(ST) \
	VPMOVSXBD (SI), Y1 \
	VCVTDQ2PS Y1, Y1 \
	VBROADCASTSS (BX), Y2 \
	VADDPS Y2, Y1, Y1 \
	VBROADCASTSS (DX), Y0 \
	VMULPS Y1, Y0, Y1 \
	ST Y1, (DI) \
	ADDQ $8, SI \
	ADDQ $4, BX \
	ADDQ $4, DX \
	ADDQ $32, DI

// func iq1AVX2(y *float32, mags *uint64, delta *float32, d *float32, n int, nt int)
//
// iq1AVX2 writes n groups of 8 elements: element j of group i is d[i]·(int8 byte j of mags[i] +
// delta[i]); nt as for grid8AVX2.
TEXT ·iq1AVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ mags+8(FP), SI
	MOVQ delta+16(FP), BX
	MOVQ d+24(FP), DX
	MOVQ n+32(FP), CX
	MOVQ nt+40(FP), R9
	TESTQ CX, CX
	JLE i8done
	TESTQ R9, R9
	JNZ i8nt

i8loop:
	I8(VMOVUPS)
	DECQ CX
	JNZ i8loop
	JMP i8done

i8nt:
	I8(VMOVNTPS)
	DECQ CX
	JNZ i8nt
	SFENCE

i8done:
	VZEROUPPER
	RET
