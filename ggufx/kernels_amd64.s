//go:build amd64 && !purego

#include "textflag.h"

DATA q4mask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q4mask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q4mask<>(SB), RODATA|NOPTR, $16

DATA q4eight<>+0(SB)/4, $8
GLOBL q4eight<>(SB), RODATA|NOPTR, $4

// func q4_0AVX2(y *float32, x *byte, d *float32, n int)
TEXT ·q4_0AVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ d+16(FP), DX
	MOVQ n+24(FP), CX
	VMOVDQU q4mask<>(SB), X15
	VPBROADCASTD q4eight<>(SB), Y14
	TESTQ CX, CX
	JLE done

loop:
	VBROADCASTSS (DX), Y0
	VMOVDQU 2(SI), X1      // qs[0:16]
	VPAND X15, X1, X2      // low nibbles: elements 0-15
	VPSRLW $4, X1, X3
	VPAND X15, X3, X3      // high nibbles: elements 16-31
	VPMOVZXBD X2, Y4
	VPSRLDQ $8, X2, X2
	VPMOVZXBD X2, Y5
	VPMOVZXBD X3, Y6
	VPSRLDQ $8, X3, X3
	VPMOVZXBD X3, Y7
	VPSUBD Y14, Y4, Y4
	VPSUBD Y14, Y5, Y5
	VPSUBD Y14, Y6, Y6
	VPSUBD Y14, Y7, Y7
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VCVTDQ2PS Y6, Y6
	VCVTDQ2PS Y7, Y7
	VMULPS Y0, Y4, Y4
	VMULPS Y0, Y5, Y5
	VMULPS Y0, Y6, Y6
	VMULPS Y0, Y7, Y7
	VMOVUPS Y4, (DI)
	VMOVUPS Y5, 32(DI)
	VMOVUPS Y6, 64(DI)
	VMOVUPS Y7, 96(DI)
	ADDQ $18, SI
	ADDQ $128, DI
	ADDQ $4, DX
	DECQ CX
	JNZ loop

done:
	VZEROUPPER
	RET

// EIGHT converts the 8 bytes in the low half of X (nibbles) to floats, value·D - M, into (at)(DI).
#define EIGHT(X, D, M, at) \
	VPMOVZXBD X, Y8 \
	VCVTDQ2PS Y8, Y8 \
	VMULPS D, Y8, Y8 \
	VSUBPS M, Y8, Y8 \
	VMOVUPS Y8, at(DI)

// SIXTEEN dequantizes 16 bytes of qs at (R8): low nibbles with Y0, Y1 into lo(DI), high
// nibbles with Y2, Y3 into lo+128(DI).
#define SIXTEEN(off, lo, lo2, hi, hi2) \
	VMOVDQU off(R8), X4 \
	VPAND X15, X4, X5 \
	VPSRLW $4, X4, X6 \
	VPAND X15, X6, X6 \
	EIGHT(X5, Y0, Y1, lo) \
	VPSRLDQ $8, X5, X5 \
	EIGHT(X5, Y0, Y1, lo2) \
	EIGHT(X6, Y2, Y3, hi) \
	VPSRLDQ $8, X6, X6 \
	EIGHT(X6, Y2, Y3, hi2)

// func q4_KAVX2(y *float32, x *byte, dm *float32, n int)
TEXT ·q4_KAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dm+16(FP), DX
	MOVQ n+24(FP), CX
	VMOVDQU q4mask<>(SB), X15
	TESTQ CX, CX
	JLE kdone

kblock:
	LEAQ 16(SI), R8
	MOVQ $4, BX

kgroup:
	VBROADCASTSS 0(DX), Y0
	VBROADCASTSS 4(DX), Y1
	VBROADCASTSS 8(DX), Y2
	VBROADCASTSS 12(DX), Y3
	SIXTEEN(0, 0, 32, 128, 160)
	SIXTEEN(16, 64, 96, 192, 224)
	ADDQ $32, R8
	ADDQ $256, DI
	ADDQ $16, DX
	DECQ BX
	JNZ kgroup
	ADDQ $144, SI
	DECQ CX
	JNZ kblock

kdone:
	VZEROUPPER
	RET

// func q8_0AVX2(y *float32, x *byte, d *float32, n int)
TEXT ·q8_0AVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ d+16(FP), DX
	MOVQ n+24(FP), CX
	TESTQ CX, CX
	JLE q8done

q8loop:
	VBROADCASTSS (DX), Y0
	VPMOVSXBD 2(SI), Y4
	VPMOVSXBD 10(SI), Y5
	VPMOVSXBD 18(SI), Y6
	VPMOVSXBD 26(SI), Y7
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VCVTDQ2PS Y6, Y6
	VCVTDQ2PS Y7, Y7
	VMULPS Y0, Y4, Y4
	VMULPS Y0, Y5, Y5
	VMULPS Y0, Y6, Y6
	VMULPS Y0, Y7, Y7
	VMOVUPS Y4, (DI)
	VMOVUPS Y5, 32(DI)
	VMOVUPS Y6, 64(DI)
	VMOVUPS Y7, 96(DI)
	ADDQ $34, SI
	ADDQ $128, DI
	ADDQ $4, DX
	DECQ CX
	JNZ q8loop

q8done:
	VZEROUPPER
	RET
