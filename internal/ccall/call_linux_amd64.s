//go:build !purego

#include "textflag.h"

// The frame (call.go): fn at 0, a1 … a8 at 8 … 64, the result at 72.

GLOBL ·trampolineABI0(SB), NOPTR|RODATA, $8
DATA ·trampolineABI0(SB)/8, $trampoline<>(SB)

// trampoline is called by runtime.asmcgocall on the system stack with the System V ABI: DI holds
// the frame, and SP+8 is 16-byte aligned. It calls fn(a1, …, a8): a1 … a6 in DI, SI, DX, CX, R8,
// R9, a7 and a8 on the stack; AL = 0 (no vector registers, should fn be variadic after all). It
// uses only registers the C ABI lets a callee clobber.
TEXT trampoline<>(SB), NOSPLIT|NOFRAME, $0-0
	PUSHQ BP
	MOVQ  SP, BP
	SUBQ  $32, SP     // a7, a8, the frame's address, padding: SP stays 16-byte aligned
	MOVQ  DI, 16(SP)
	MOVQ  DI, R11
	MOVQ  56(R11), AX
	MOVQ  AX, 0(SP)   // a7
	MOVQ  64(R11), AX
	MOVQ  AX, 8(SP)   // a8
	MOVQ  8(R11), DI  // a1
	MOVQ  16(R11), SI // a2
	MOVQ  24(R11), DX // a3
	MOVQ  32(R11), CX // a4
	MOVQ  40(R11), R8 // a5
	MOVQ  48(R11), R9 // a6
	MOVQ  0(R11), R10 // fn
	XORL  AX, AX
	CALL  R10
	MOVQ  16(SP), R11
	MOVQ  AX, 72(R11) // the result
	MOVQ  BP, SP
	POPQ  BP
	XORL  AX, AX
	RET
