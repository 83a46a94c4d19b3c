//go:build !purego

#include "textflag.h"

// TRANS32 transposes one 8×8 block of 4-byte words into Y8..Y15: source column k (k = 0..7) is
// the 8 words at S + k·sCol, and Y8+j holds row j of the result. Uses R9 = sCol, R11 = 3·sCol,
// AX and Y0..Y15.
#define TRANS32(S) \
	LEAQ (S)(R9*4), AX; \
	VMOVUPS (S), Y0; \
	VMOVUPS (S)(R9*1), Y1; \
	VMOVUPS (S)(R9*2), Y2; \
	VMOVUPS (S)(R11*1), Y3; \
	VMOVUPS (AX), Y4; \
	VMOVUPS (AX)(R9*1), Y5; \
	VMOVUPS (AX)(R9*2), Y6; \
	VMOVUPS (AX)(R11*1), Y7; \
	VUNPCKLPS Y1, Y0, Y8; \
	VUNPCKHPS Y1, Y0, Y9; \
	VUNPCKLPS Y3, Y2, Y10; \
	VUNPCKHPS Y3, Y2, Y11; \
	VUNPCKLPS Y5, Y4, Y12; \
	VUNPCKHPS Y5, Y4, Y13; \
	VUNPCKLPS Y7, Y6, Y14; \
	VUNPCKHPS Y7, Y6, Y15; \
	VSHUFPS $0x44, Y10, Y8, Y0; \
	VSHUFPS $0xEE, Y10, Y8, Y1; \
	VSHUFPS $0x44, Y11, Y9, Y2; \
	VSHUFPS $0xEE, Y11, Y9, Y3; \
	VSHUFPS $0x44, Y14, Y12, Y4; \
	VSHUFPS $0xEE, Y14, Y12, Y5; \
	VSHUFPS $0x44, Y15, Y13, Y6; \
	VSHUFPS $0xEE, Y15, Y13, Y7; \
	VPERM2F128 $0x20, Y4, Y0, Y8; \
	VPERM2F128 $0x20, Y5, Y1, Y9; \
	VPERM2F128 $0x20, Y6, Y2, Y10; \
	VPERM2F128 $0x20, Y7, Y3, Y11; \
	VPERM2F128 $0x31, Y4, Y0, Y12; \
	VPERM2F128 $0x31, Y5, Y1, Y13; \
	VPERM2F128 $0x31, Y6, Y2, Y14; \
	VPERM2F128 $0x31, Y7, Y3, Y15

// PARKAREA points R14 at the 512 bytes of the frame where TILE32 parks rows: 512-byte aligned, in
// a frame of 1 KiB, so that they never straddle a page boundary. Where they did (one stack depth
// in eight), the non-temporal tiles ran at half speed on a Zen 4 VM: 5.8 GB/s against 10.6-11.0
// for a 4096×4096 float32 transpose on one processor, whichever caller's stack depth it was
// (BENCHMARKS.md). R14 is free here: it holds g only in Go's internal ABI, and the wrapper that
// calls an assembly (ABI0) function restores it.
#define PARKAREA \
	LEAQ 511(SP), R14; \
	ANDQ $~511, R14

// PARK32 keeps the rows of a TRANS32 in the 256 bytes at O(R14), in the frame (see PARKAREA).
#define PARK32(O) \
	VMOVUPS Y8, (O+0)(R14); \
	VMOVUPS Y9, (O+32)(R14); \
	VMOVUPS Y10, (O+64)(R14); \
	VMOVUPS Y11, (O+96)(R14); \
	VMOVUPS Y12, (O+128)(R14); \
	VMOVUPS Y13, (O+160)(R14); \
	VMOVUPS Y14, (O+192)(R14); \
	VMOVUPS Y15, (O+224)(R14)

// LINES32 writes 8 whole 64-byte destination lines with ST (VMOVUPS, or VMOVNTPS for 32-byte
// aligned rows), back to back: row j is row j parked at O(R14) (its first 32 bytes) and Y8+j (the
// next 32), at D + j·dRow.
#define LINES32(D, O, ST) \
	LEAQ (D)(R8*4), BX; \
	VMOVUPS (O+0)(R14), Y0; \
	ST Y0, (D); \
	ST Y8, 32(D); \
	VMOVUPS (O+32)(R14), Y1; \
	ST Y1, (D)(R8*1); \
	ST Y9, 32(D)(R8*1); \
	VMOVUPS (O+64)(R14), Y2; \
	ST Y2, (D)(R8*2); \
	ST Y10, 32(D)(R8*2); \
	VMOVUPS (O+96)(R14), Y3; \
	ST Y3, (D)(R10*1); \
	ST Y11, 32(D)(R10*1); \
	VMOVUPS (O+128)(R14), Y4; \
	ST Y4, (BX); \
	ST Y12, 32(BX); \
	VMOVUPS (O+160)(R14), Y5; \
	ST Y5, (BX)(R8*1); \
	ST Y13, 32(BX)(R8*1); \
	VMOVUPS (O+192)(R14), Y6; \
	ST Y6, (BX)(R8*2); \
	ST Y14, 32(BX)(R8*2); \
	VMOVUPS (O+224)(R14), Y7; \
	ST Y7, (BX)(R10*1); \
	ST Y15, 32(BX)(R10*1)

// PREFETCH16 and PREFETCH8 ask for the source lines of the 16 (8) columns pf = DX bytes ahead
// of S: those of a tile a few tiles on. A tile's source columns are lines a whole row apart,
// more streams than the hardware prefetchers follow, so without this every line is a demand
// miss. A prefetch past the end of the memory is harmless: it never faults.
#define PREFETCH16(S) \
	LEAQ (S)(DX*1), R12; \
	PREFETCHT2 (R12); \
	PREFETCHT2 (R12)(R9*1); \
	PREFETCHT2 (R12)(R9*2); \
	PREFETCHT2 (R12)(R11*1); \
	LEAQ (R12)(R9*4), R12; \
	PREFETCHT2 (R12); \
	PREFETCHT2 (R12)(R9*1); \
	PREFETCHT2 (R12)(R9*2); \
	PREFETCHT2 (R12)(R11*1); \
	LEAQ (R12)(R9*4), R12; \
	PREFETCHT2 (R12); \
	PREFETCHT2 (R12)(R9*1); \
	PREFETCHT2 (R12)(R9*2); \
	PREFETCHT2 (R12)(R11*1); \
	LEAQ (R12)(R9*4), R12; \
	PREFETCHT2 (R12); \
	PREFETCHT2 (R12)(R9*1); \
	PREFETCHT2 (R12)(R9*2); \
	PREFETCHT2 (R12)(R11*1)

#define PREFETCH8(S) \
	LEAQ (S)(DX*1), R12; \
	PREFETCHT2 (R12); \
	PREFETCHT2 (R12)(R9*1); \
	PREFETCHT2 (R12)(R9*2); \
	PREFETCHT2 (R12)(R11*1); \
	LEAQ (R12)(R9*4), R12; \
	PREFETCHT2 (R12); \
	PREFETCHT2 (R12)(R9*1); \
	PREFETCHT2 (R12)(R9*2); \
	PREFETCHT2 (R12)(R11*1)

// HALF64(S, A0, A1, A2, A3, T0, T1, T2, T3) transposes the 4×4 block of 8-byte words whose
// source column k is the 4 words at S + k·sCol into A0..A3 (row j of the block in Aj), with
// T0..T3 as scratch. Uses R9 = sCol, R11 = 3·sCol.
#define HALF64(S, A0, A1, A2, A3, T0, T1, T2, T3) \
	VMOVUPD (S), A0; \
	VMOVUPD (S)(R9*1), A1; \
	VMOVUPD (S)(R9*2), A2; \
	VMOVUPD (S)(R11*1), A3; \
	VUNPCKLPD A1, A0, T0; \
	VUNPCKHPD A1, A0, T1; \
	VUNPCKLPD A3, A2, T2; \
	VUNPCKHPD A3, A2, T3; \
	VPERM2F128 $0x20, T2, T0, A0; \
	VPERM2F128 $0x20, T3, T1, A1; \
	VPERM2F128 $0x31, T2, T0, A2; \
	VPERM2F128 $0x31, T3, T1, A3

// BLOCK64 transposes one 4×4 block of 8-byte words: source column k (k = 0..3) is the 4 words
// at S + k·sCol, destination row j the 4 words at D + j·dRow. Uses R8 = dRow, R10 = 3·dRow,
// R9 = sCol, R11 = 3·sCol and Y0..Y7.
#define BLOCK64(S, D, ST) \
	HALF64(S, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7); \
	ST Y0, (D); \
	ST Y1, (D)(R8*1); \
	ST Y2, (D)(R8*2); \
	ST Y3, (D)(R10*1)

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

	PCALIGN $32

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

	PCALIGN $32

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

	PCALIGN $32

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

// TILE32(ST) transposes the 16×16 tile of 4-byte words at SI into DI with stores ST, then moves
// SI and DI on to the next tile: the two halves of source columns 0..7 (destination rows 0..7
// and 8..15) are transposed one after the other and parked in the frame, then those of columns
// 8..15, each completing the 64-byte lines of 8 destination rows, which are written whole, back to
// back. Uses the registers of TRANS32 and LINES32, R12, R13 and R14 (PARKAREA).
#define TILE32(ST) \
	PREFETCH16(SI); \
	TRANS32(SI); \
	PARK32(0); \
	LEAQ 32(SI), R12; \
	TRANS32(R12); \
	PARK32(256); \
	LEAQ (SI)(R9*8), R12; \
	TRANS32(R12); \
	LINES32(DI, 0, ST); \
	LEAQ 32(SI)(R9*8), R12; \
	TRANS32(R12); \
	LEAQ (DI)(R8*8), R13; \
	LINES32(R13, 256, ST); \
	ADDQ $64, DI; \
	LEAQ (SI)(R9*8), SI; \
	LEAQ (SI)(R9*8), SI

// func transposeTiles32(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)
//
// Per tile (TILE32), every source line is read, and every destination line written, in one go,
// which matters where the 16 lines of a tile share an L1 cache set (rows a multiple of 4 KiB
// apart).
TEXT ·transposeTiles32(SB), $1024-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ tiles+16(FP), CX
	MOVQ dRow+24(FP), R8
	MOVQ sCol+32(FP), R9
	MOVQ pf+40(FP), DX
	LEAQ (R8)(R8*2), R10
	LEAQ (R9)(R9*2), R11
	PARKAREA
	TESTQ CX, CX
	JLE t32done

	PCALIGN $32

t32loop:
	TILE32(VMOVUPS)
	DECQ CX
	JNZ t32loop

t32done:
	VZEROUPPER
	RET

// func transposeTiles32NT(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)
//
// transposeTiles32 with non-temporal stores: dst and dRow must be multiples of 64.
TEXT ·transposeTiles32NT(SB), $1024-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ tiles+16(FP), CX
	MOVQ dRow+24(FP), R8
	MOVQ sCol+32(FP), R9
	MOVQ pf+40(FP), DX
	LEAQ (R8)(R8*2), R10
	LEAQ (R9)(R9*2), R11
	PARKAREA
	TESTQ CX, CX
	JLE t32ntdone

	PCALIGN $32

t32ntloop:
	TILE32(VMOVNTPS)
	DECQ CX
	JNZ t32ntloop

t32ntdone:
	VZEROUPPER
	RET

// func transposeTiles64(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)
//
// Transposes tiles 8×8 tiles of 8-byte words side by side: for tile b, column k (0..7) is the 8
// consecutive words at src + (8b+k)·sCol, and it becomes word k of each of the 8 rows
// dst + r·dRow + 64b. Each tile reads 8 whole source lines and writes 8 whole destination lines
// (when 64-byte aligned).
TEXT ·transposeTiles64(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ tiles+16(FP), CX
	MOVQ dRow+24(FP), R8
	MOVQ sCol+32(FP), R9
	MOVQ pf+40(FP), DX
	LEAQ (R8)(R8*2), R10
	LEAQ (R9)(R9*2), R11
	TESTQ CX, CX
	JLE t64done

	PCALIGN $32

t64loop:
	PREFETCH8(SI)
	BLOCK64(SI, DI, VMOVUPD)
	LEAQ (SI)(R9*4), R12
	LEAQ 32(DI), R13
	BLOCK64(R12, R13, VMOVUPD)
	LEAQ 32(SI), R12
	LEAQ (DI)(R8*4), R13
	BLOCK64(R12, R13, VMOVUPD)
	LEAQ 32(SI)(R9*4), R12
	LEAQ 32(DI)(R8*4), R13
	BLOCK64(R12, R13, VMOVUPD)
	ADDQ $64, DI
	LEAQ (SI)(R9*8), SI
	DECQ CX
	JNZ t64loop

t64done:
	VZEROUPPER
	RET

// func transposeTiles64NT(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)
//
// transposeTiles64 with non-temporal stores: dst and dRow must be multiples of 32.
TEXT ·transposeTiles64NT(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ tiles+16(FP), CX
	MOVQ dRow+24(FP), R8
	MOVQ sCol+32(FP), R9
	MOVQ pf+40(FP), DX
	LEAQ (R8)(R8*2), R10
	LEAQ (R9)(R9*2), R11
	TESTQ CX, CX
	JLE t64ntdone

	PCALIGN $32

t64ntloop:
	PREFETCH8(SI)
	BLOCK64(SI, DI, VMOVNTPD)
	LEAQ (SI)(R9*4), R12
	LEAQ 32(DI), R13
	BLOCK64(R12, R13, VMOVNTPD)
	LEAQ 32(SI), R12
	LEAQ (DI)(R8*4), R13
	BLOCK64(R12, R13, VMOVNTPD)
	LEAQ 32(SI)(R9*4), R12
	LEAQ 32(DI)(R8*4), R13
	BLOCK64(R12, R13, VMOVNTPD)
	ADDQ $64, DI
	LEAQ (SI)(R9*8), SI
	DECQ CX
	JNZ t64ntloop

t64ntdone:
	VZEROUPPER
	RET

// func copyCached(dst, src unsafe.Pointer, n int)
//
// Copies n bytes (a multiple of 128) with ordinary 32-byte loads and stores, which leave the
// destination in the cache: Go's copy switches to non-temporal stores from 1 MiB, which is
// slower when source and destination fit in the last-level cache.
TEXT ·copyCached(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $7, CX
	JZ   ccdone

	PCALIGN $32

ccloop:
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	VMOVDQU Y0, (DI)
	VMOVDQU Y1, 32(DI)
	VMOVDQU Y2, 64(DI)
	VMOVDQU Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  ccloop

ccdone:
	VZEROUPPER
	RET

// func cvtFloat64ToFloat32(dst *float32, src *float64, n int)
TEXT ·cvtFloat64ToFloat32(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   d2sdone

	PCALIGN $32

d2sloop:
	VCVTPD2PSY (SI), X0
	VCVTPD2PSY 32(SI), X1
	VMOVUPS X0, (DI)
	VMOVUPS X1, 16(DI)
	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  d2sloop

d2sdone:
	VZEROUPPER
	RET

// func cvtFloat32ToFloat64(dst *float64, src *float32, n int)
TEXT ·cvtFloat32ToFloat64(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   s2ddone

	PCALIGN $32

s2dloop:
	VCVTPS2PD (SI), Y0
	VCVTPS2PD 16(SI), Y1
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  s2dloop

s2ddone:
	VZEROUPPER
	RET

// func storeFence()
TEXT ·storeFence(SB), NOSPLIT, $0-0
	SFENCE
	RET

// func gather2x64(dst, src unsafe.Pointer, n int)
//
// dst[i] = src[2i] for n 8-byte words, n a multiple of 4: two loads of 4 words, one interleave
// and one permute per 4 words out. It reads src[0 .. 2n-1].
TEXT ·gather2x64(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $2, CX
	JZ   g64done

	PCALIGN $32

g64loop:
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y1
	VUNPCKLPD Y1, Y0, Y2 // s0 s4 s2 s6
	VPERMPD $0xD8, Y2, Y2 // s0 s2 s4 s6
	VMOVUPD Y2, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  g64loop

g64done:
	VZEROUPPER
	RET

// func gather2x32(dst, src unsafe.Pointer, n int)
//
// dst[i] = src[2i] for n 4-byte words, n a multiple of 8. It reads src[0 .. 2n-1].
TEXT ·gather2x32(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   g32done

	PCALIGN $32

g32loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VSHUFPS $0x88, Y1, Y0, Y2 // s0 s2 s8 s10 | s4 s6 s12 s14
	VPERMPD $0xD8, Y2, Y2     // s0 s2 s4 s6 s8 s10 s12 s14
	VMOVUPS Y2, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  g32loop

g32done:
	VZEROUPPER
	RET

// The AVX-512 tile kernels. With 64-byte registers a tile moves whole cache lines: each source
// line is read by one load and each destination line written by one store, so that a line is
// wanted in the L1 cache for one instruction only. The AVX kernels above touch each line twice,
// once per 32-byte half, and where the rows are a multiple of 4 KiB apart (every power-of-two
// width from 1024 float32) the 16 source lines, or the 16 destination lines, of a tile fall into
// one set of the 8-way cache, where they can push each other out between the two halves.

// ZTRANS32(S) transposes one 16×16 tile of 4-byte words into Z0..Z15: source column k (k =
// 0..15) is the 16 words at S + k·sCol, and Z0+j holds row j of the result. Uses R9 = sCol,
// R11 = 3·sCol, AX and Z0..Z31: 16 loads, then 64 shuffles in four rounds (pairs of columns,
// pairs of pairs, then the 128-bit lanes of four registers as a 4×4 transpose in two rounds).
#define ZTRANS32(S) \
	LEAQ (S)(R9*4), AX; \
	VMOVUPS (S), Z0; \
	VMOVUPS (S)(R9*1), Z1; \
	VMOVUPS (S)(R9*2), Z2; \
	VMOVUPS (S)(R11*1), Z3; \
	VMOVUPS (AX), Z4; \
	VMOVUPS (AX)(R9*1), Z5; \
	VMOVUPS (AX)(R9*2), Z6; \
	VMOVUPS (AX)(R11*1), Z7; \
	LEAQ (AX)(R9*4), AX; \
	VMOVUPS (AX), Z8; \
	VMOVUPS (AX)(R9*1), Z9; \
	VMOVUPS (AX)(R9*2), Z10; \
	VMOVUPS (AX)(R11*1), Z11; \
	LEAQ (AX)(R9*4), AX; \
	VMOVUPS (AX), Z12; \
	VMOVUPS (AX)(R9*1), Z13; \
	VMOVUPS (AX)(R9*2), Z14; \
	VMOVUPS (AX)(R11*1), Z15; \
	VUNPCKLPS Z1, Z0, Z16; \
	VUNPCKHPS Z1, Z0, Z17; \
	VUNPCKLPS Z3, Z2, Z18; \
	VUNPCKHPS Z3, Z2, Z19; \
	VUNPCKLPS Z5, Z4, Z20; \
	VUNPCKHPS Z5, Z4, Z21; \
	VUNPCKLPS Z7, Z6, Z22; \
	VUNPCKHPS Z7, Z6, Z23; \
	VUNPCKLPS Z9, Z8, Z24; \
	VUNPCKHPS Z9, Z8, Z25; \
	VUNPCKLPS Z11, Z10, Z26; \
	VUNPCKHPS Z11, Z10, Z27; \
	VUNPCKLPS Z13, Z12, Z28; \
	VUNPCKHPS Z13, Z12, Z29; \
	VUNPCKLPS Z15, Z14, Z30; \
	VUNPCKHPS Z15, Z14, Z31; \
	VSHUFPS $0x44, Z18, Z16, Z0; \
	VSHUFPS $0xEE, Z18, Z16, Z1; \
	VSHUFPS $0x44, Z19, Z17, Z2; \
	VSHUFPS $0xEE, Z19, Z17, Z3; \
	VSHUFPS $0x44, Z22, Z20, Z4; \
	VSHUFPS $0xEE, Z22, Z20, Z5; \
	VSHUFPS $0x44, Z23, Z21, Z6; \
	VSHUFPS $0xEE, Z23, Z21, Z7; \
	VSHUFPS $0x44, Z26, Z24, Z8; \
	VSHUFPS $0xEE, Z26, Z24, Z9; \
	VSHUFPS $0x44, Z27, Z25, Z10; \
	VSHUFPS $0xEE, Z27, Z25, Z11; \
	VSHUFPS $0x44, Z30, Z28, Z12; \
	VSHUFPS $0xEE, Z30, Z28, Z13; \
	VSHUFPS $0x44, Z31, Z29, Z14; \
	VSHUFPS $0xEE, Z31, Z29, Z15; \
	VSHUFF32X4 $0x44, Z4, Z0, Z16; \
	VSHUFF32X4 $0xEE, Z4, Z0, Z17; \
	VSHUFF32X4 $0x44, Z12, Z8, Z18; \
	VSHUFF32X4 $0xEE, Z12, Z8, Z19; \
	VSHUFF32X4 $0x44, Z5, Z1, Z20; \
	VSHUFF32X4 $0xEE, Z5, Z1, Z21; \
	VSHUFF32X4 $0x44, Z13, Z9, Z22; \
	VSHUFF32X4 $0xEE, Z13, Z9, Z23; \
	VSHUFF32X4 $0x44, Z6, Z2, Z24; \
	VSHUFF32X4 $0xEE, Z6, Z2, Z25; \
	VSHUFF32X4 $0x44, Z14, Z10, Z26; \
	VSHUFF32X4 $0xEE, Z14, Z10, Z27; \
	VSHUFF32X4 $0x44, Z7, Z3, Z28; \
	VSHUFF32X4 $0xEE, Z7, Z3, Z29; \
	VSHUFF32X4 $0x44, Z15, Z11, Z30; \
	VSHUFF32X4 $0xEE, Z15, Z11, Z31; \
	VSHUFF32X4 $0x88, Z18, Z16, Z0; \
	VSHUFF32X4 $0xDD, Z18, Z16, Z4; \
	VSHUFF32X4 $0x88, Z19, Z17, Z8; \
	VSHUFF32X4 $0xDD, Z19, Z17, Z12; \
	VSHUFF32X4 $0x88, Z22, Z20, Z1; \
	VSHUFF32X4 $0xDD, Z22, Z20, Z5; \
	VSHUFF32X4 $0x88, Z23, Z21, Z9; \
	VSHUFF32X4 $0xDD, Z23, Z21, Z13; \
	VSHUFF32X4 $0x88, Z26, Z24, Z2; \
	VSHUFF32X4 $0xDD, Z26, Z24, Z6; \
	VSHUFF32X4 $0x88, Z27, Z25, Z10; \
	VSHUFF32X4 $0xDD, Z27, Z25, Z14; \
	VSHUFF32X4 $0x88, Z30, Z28, Z3; \
	VSHUFF32X4 $0xDD, Z30, Z28, Z7; \
	VSHUFF32X4 $0x88, Z31, Z29, Z11; \
	VSHUFF32X4 $0xDD, Z31, Z29, Z15

// ZROWS16 stores rows Z0..Z15 at D + j·dRow with ST (VMOVUPS, or VMOVNTPS for 64-byte aligned
// rows). Uses R8 = dRow, R10 = 3·dRow and BX.
#define ZROWS16(D, ST) \
	MOVQ D, BX; \
	ST Z0, (BX); \
	ST Z1, (BX)(R8*1); \
	ST Z2, (BX)(R8*2); \
	ST Z3, (BX)(R10*1); \
	LEAQ (BX)(R8*4), BX; \
	ST Z4, (BX); \
	ST Z5, (BX)(R8*1); \
	ST Z6, (BX)(R8*2); \
	ST Z7, (BX)(R10*1); \
	LEAQ (BX)(R8*4), BX; \
	ST Z8, (BX); \
	ST Z9, (BX)(R8*1); \
	ST Z10, (BX)(R8*2); \
	ST Z11, (BX)(R10*1); \
	LEAQ (BX)(R8*4), BX; \
	ST Z12, (BX); \
	ST Z13, (BX)(R8*1); \
	ST Z14, (BX)(R8*2); \
	ST Z15, (BX)(R10*1)

// ZTRANS64(S) transposes one 8×8 tile of 8-byte words into Z24..Z31: source column k (k = 0..7)
// is the 8 words at S + k·sCol, and Z24+j holds row j of the result. Uses R9, R11, AX and
// Z0..Z31: 8 loads and 24 shuffles.
#define ZTRANS64(S) \
	LEAQ (S)(R9*4), AX; \
	VMOVUPD (S), Z0; \
	VMOVUPD (S)(R9*1), Z1; \
	VMOVUPD (S)(R9*2), Z2; \
	VMOVUPD (S)(R11*1), Z3; \
	VMOVUPD (AX), Z4; \
	VMOVUPD (AX)(R9*1), Z5; \
	VMOVUPD (AX)(R9*2), Z6; \
	VMOVUPD (AX)(R11*1), Z7; \
	VUNPCKLPD Z1, Z0, Z8; \
	VUNPCKHPD Z1, Z0, Z9; \
	VUNPCKLPD Z3, Z2, Z10; \
	VUNPCKHPD Z3, Z2, Z11; \
	VUNPCKLPD Z5, Z4, Z12; \
	VUNPCKHPD Z5, Z4, Z13; \
	VUNPCKLPD Z7, Z6, Z14; \
	VUNPCKHPD Z7, Z6, Z15; \
	VSHUFF64X2 $0x44, Z10, Z8, Z16; \
	VSHUFF64X2 $0xEE, Z10, Z8, Z17; \
	VSHUFF64X2 $0x44, Z14, Z12, Z18; \
	VSHUFF64X2 $0xEE, Z14, Z12, Z19; \
	VSHUFF64X2 $0x44, Z11, Z9, Z20; \
	VSHUFF64X2 $0xEE, Z11, Z9, Z21; \
	VSHUFF64X2 $0x44, Z15, Z13, Z22; \
	VSHUFF64X2 $0xEE, Z15, Z13, Z23; \
	VSHUFF64X2 $0x88, Z18, Z16, Z24; \
	VSHUFF64X2 $0xDD, Z18, Z16, Z26; \
	VSHUFF64X2 $0x88, Z19, Z17, Z28; \
	VSHUFF64X2 $0xDD, Z19, Z17, Z30; \
	VSHUFF64X2 $0x88, Z22, Z20, Z25; \
	VSHUFF64X2 $0xDD, Z22, Z20, Z27; \
	VSHUFF64X2 $0x88, Z23, Z21, Z29; \
	VSHUFF64X2 $0xDD, Z23, Z21, Z31

// ZROWS8 stores rows Z24..Z31 at D + j·dRow with ST. Uses R8, R10 and BX.
#define ZROWS8(D, ST) \
	LEAQ (D)(R8*4), BX; \
	ST Z24, (D); \
	ST Z25, (D)(R8*1); \
	ST Z26, (D)(R8*2); \
	ST Z27, (D)(R10*1); \
	ST Z28, (BX); \
	ST Z29, (BX)(R8*1); \
	ST Z30, (BX)(R8*2); \
	ST Z31, (BX)(R10*1)

// func transposeTiles32Z(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)
TEXT ·transposeTiles32Z(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ tiles+16(FP), CX
	MOVQ dRow+24(FP), R8
	MOVQ sCol+32(FP), R9
	MOVQ pf+40(FP), DX
	LEAQ (R8)(R8*2), R10
	LEAQ (R9)(R9*2), R11
	TESTQ CX, CX
	JLE z32zdone

	PCALIGN $32

z32zloop:
	PREFETCH16(SI)
	ZTRANS32(SI)
	ZROWS16(DI, VMOVUPS)
	ADDQ $64, DI
	LEAQ (SI)(R9*8), SI
	LEAQ (SI)(R9*8), SI
	DECQ CX
	JNZ z32zloop

z32zdone:
	VZEROUPPER
	RET

// func transposeTiles32ZNT(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)
//
// transposeTiles32Z with non-temporal stores: dst and dRow must be multiples of 64.
TEXT ·transposeTiles32ZNT(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ tiles+16(FP), CX
	MOVQ dRow+24(FP), R8
	MOVQ sCol+32(FP), R9
	MOVQ pf+40(FP), DX
	LEAQ (R8)(R8*2), R10
	LEAQ (R9)(R9*2), R11
	TESTQ CX, CX
	JLE z32zntdone

	PCALIGN $32

z32zntloop:
	PREFETCH16(SI)
	ZTRANS32(SI)
	ZROWS16(DI, VMOVNTPS)
	ADDQ $64, DI
	LEAQ (SI)(R9*8), SI
	LEAQ (SI)(R9*8), SI
	DECQ CX
	JNZ z32zntloop

z32zntdone:
	VZEROUPPER
	RET

// func transposeTiles64Z(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)
TEXT ·transposeTiles64Z(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ tiles+16(FP), CX
	MOVQ dRow+24(FP), R8
	MOVQ sCol+32(FP), R9
	MOVQ pf+40(FP), DX
	LEAQ (R8)(R8*2), R10
	LEAQ (R9)(R9*2), R11
	TESTQ CX, CX
	JLE z64zdone

	PCALIGN $32

z64zloop:
	PREFETCH8(SI)
	ZTRANS64(SI)
	ZROWS8(DI, VMOVUPD)
	ADDQ $64, DI
	LEAQ (SI)(R9*8), SI
	DECQ CX
	JNZ z64zloop

z64zdone:
	VZEROUPPER
	RET

// func transposeTiles64ZNT(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)
//
// transposeTiles64Z with non-temporal stores: dst and dRow must be multiples of 64.
TEXT ·transposeTiles64ZNT(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ tiles+16(FP), CX
	MOVQ dRow+24(FP), R8
	MOVQ sCol+32(FP), R9
	MOVQ pf+40(FP), DX
	LEAQ (R8)(R8*2), R10
	LEAQ (R9)(R9*2), R11
	TESTQ CX, CX
	JLE z64zntdone

	PCALIGN $32

z64zntloop:
	PREFETCH8(SI)
	ZTRANS64(SI)
	ZROWS8(DI, VMOVNTPD)
	ADDQ $64, DI
	LEAQ (SI)(R9*8), SI
	DECQ CX
	JNZ z64zntloop

z64zntdone:
	VZEROUPPER
	RET



// func cvtFloat64ToFloat32NT(dst *float32, src *float64, n int)
TEXT ·cvtFloat64ToFloat32NT(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   d2sntdone

	PCALIGN $32

d2sntloop:
	VCVTPD2PSY (SI), X0
	VCVTPD2PSY 32(SI), X1
	VINSERTF128 $1, X1, Y0, Y0
	VCVTPD2PSY 64(SI), X2
	VCVTPD2PSY 96(SI), X3
	VINSERTF128 $1, X3, Y2, Y2
	VMOVNTPS Y0, (DI)
	VMOVNTPS Y2, 32(DI)
	ADDQ $128, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  d2sntloop
	SFENCE

d2sntdone:
	VZEROUPPER
	RET

// func cvtFloat32ToFloat64NT(dst *float64, src *float32, n int)
TEXT ·cvtFloat32ToFloat64NT(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   s2dntdone

	PCALIGN $32

s2dntloop:
	VCVTPS2PD (SI), Y0
	VCVTPS2PD 16(SI), Y1
	VMOVNTPD Y0, (DI)
	VMOVNTPD Y1, 32(DI)
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  s2dntloop
	SFENCE

s2dntdone:
	VZEROUPPER
	RET

// func cvtFloat32ToFloat16NT(dst *uint16, src *float32, n int)
TEXT ·cvtFloat32ToFloat16NT(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   f2hntdone

	PCALIGN $32

f2hntloop:
	VMOVUPS (SI), Y0
	VCVTPS2PH $0, Y0, X1 // imm 0: round to nearest even
	VMOVUPS 32(SI), Y2
	VCVTPS2PH $0, Y2, X3
	VINSERTI128 $1, X3, Y1, Y1
	VMOVNTDQ Y1, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  f2hntloop
	SFENCE

f2hntdone:
	VZEROUPPER
	RET

// func cvtFloat16ToFloat32NT(dst *float32, src *uint16, n int)
TEXT ·cvtFloat16ToFloat32NT(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   h2fntdone

	PCALIGN $32

h2fntloop:
	VCVTPH2PS (SI), Y0
	VMOVNTPS Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  h2fntloop
	SFENCE

h2fntdone:
	VZEROUPPER
	RET

// func copyRowsNT(dst, src unsafe.Pointer, rows, n, dRow, sRow int)
//
// Copies rows rows of n bytes (n a multiple of 64), row r from src + r·sRow to dst + r·dRow,
// with non-temporal stores: dst and dRow are multiples of 32.
TEXT ·copyRowsNT(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), CX
	MOVQ n+24(FP), DX
	MOVQ dRow+32(FP), R8
	MOVQ sRow+40(FP), R9
	TESTQ CX, CX
	JLE crntdone
	TESTQ DX, DX
	JLE crntdone

crntrow:
	XORQ AX, AX

crntline:
	VMOVUPS (SI)(AX*1), Y0
	VMOVUPS 32(SI)(AX*1), Y1
	VMOVNTPS Y0, (DI)(AX*1)
	VMOVNTPS Y1, 32(DI)(AX*1)
	ADDQ $64, AX
	CMPQ AX, DX
	JLT crntline
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ CX
	JNZ crntrow

crntdone:
	VZEROUPPER
	RET

// ROWS64(D, ST) stores four whole 64-byte destination lines, row j from Yj (its first half) and
// Y(8+j) (its second), at D + j·dRow. Uses R8 = dRow, R10 = 3·dRow.
#define ROWS64(D, ST) \
	ST Y0, (D); \
	ST Y8, 32(D); \
	ST Y1, (D)(R8*1); \
	ST Y9, 32(D)(R8*1); \
	ST Y2, (D)(R8*2); \
	ST Y10, 32(D)(R8*2); \
	ST Y3, (D)(R10*1); \
	ST Y11, 32(D)(R10*1)

// func transposeTiles64L(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)
//
// transposeTiles64 with each destination line written whole, its two halves back to back, with
// non-temporal stores (dst and dRow multiples of 64): the 4×4 blocks of source columns 0..3 and
// 4..7 of the same four destination rows are transposed into Y0..Y3 and Y8..Y11 before either is
// stored, so that every line leaves the write-combining buffer complete.
TEXT ·transposeTiles64L(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ tiles+16(FP), CX
	MOVQ dRow+24(FP), R8
	MOVQ sCol+32(FP), R9
	MOVQ pf+40(FP), DX
	LEAQ (R8)(R8*2), R10
	LEAQ (R9)(R9*2), R11
	TESTQ CX, CX
	JLE t64ldone

	PCALIGN $32

t64lloop:
	PREFETCH8(SI)
	HALF64(SI, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	LEAQ (SI)(R9*4), R12
	HALF64(R12, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	ROWS64(DI, VMOVNTPD)
	LEAQ 32(SI), R12
	HALF64(R12, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	LEAQ 32(SI)(R9*4), R12
	HALF64(R12, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	LEAQ (DI)(R8*4), R13
	ROWS64(R13, VMOVNTPD)
	ADDQ $64, DI
	LEAQ (SI)(R9*8), SI
	DECQ CX
	JNZ t64lloop

t64ldone:
	VZEROUPPER
	RET
