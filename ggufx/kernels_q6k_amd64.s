//go:build amd64 && !purego

#include "textflag.h"

DATA q6m0f<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q6m0f<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q6m0f<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q6m0f<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q6m0f<>(SB), RODATA|NOPTR, $32

DATA q6m03<>+0(SB)/8, $0x0303030303030303
DATA q6m03<>+8(SB)/8, $0x0303030303030303
DATA q6m03<>+16(SB)/8, $0x0303030303030303
DATA q6m03<>+24(SB)/8, $0x0303030303030303
GLOBL q6m03<>(SB), RODATA|NOPTR, $32

DATA q6m32<>+0(SB)/8, $0x2020202020202020
DATA q6m32<>+8(SB)/8, $0x2020202020202020
DATA q6m32<>+16(SB)/8, $0x2020202020202020
DATA q6m32<>+24(SB)/8, $0x2020202020202020
GLOBL q6m32<>(SB), RODATA|NOPTR, $32

// Q6_K: each 128 elements take 64 bytes of ql (low 4 bits) and 32 of qh (high 2 bits); the codes
// of 32 elements at a time are assembled as bytes, q - 32 as int8, then converted and scaled by
// d·scale (16 elements a scale), one rounding, as dqQ6_K computes them.

// EMIT(ST, off): the 32 int8 codes in Y4 times the floats at (DX) (elements 0-15) and 4(DX)
// (16-31) into off(DI).
#define EMIT(ST, off) \
	VEXTRACTI128 $1, Y4, X8 \
	VPSRLDQ $8, X8, X9 \
	VPSRLDQ $8, X4, X7 \
	VPMOVSXBD X4, Y6 \
	VPMOVSXBD X7, Y7 \
	VPMOVSXBD X8, Y8 \
	VPMOVSXBD X9, Y9 \
	VCVTDQ2PS Y6, Y6 \
	VCVTDQ2PS Y7, Y7 \
	VCVTDQ2PS Y8, Y8 \
	VCVTDQ2PS Y9, Y9 \
	VBROADCASTSS (DX), Y0 \
	VBROADCASTSS 4(DX), Y1 \
	VMULPS Y0, Y6, Y6 \
	VMULPS Y0, Y7, Y7 \
	VMULPS Y1, Y8, Y8 \
	VMULPS Y1, Y9, Y9 \
	ST Y6, off(DI) \
	ST Y7, off+32(DI) \
	ST Y8, off+64(DI) \
	ST Y9, off+96(DI) \
	ADDQ $8, DX

// HALF128(ql, qh, out, ST): the 128 elements of ql at ql(SI), qh at qh(SI), into out(DI).
#define HALF128(ql, qh, out, ST) \
	VMOVDQU ql(SI), Y10 \
	VMOVDQU ql+32(SI), Y11 \
	VMOVDQU qh(SI), Y12 \
	VPAND Y15, Y10, Y4 \
	VPAND Y14, Y12, Y5 \
	VPSLLW $4, Y5, Y5 \
	VPOR Y5, Y4, Y4 \
	VPSUBB Y13, Y4, Y4 \
	EMIT(ST, out) \
	VPAND Y15, Y11, Y4 \
	VPSRLW $2, Y12, Y5 \
	VPAND Y14, Y5, Y5 \
	VPSLLW $4, Y5, Y5 \
	VPOR Y5, Y4, Y4 \
	VPSUBB Y13, Y4, Y4 \
	EMIT(ST, out+128) \
	VPSRLW $4, Y10, Y4 \
	VPAND Y15, Y4, Y4 \
	VPSRLW $4, Y12, Y5 \
	VPAND Y14, Y5, Y5 \
	VPSLLW $4, Y5, Y5 \
	VPOR Y5, Y4, Y4 \
	VPSUBB Y13, Y4, Y4 \
	EMIT(ST, out+256) \
	VPSRLW $4, Y11, Y4 \
	VPAND Y15, Y4, Y4 \
	VPSRLW $6, Y12, Y5 \
	VPAND Y14, Y5, Y5 \
	VPSLLW $4, Y5, Y5 \
	VPOR Y5, Y4, Y4 \
	VPSUBB Y13, Y4, Y4 \
	EMIT(ST, out+384)

#define Q6BLOCK(ST) \
	HALF128(0, 128, 0, ST) \
	HALF128(64, 160, 512, ST) \
	ADDQ $210, SI \
	ADDQ $1024, DI

// func q6_KAVX2(y *float32, x *byte, ds *float32, n int, nt int)
//
// q6_KAVX2 dequantizes n Q6_K blocks of x into y; ds holds each block's 16 products d·scale, in
// the order of the sub-blocks; nt not zero writes with non-temporal stores (y 32-byte aligned).
TEXT ·q6_KAVX2(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ ds+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ nt+32(FP), R9
	VMOVDQU q6m0f<>(SB), Y15
	VMOVDQU q6m03<>(SB), Y14
	VMOVDQU q6m32<>(SB), Y13
	TESTQ CX, CX
	JLE q6done
	TESTQ R9, R9
	JNZ q6nt

q6loop:
	Q6BLOCK(VMOVUPS)
	DECQ CX
	JNZ q6loop
	JMP q6done

q6nt:
	Q6BLOCK(VMOVNTPS)
	DECQ CX
	JNZ q6nt
	SFENCE

q6done:
	VZEROUPPER
	RET
