//go:build !purego

#include "textflag.h"

// The frame (call.go): fn at 0, a1 … a8 at 8 … 64, the result at 72.

GLOBL ·trampolineABI0(SB), NOPTR|RODATA, $8
DATA ·trampolineABI0(SB)/8, $trampoline<>(SB)

// trampoline is called by runtime.asmcgocall on the system stack with the AAPCS64 ABI: R0 holds
// the frame, RSP is 16-byte aligned. It calls fn(a1, …, a8) with a1 … a8 in R0 … R7. It saves the
// frame pointer and link register (R29, R30) and the frame's address in 32 bytes of stack, and
// uses only registers the C ABI lets a callee clobber (R0 … R17).
TEXT trampoline<>(SB), NOSPLIT|NOFRAME, $0-0
	SUB  $32, RSP
	STP  (R29, R30), 0(RSP)
	MOVD R0, 16(RSP)
	MOVD RSP, R29
	MOVD R0, R9
	MOVD 8(R9), R0    // a1
	MOVD 16(R9), R1   // a2
	MOVD 24(R9), R2   // a3
	MOVD 32(R9), R3   // a4
	MOVD 40(R9), R4   // a5
	MOVD 48(R9), R5   // a6
	MOVD 56(R9), R6   // a7
	MOVD 64(R9), R7   // a8
	MOVD 0(R9), R10   // fn
	BL   (R10)
	MOVD 16(RSP), R9
	MOVD R0, 72(R9)   // the result
	LDP  0(RSP), (R29, R30)
	ADD  $32, RSP
	MOVD $0, R0
	RET
