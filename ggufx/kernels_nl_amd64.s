//go:build amd64 && !purego

#include "textflag.h"

DATA nlmask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nlmask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nlmask<>(SB), RODATA|NOPTR, $16

// The kernels of the types whose 4-bit codes index a table of 16 int8 values (IQ4_NL, IQ4_XS,
// NVFP4): VPSHUFB looks the codes up, and each value is that int8 converted to float32 times its
// scale, one rounding, as the Go kernels compute it. X13 holds the table, X15 the nibble mask.

// LOOKUP4 turns the 16 code bytes in X1 into 32 int32 values in Y4-Y7: the low nibbles' values
// (bytes 0-7, 8-15) then the high nibbles'.
#define LOOKUP4 \
	VPAND X15, X1, X2 \
	VPSRLW $4, X1, X3 \
	VPAND X15, X3, X3 \
	VPSHUFB X2, X13, X2 \
	VPSHUFB X3, X13, X3 \
	VPMOVSXBD X2, Y4 \
	VPSRLDQ $8, X2, X2 \
	VPMOVSXBD X2, Y5 \
	VPMOVSXBD X3, Y6 \
	VPSRLDQ $8, X3, X3 \
	VPMOVSXBD X3, Y7

// STORE2 converts Y(a), Y(b) to floats, multiplies them by S and stores them at off(DI) with ST
// (VMOVUPS, or VMOVNTPS for a 32-byte aligned destination that does not stay in the cache).
#define STORE2(A, B, S, off, ST) \
	VCVTDQ2PS A, A \
	VCVTDQ2PS B, B \
	VMULPS S, A, A \
	VMULPS S, B, B \
	ST A, off(DI) \
	ST B, off+32(DI)

// GROUP32 dequantizes the 32 elements whose 16 code bytes are at (R8), scaled by the float at
// (DX), into 128 bytes at (DI); then DI and DX move on.
#define GROUP32(ST) \
	VMOVDQU (R8), X1 \
	LOOKUP4 \
	VBROADCASTSS (DX), Y0 \
	STORE2(Y4, Y5, Y0, 0, ST) \
	STORE2(Y6, Y7, Y0, 64, ST) \
	ADDQ $128, DI \
	ADDQ $4, DX

// func nl4AVX2(y *float32, x *byte, d *float32, tab *int8, n int, per int, stride int, skip int, nt int)
//
// nl4AVX2 dequantizes n groups of 32 elements (16 code bytes each: element j in the low nibble of
// byte j, j+16 in its high nibble) into y, group i scaled by d[i]. The first group's codes are at
// x; each next one's stride bytes on, and skip bytes more after every per groups (a block's
// header). IQ4_NL: x = the first block + 2, per 1, stride 18, skip 0; IQ4_XS: x = the first
// block + 8, per 8, stride 16, skip 8.
TEXT ·nl4AVX2(SB), NOSPLIT, $0-72
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), R8
	MOVQ d+16(FP), DX
	MOVQ tab+24(FP), AX
	MOVQ n+32(FP), CX
	MOVQ per+40(FP), R10
	MOVQ stride+48(FP), R11
	MOVQ skip+56(FP), R12
	MOVQ nt+64(FP), R9
	VMOVDQU nlmask<>(SB), X15
	VMOVDQU (AX), X13
	TESTQ CX, CX
	JLE nldone
	MOVQ R10, BX
	TESTQ R9, R9
	JNZ nlnt

nlloop:
	GROUP32(VMOVUPS)
	ADDQ R11, R8
	DECQ BX
	JNZ nlnext
	ADDQ R12, R8
	MOVQ R10, BX

nlnext:
	DECQ CX
	JNZ nlloop
	JMP nldone

nlnt:
	GROUP32(VMOVNTPS)
	ADDQ R11, R8
	DECQ BX
	JNZ nlntnext
	ADDQ R12, R8
	MOVQ R10, BX

nlntnext:
	DECQ CX
	JNZ nlnt
	SFENCE

nldone:
	VZEROUPPER
	RET

// HALF32 dequantizes two 16-element sub-blocks of NVFP4 (16 code bytes at off(SI): in each 8,
// element j in the low nibble of byte j, j+8 in its high nibble) scaled by the floats at s(DX)
// and s+4(DX) into 128 bytes at off2(DI).
#define HALF32(off, s, off2, ST) \
	VMOVDQU off(SI), X1 \
	VPAND X15, X1, X2 \
	VPSRLW $4, X1, X3 \
	VPAND X15, X3, X3 \
	VPUNPCKLQDQ X3, X2, X8 \
	VPUNPCKHQDQ X3, X2, X9 \
	VPSHUFB X8, X13, X8 \
	VPSHUFB X9, X13, X9 \
	VPMOVSXBD X8, Y4 \
	VPSRLDQ $8, X8, X8 \
	VPMOVSXBD X8, Y5 \
	VPMOVSXBD X9, Y6 \
	VPSRLDQ $8, X9, X9 \
	VPMOVSXBD X9, Y7 \
	VBROADCASTSS s(DX), Y0 \
	VBROADCASTSS s+4(DX), Y1 \
	STORE2(Y4, Y5, Y0, off2, ST) \
	STORE2(Y6, Y7, Y1, off2+64, ST)

// func nvfp4AVX2(y *float32, x *byte, d *float32, tab *int8, n int, nt int)
//
// nvfp4AVX2 dequantizes n NVFP4 blocks of x into y, the sub-blocks scaled by d (4 floats a block).
TEXT ·nvfp4AVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ d+16(FP), DX
	MOVQ tab+24(FP), AX
	MOVQ n+32(FP), CX
	MOVQ nt+40(FP), R9
	VMOVDQU nlmask<>(SB), X15
	VMOVDQU (AX), X13
	TESTQ CX, CX
	JLE nvdone
	TESTQ R9, R9
	JNZ nvnt

nvloop:
	HALF32(4, 0, 0, VMOVUPS)
	HALF32(20, 8, 128, VMOVUPS)
	ADDQ $36, SI
	ADDQ $256, DI
	ADDQ $16, DX
	DECQ CX
	JNZ nvloop
	JMP nvdone

nvnt:
	HALF32(4, 0, 0, VMOVNTPS)
	HALF32(20, 8, 128, VMOVNTPS)
	ADDQ $36, SI
	ADDQ $256, DI
	ADDQ $16, DX
	DECQ CX
	JNZ nvnt
	SFENCE

nvdone:
	VZEROUPPER
	RET
