//go:build !purego

#include "textflag.h"

// func transposeStrip32(dst, src unsafe.Pointer, blocks, dRow, sCol int)
//
// Per 8×8 block: load the 8 source columns (Y0..Y7), interleave pairs of columns (VUNPCKLPS,
// VUNPCKHPS), then pairs of pairs (VSHUFPS), which leaves row j of the block split between the
// 128-bit lanes of two registers; VPERM2F128 joins the halves and each row is stored whole.
TEXT ·transposeStrip32(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX
	MOVQ dRow+24(FP), R8
	MOVQ sCol+32(FP), R9
	LEAQ (R8)(R8*2), R10 // 3 rows
	LEAQ (R9)(R9*2), R11 // 3 columns
	TESTQ CX, CX
	JLE done

loop:
	LEAQ (SI)(R9*4), R12 // column 4
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R9*1), Y1
	VMOVUPS (SI)(R9*2), Y2
	VMOVUPS (SI)(R11*1), Y3
	VMOVUPS (R12), Y4
	VMOVUPS (R12)(R9*1), Y5
	VMOVUPS (R12)(R9*2), Y6
	VMOVUPS (R12)(R11*1), Y7

	// lane by lane: Y8 = c0[0] c1[0] c0[1] c1[1], Y9 = c0[2] c1[2] c0[3] c1[3], ...
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15

	// Y0 = c0..c3 of rows 0 | 4, Y1 = rows 1 | 5, Y2 = rows 2 | 6, Y3 = rows 3 | 7; Y4..Y7 the
	// same for c4..c7
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7

	// rows 0..3 from the low lanes, rows 4..7 from the high ones
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15

	LEAQ (DI)(R8*4), R13 // row 4
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(R8*1)
	VMOVUPS Y10, (DI)(R8*2)
	VMOVUPS Y11, (DI)(R10*1)
	VMOVUPS Y12, (R13)
	VMOVUPS Y13, (R13)(R8*1)
	VMOVUPS Y14, (R13)(R8*2)
	VMOVUPS Y15, (R13)(R10*1)

	ADDQ $32, DI
	LEAQ (SI)(R9*8), SI
	DECQ CX
	JNZ loop

done:
	VZEROUPPER
	RET

// func cvtFloat32ToFloat16(dst *uint16, src *float32, n int)
TEXT ·cvtFloat32ToFloat16(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   cvtdone

cvtloop:
	VMOVUPS (SI), Y0
	VCVTPS2PH $0, Y0, X1 // imm 0: round to nearest even
	VMOVDQU X1, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	DECQ CX
	JNZ  cvtloop

cvtdone:
	VZEROUPPER
	RET

// func cvtFloat16ToFloat32(dst *float32, src *uint16, n int)
TEXT ·cvtFloat16ToFloat32(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   h2fdone

h2floop:
	VCVTPH2PS (SI), Y0
	VMOVUPS Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  h2floop

h2fdone:
	VZEROUPPER
	RET

// func cpuid(leaf, sub uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET

// func xgetbv0() (a, d uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, a+0(FP)
	MOVL DX, d+4(FP)
	RET
