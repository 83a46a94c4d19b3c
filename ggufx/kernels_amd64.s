//go:build amd64 && !purego

#include "textflag.h"

DATA q4mask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q4mask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q4mask<>(SB), RODATA|NOPTR, $16

DATA q4eight<>+0(SB)/4, $8
GLOBL q4eight<>(SB), RODATA|NOPTR, $4

// SCALE4 converts the 32 integers in Y4-Y7 to floats, multiplies them by the scale in Y0 and
// stores them at (DI) with ST: VMOVUPS, or VMOVNTPS (non-temporal, for a 32-byte aligned
// destination that does not stay in the cache).
#define SCALE4(ST) \
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
	ST Y7, 96(DI)

// Q4BODY dequantizes the Q4_0 block at (SI) with the scale at (DX) into the 128 bytes at (DI),
// with the store ST (see SCALE4).
#define Q4BODY(ST) \
	VBROADCASTSS (DX), Y0 \
	VMOVDQU 2(SI), X1 \
	VPAND X15, X1, X2 \
	VPSRLW $4, X1, X3 \
	VPAND X15, X3, X3 \
	VPMOVZXBD X2, Y4 \
	VPSRLDQ $8, X2, X2 \
	VPMOVZXBD X2, Y5 \
	VPMOVZXBD X3, Y6 \
	VPSRLDQ $8, X3, X3 \
	VPMOVZXBD X3, Y7 \
	VPSUBD Y14, Y4, Y4 \
	VPSUBD Y14, Y5, Y5 \
	VPSUBD Y14, Y6, Y6 \
	VPSUBD Y14, Y7, Y7 \
	SCALE4(ST) \
	ADDQ $18, SI \
	ADDQ $128, DI \
	ADDQ $4, DX

// func q4_0AVX2(y *float32, x *byte, d *float32, n int, nt int)
TEXT ·q4_0AVX2(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ d+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ nt+32(FP), R9
	VMOVDQU q4mask<>(SB), X15
	VPBROADCASTD q4eight<>(SB), Y14
	TESTQ CX, CX
	JLE done
	TESTQ R9, R9
	JNZ ntloop

loop:
	Q4BODY(VMOVUPS)
	DECQ CX
	JNZ loop
	JMP done

ntloop:
	Q4BODY(VMOVNTPS)
	DECQ CX
	JNZ ntloop
	SFENCE

done:
	VZEROUPPER
	RET

// EIGHT converts the 8 bytes in the low half of X (nibbles) to floats, value·D - M, into (at)(DI)
// with the store ST (see SCALE4).
#define EIGHT(X, D, M, at, ST) \
	VPMOVZXBD X, Y8 \
	VCVTDQ2PS Y8, Y8 \
	VMULPS D, Y8, Y8 \
	VSUBPS M, Y8, Y8 \
	ST Y8, at(DI)

// SIXTEEN dequantizes 16 bytes of qs at (R8): low nibbles with Y0, Y1 into lo(DI), high
// nibbles with Y2, Y3 into lo+128(DI).
#define SIXTEEN(off, lo, lo2, hi, hi2, ST) \
	VMOVDQU off(R8), X4 \
	VPAND X15, X4, X5 \
	VPSRLW $4, X4, X6 \
	VPAND X15, X6, X6 \
	EIGHT(X5, Y0, Y1, lo, ST) \
	VPSRLDQ $8, X5, X5 \
	EIGHT(X5, Y0, Y1, lo2, ST) \
	EIGHT(X6, Y2, Y3, hi, ST) \
	VPSRLDQ $8, X6, X6 \
	EIGHT(X6, Y2, Y3, hi2, ST)

// KGROUP dequantizes one group of 64 elements of a Q4_K block with the store ST.
#define KGROUP(ST) \
	VBROADCASTSS 0(DX), Y0 \
	VBROADCASTSS 4(DX), Y1 \
	VBROADCASTSS 8(DX), Y2 \
	VBROADCASTSS 12(DX), Y3 \
	SIXTEEN(0, 0, 32, 128, 160, ST) \
	SIXTEEN(16, 64, 96, 192, 224, ST) \
	ADDQ $32, R8 \
	ADDQ $256, DI \
	ADDQ $16, DX

// func q4_KAVX2(y *float32, x *byte, dm *float32, n int, nt int)
TEXT ·q4_KAVX2(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dm+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ nt+32(FP), R9
	VMOVDQU q4mask<>(SB), X15
	TESTQ CX, CX
	JLE kdone
	TESTQ R9, R9
	JNZ ntblock

kblock:
	LEAQ 16(SI), R8
	MOVQ $4, BX

kgroup:
	KGROUP(VMOVUPS)
	DECQ BX
	JNZ kgroup
	ADDQ $144, SI
	DECQ CX
	JNZ kblock
	JMP kdone

ntblock:
	LEAQ 16(SI), R8
	MOVQ $4, BX

ntgroup:
	KGROUP(VMOVNTPS)
	DECQ BX
	JNZ ntgroup
	ADDQ $144, SI
	DECQ CX
	JNZ ntblock
	SFENCE

kdone:
	VZEROUPPER
	RET

// Q8BODY dequantizes the Q8_0 block at (SI) with the scale at (DX) into the 128 bytes at (DI),
// with the store ST (see SCALE4).
#define Q8BODY(ST) \
	VBROADCASTSS (DX), Y0 \
	VPMOVSXBD 2(SI), Y4 \
	VPMOVSXBD 10(SI), Y5 \
	VPMOVSXBD 18(SI), Y6 \
	VPMOVSXBD 26(SI), Y7 \
	SCALE4(ST) \
	ADDQ $34, SI \
	ADDQ $128, DI \
	ADDQ $4, DX

// func q8_0AVX2(y *float32, x *byte, d *float32, n int, nt int)
TEXT ·q8_0AVX2(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ d+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ nt+32(FP), R9
	TESTQ CX, CX
	JLE q8done
	TESTQ R9, R9
	JNZ q8ntloop

q8loop:
	Q8BODY(VMOVUPS)
	DECQ CX
	JNZ q8loop
	JMP q8done

q8ntloop:
	Q8BODY(VMOVNTPS)
	DECQ CX
	JNZ q8ntloop
	SFENCE

q8done:
	VZEROUPPER
	RET
