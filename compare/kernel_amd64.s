//go:build amd64 && !purego

#include "textflag.h"

// The AVX2 kernels of kernel_amd64.go. Each adds the squares of its groups
// of four pairs to the four float64 partials *e, which Y0 holds, with one
// VMULPD and one VADDPD per group: the operations, rounding and order of
// the Go loops in kernel.go, so the partials come out bit for bit the same.
// Two groups (8 pairs) go per iteration; a failing test on 8 retries the
// first group alone, so the run stops at the first group that is not
// equal and finite, exactly where the Go loop stops.

// SQUARE_ADD adds the squares of the 4 float32 in XMM x to the partials
// Y0, through Y4.
#define SQUARE_ADD(x) \
	VCVTPS2PD x, Y4; \
	VMULPD    Y4, Y4, Y4; \
	VADDPD    Y4, Y0, Y0

// SQUARE_ADD8 adds the squares of the 8 float32 in YMM y (low group first)
// to the partials Y0, through X5 and Y4.
#define SQUARE_ADD8(y, x) \
	VEXTRACTF128 $1, y, X5; \
	SQUARE_ADD(x); \
	SQUARE_ADD(X5)

// func equalRun32AVX2(a, b *float32, n int, e *[4]float64) int
TEXT ·equalRun32AVX2(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ e+24(FP), DX
	VMOVUPD (DX), Y0
	MOVL $0x7F800000, AX // exponent bits: all set for ±Inf and NaN
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	XORQ AX, AX
loop8:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT  group4
	VMOVUPS (SI)(AX*4), Y1
	VCMPPS $4, (DI)(AX*4), Y1, Y2 // a ≠ b, or unordered (NaN)
	VPAND Y15, Y1, Y3
	VPCMPEQD Y15, Y3, Y3 // a is ±Inf or NaN
	VPOR Y3, Y2, Y2
	VPTEST Y2, Y2
	JNZ group4
	SQUARE_ADD8(Y1, X1)
	MOVQ BX, AX
	JMP loop8
group4:
	LEAQ 4(AX), BX
	CMPQ BX, CX
	JGT  done32
	VMOVUPS (SI)(AX*4), X1
	VCMPPS $4, (DI)(AX*4), X1, X2
	VPAND X15, X1, X3
	VPCMPEQD X15, X3, X3
	VPOR X3, X2, X2
	VPTEST X2, X2
	JNZ done32
	SQUARE_ADD(X1)
	MOVQ BX, AX
done32:
	VMOVUPD Y0, (DX)
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

// SPECIALS16 sets XMM t to x XOR y (the bits where the words of a and b
// differ) OR the words of x whose exponent bits (mask X15) are all set.
#define SPECIALS16(x, y, t) \
	VPXOR y, x, t; \
	VPAND X15, x, X3; \
	VPCMPEQW X15, X3, X3; \
	VPOR X3, t, t

// func equalRunBF16AVX2(a, b *byte, n int, e *[4]float64) int
// n counts elements (2 bytes each). A bfloat16 is the top half of a float32.
TEXT ·equalRunBF16AVX2(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ e+24(FP), DX
	VMOVUPD (DX), Y0
	MOVL $0x7F80, AX
	VMOVD AX, X15
	VPBROADCASTW X15, X15
	XORQ AX, AX
loopBF8:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT  groupBF4
	VMOVDQU (SI)(AX*2), X1
	VMOVDQU (DI)(AX*2), X6
	SPECIALS16(X1, X6, X2)
	VPTEST X2, X2
	JNZ groupBF4
	VPMOVZXWD X1, Y1
	VPSLLD $16, Y1, Y1
	SQUARE_ADD8(Y1, X1)
	MOVQ BX, AX
	JMP loopBF8
groupBF4:
	LEAQ 4(AX), BX
	CMPQ BX, CX
	JGT  doneBF
	VMOVQ (SI)(AX*2), X1
	VMOVQ (DI)(AX*2), X6
	SPECIALS16(X1, X6, X2)
	VPTEST X2, X2
	JNZ doneBF
	VPMOVZXWD X1, X1
	VPSLLD $16, X1, X1
	SQUARE_ADD(X1)
	MOVQ BX, AX
doneBF:
	VMOVUPD Y0, (DX)
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

// SQUARE_ADD_F16 is SQUARE_ADD for float16 magnitudes shifted into float32
// bits (2⁻¹¹² times the value): the square is scaled back by 2²²⁴ (Y13),
// as equalRunF16 does.
#define SQUARE_ADD_F16(x) \
	VCVTPS2PD x, Y4; \
	VMULPD    Y4, Y4, Y4; \
	VMULPD    Y13, Y4, Y4; \
	VADDPD    Y4, Y0, Y0

// func equalRunF16AVX2(a, b *byte, n int, e *[4]float64) int
TEXT ·equalRunF16AVX2(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ e+24(FP), DX
	VMOVUPD (DX), Y0
	MOVL $0x7C00, AX
	VMOVD AX, X15
	VPBROADCASTW X15, X15
	MOVL $0x7FFF, AX // magnitude bits
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVQ $0x4DF0000000000000, AX // 2²²⁴
	VMOVQ AX, X13
	VPBROADCASTQ X13, Y13
	XORQ AX, AX
loopF8:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT  groupF4
	VMOVDQU (SI)(AX*2), X1
	VMOVDQU (DI)(AX*2), X6
	SPECIALS16(X1, X6, X2)
	VPTEST X2, X2
	JNZ groupF4
	VPMOVZXWD X1, Y1
	VPAND Y14, Y1, Y1
	VPSLLD $13, Y1, Y1
	VEXTRACTF128 $1, Y1, X5
	SQUARE_ADD_F16(X1)
	SQUARE_ADD_F16(X5)
	MOVQ BX, AX
	JMP loopF8
groupF4:
	LEAQ 4(AX), BX
	CMPQ BX, CX
	JGT  doneF
	VMOVQ (SI)(AX*2), X1
	VMOVQ (DI)(AX*2), X6
	SPECIALS16(X1, X6, X2)
	VPTEST X2, X2
	JNZ doneF
	VPMOVZXWD X1, X1
	VPAND X14, X1, X1
	VPSLLD $13, X1, X1
	SQUARE_ADD_F16(X1)
	MOVQ BX, AX
doneF:
	VMOVUPD Y0, (DX)
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET
