//go:build amd64 && !purego

#include "textflag.h"

DATA tq2mask<>+0(SB)/8, $0x0303030303030303
DATA tq2mask<>+8(SB)/8, $0x0303030303030303
DATA tq2mask<>+16(SB)/8, $0x0303030303030303
DATA tq2mask<>+24(SB)/8, $0x0303030303030303
GLOBL tq2mask<>(SB), RODATA|NOPTR, $32

// q - 1 for the codes 0-3, in both lanes for VPSHUFB
DATA tq2vals<>+0(SB)/8, $0x00000000020100ff
DATA tq2vals<>+8(SB)/8, $0x0000000000000000
DATA tq2vals<>+16(SB)/8, $0x00000000020100ff
DATA tq2vals<>+24(SB)/8, $0x0000000000000000
GLOBL tq2vals<>(SB), RODATA|NOPTR, $32

// TQL(sh, off, ST): the 32 elements of bits sh, sh+1 of the 32 bytes in Y1, (q - 1)·d, into
// off(DI).
#define TQL(sh, off, ST) \
	VPSRLW $sh, Y1, Y2 \
	VPAND Y15, Y2, Y2 \
	VPSHUFB Y2, Y13, Y2 \
	VPMOVSXBD X2, Y4 \
	VPSRLDQ $8, X2, X5 \
	VPMOVSXBD X5, Y5 \
	VEXTRACTI128 $1, Y2, X6 \
	VPSRLDQ $8, X6, X7 \
	VPMOVSXBD X6, Y6 \
	VPMOVSXBD X7, Y7 \
	VCVTDQ2PS Y4, Y4 \
	VCVTDQ2PS Y5, Y5 \
	VCVTDQ2PS Y6, Y6 \
	VCVTDQ2PS Y7, Y7 \
	VMULPS Y0, Y4, Y4 \
	VMULPS Y0, Y5, Y5 \
	VMULPS Y0, Y6, Y6 \
	VMULPS Y0, Y7, Y7 \
	ST Y4, off(DI) \
	ST Y5, off+32(DI) \
	ST Y6, off+64(DI) \
	ST Y7, off+96(DI)

// TQBLOCK(ST): one TQ2_0 block at (SI), scale at (DX), 1 KiB out at (DI).
#define TQBLOCK(ST) \
	VBROADCASTSS (DX), Y0 \
	VMOVDQU (SI), Y1 \
	TQL(0, 0, ST) \
	TQL(2, 128, ST) \
	TQL(4, 256, ST) \
	TQL(6, 384, ST) \
	VMOVDQU 32(SI), Y1 \
	TQL(0, 512, ST) \
	TQL(2, 640, ST) \
	TQL(4, 768, ST) \
	TQL(6, 896, ST) \
	ADDQ $66, SI \
	ADDQ $1024, DI \
	ADDQ $4, DX

// func tq2AVX2(y *float32, x *byte, d *float32, n int, nt int)
//
// tq2AVX2 dequantizes n TQ2_0 blocks of x into y, block i scaled by d[i]: element 32l + m of
// each 128 is bits 2l, 2l+1 of byte m, q - 1 converted to float32 times d (one rounding, as the
// Go kernel and ggml); nt not zero writes with non-temporal stores (y 32-byte aligned).
TEXT ·tq2AVX2(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ d+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ nt+32(FP), R9
	VMOVDQU tq2mask<>(SB), Y15
	VMOVDQU tq2vals<>(SB), Y13
	TESTQ CX, CX
	JLE tqdone
	TESTQ R9, R9
	JNZ tqnt

tqloop:
	TQBLOCK(VMOVUPS)
	DECQ CX
	JNZ tqloop
	JMP tqdone

tqnt:
	TQBLOCK(VMOVNTPS)
	DECQ CX
	JNZ tqnt
	SFENCE

tqdone:
	VZEROUPPER
	RET

// I8BODY(ST): the 32 int8 at (SI) times the float at (DX) into 128 bytes at (DI).
#define I8BODY(ST) \
	VBROADCASTSS (DX), Y0 \
	VPMOVSXBD 0(SI), Y4 \
	VPMOVSXBD 8(SI), Y5 \
	VPMOVSXBD 16(SI), Y6 \
	VPMOVSXBD 24(SI), Y7 \
	VCVTDQ2PS Y4, Y4 \
	VCVTDQ2PS Y5, Y5 \
	VCVTDQ2PS Y6, Y6 \
	VCVTDQ2PS Y7, Y7 \
	VMULPS Y0, Y4, Y4 \
	VMULPS Y0, Y5, Y5 \
	VMULPS Y0, Y6, Y6 \
	VMULPS Y0, Y7, Y7 \
	ST Y4, (DI) \
	ST Y5, 32(DI) \
	ST Y6, 64(DI) \
	ST Y7, 96(DI) \
	ADDQ $32, SI \
	ADDQ $128, DI \
	ADDQ $4, DX

// func i8AVX2(y *float32, q *int8, d *float32, n int, nt int)
//
// i8AVX2 writes n groups of 32 elements: element j of group i is float32(q[32i + j])·d[i], one
// rounding; nt as for tq2AVX2.
TEXT ·i8AVX2(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ d+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ nt+32(FP), R9
	TESTQ CX, CX
	JLE c8done
	TESTQ R9, R9
	JNZ c8nt

c8loop:
	I8BODY(VMOVUPS)
	DECQ CX
	JNZ c8loop
	JMP c8done

c8nt:
	I8BODY(VMOVNTPS)
	DECQ CX
	JNZ c8nt
	SFENCE

c8done:
	VZEROUPPER
	RET

DATA tq1w<>+0(SB)/8, $0x00ff00ff00ff00ff
DATA tq1w<>+8(SB)/8, $0x00ff00ff00ff00ff
DATA tq1w<>+16(SB)/8, $0x00ff00ff00ff00ff
DATA tq1w<>+24(SB)/8, $0x00ff00ff00ff00ff
GLOBL tq1w<>(SB), RODATA|NOPTR, $32

// the 16-bit words 3, 1, 3^1, 3^2, 3^3, 3^4 (each broadcast with VPBROADCASTW)
DATA tq1k<>+0(SB)/2, $3
DATA tq1k<>+2(SB)/2, $1
DATA tq1k<>+4(SB)/2, $3
DATA tq1k<>+6(SB)/2, $9
DATA tq1k<>+8(SB)/2, $27
DATA tq1k<>+10(SB)/2, $81
GLOBL tq1k<>(SB), RODATA|NOPTR, $12

// TRIT(S, P, off, ST): trit n of the 16 bytes widened to words in S, the multiplier 3^n in P:
// xi = (uint8(b·3^n)·3) >> 8, then (xi - 1)·d into the 64 bytes at off(DI).
#define TRIT(S, P, off, ST) \
	VPMULLW P, S, Y4 \
	VPAND Y15, Y4, Y4 \
	VPMULLW Y14, Y4, Y4 \
	VPSRLW $8, Y4, Y4 \
	VPSUBW Y13, Y4, Y4 \
	VEXTRACTI128 $1, Y4, X5 \
	VPMOVSXWD X4, Y6 \
	VPMOVSXWD X5, Y7 \
	VCVTDQ2PS Y6, Y6 \
	VCVTDQ2PS Y7, Y7 \
	VMULPS Y0, Y6, Y6 \
	VMULPS Y0, Y7, Y7 \
	ST Y6, off(DI) \
	ST Y7, off+32(DI)

#define TQ1BLOCK(ST) \
	VBROADCASTSS (DX), Y0 \
	VPMOVZXBW 0(SI), Y1 \
	VPMOVZXBW 16(SI), Y2 \
	VPMOVZXBW 32(SI), Y3 \
	TRIT(Y1, Y8, 0, ST) \
	TRIT(Y2, Y8, 64, ST) \
	TRIT(Y3, Y8, 640, ST) \
	TRIT(Y1, Y9, 128, ST) \
	TRIT(Y2, Y9, 192, ST) \
	TRIT(Y3, Y9, 704, ST) \
	TRIT(Y1, Y10, 256, ST) \
	TRIT(Y2, Y10, 320, ST) \
	TRIT(Y3, Y10, 768, ST) \
	TRIT(Y1, Y11, 384, ST) \
	TRIT(Y2, Y11, 448, ST) \
	TRIT(Y3, Y11, 832, ST) \
	TRIT(Y1, Y12, 512, ST) \
	TRIT(Y2, Y12, 576, ST) \
	TRIT(Y3, Y12, 896, ST) \
	ADDQ $54, SI \
	ADDQ $1024, DI \
	ADDQ $4, DX

// func tq1AVX2(y *float32, x *byte, d *float32, n int, nt int)
//
// tq1AVX2 dequantizes the first 240 elements of each of n TQ1_0 blocks of x (those of qs) into
// y, block i scaled by d[i]; the last 16 (of qh) are left to the caller; nt as for tq2AVX2.
TEXT ·tq1AVX2(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ d+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ nt+32(FP), R9
	VMOVDQU tq1w<>(SB), Y15
	VPBROADCASTW tq1k<>+0(SB), Y14
	VPSRLW $7, Y15, Y13
	VPBROADCASTW tq1k<>+2(SB), Y8
	VPBROADCASTW tq1k<>+4(SB), Y9
	VPBROADCASTW tq1k<>+6(SB), Y10
	VPBROADCASTW tq1k<>+8(SB), Y11
	VPBROADCASTW tq1k<>+10(SB), Y12
	TESTQ CX, CX
	JLE t1done
	TESTQ R9, R9
	JNZ t1nt

t1loop:
	TQ1BLOCK(VMOVUPS)
	DECQ CX
	JNZ t1loop
	JMP t1done

t1nt:
	TQ1BLOCK(VMOVNTPS)
	DECQ CX
	JNZ t1nt
	SFENCE

t1done:
	VZEROUPPER
	RET
