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

// The slow path's common case in assembly: groups of four finite pairs
// that offer no new maximum. Per group it does what block does per pair,
// in vectors of four float64 (one per lane): the sums (unfused, in block's
// order; a = b adds +0 to the terms it skips, which leaves them unchanged
// since they are never −0), the histogram, the tolerance test, and the ULP
// distance from the bit patterns in 32-bit integers (at most 2³² − 2 apart:
// |ma − mb| when the signs agree, ma + mb when they differ).

// Offsets in differState (kernel_amd64.go; TestDifferStateLayout).
#define ST_SUMS 0
#define ST_COUNTS 8
#define ST_DIFFER 16
#define ST_BEYOND 24
#define ST_FIRST 32
#define ST_MINAD 48
#define ST_MAXAD 80
#define ST_MAXULP 112
#define ST_ATOL 128
#define ST_RTOL 160
#define ST_MAXABS 192
#define ST_MAXREL 224

DATA absMask<>+0(SB)/8, $0x7FFFFFFFFFFFFFFF
DATA absMask<>+8(SB)/8, $0x7FFFFFFFFFFFFFFF
DATA absMask<>+16(SB)/8, $0x7FFFFFFFFFFFFFFF
DATA absMask<>+24(SB)/8, $0x7FFFFFFFFFFFFFFF
GLOBL absMask<>(SB), RODATA|NOPTR, $32

DATA posInf<>+0(SB)/8, $0x7FF0000000000000
DATA posInf<>+8(SB)/8, $0x7FF0000000000000
DATA posInf<>+16(SB)/8, $0x7FF0000000000000
DATA posInf<>+24(SB)/8, $0x7FF0000000000000
GLOBL posInf<>(SB), RODATA|NOPTR, $32

DATA zero64<>+0(SB)/8, $0
DATA zero64<>+8(SB)/8, $0
DATA zero64<>+16(SB)/8, $0
DATA zero64<>+24(SB)/8, $0
GLOBL zero64<>(SB), RODATA|NOPTR, $32

DATA mag32<>+0(SB)/8, $0x7FFFFFFF7FFFFFFF
DATA mag32<>+8(SB)/8, $0x7FFFFFFF7FFFFFFF
GLOBL mag32<>(SB), RODATA|NOPTR, $16

DATA one32<>+0(SB)/8, $0x0000000100000001
DATA one32<>+8(SB)/8, $0x0000000100000001
GLOBL one32<>(SB), RODATA|NOPTR, $16

DATA round16<>+0(SB)/8, $0x00007FFF00007FFF
DATA round16<>+8(SB)/8, $0x00007FFF00007FFF
GLOBL round16<>(SB), RODATA|NOPTR, $16

// ROUND_BF16 rounds the float32 magnitudes in XMM m to bfloat16 (to
// nearest, ties to even), as orderedKey does: (m + 0x7FFF + (m>>16)&1) >> 16.
#define ROUND_BF16(m) \
	VPSRLD $16, m, X12; \
	VPAND  one32<>(SB), X12, X12; \
	VPADDD X12, m, m; \
	VPADDD round16<>(SB), m, m; \
	VPSRLD $16, m, m

// ROUND_BF16_Y is ROUND_BF16 for the eight magnitudes in YMM m, with the
// constants in registers (Y27: 1, Y28: 0x7FFF).
#define ROUND_BF16_Y(m) \
	VPSRLD $16, m, Y12; \
	VPANDD Y27, Y12, Y12; \
	VPADDD Y12, m, m; \
	VPADDD Y28, m, m; \
	VPSRLD $16, m, m

// COUNT2 adds one to the histogram buckets (R9) of the two quadwords of
// XMM x, through BX.
#define COUNT2(x) \
	VMOVQ   x, BX; \
	INCL    (R9)(BX*4); \
	VPEXTRQ $1, x, BX; \
	INCL    (R9)(BX*4)

// ULP_MAX takes the ULP distances of the float32 bit patterns a and b
// (whose keys ma and mb are) into the lane maxima acc: |ma − mb| where the
// signs agree, ma + mb where they differ. It overwrites a, b and ma.
#define ULP_MAX(a, b, ma, mb, acc) \
	VPXOR     b, a, a; \
	VPSRAD    $31, a, a; \
	VPADDD    mb, ma, b; \
	VPSUBD    mb, ma, ma; \
	VPABSD    ma, ma; \
	VPBLENDVB a, b, ma, ma; \
	VPMAXUD   ma, acc, acc

// STORE_STATE writes the partials Y0–Y3, the lane extremes Y5, Y6, X7 and
// the counts R10–R12 back to the differState at R8, and returns AX, the
// index where the loop stopped.
#define STORE_STATE \
	MOVQ    ST_SUMS(R8), DX; \
	VMOVUPD Y0, 0(DX); \
	VMOVUPD Y1, 32(DX); \
	VMOVUPD Y2, 64(DX); \
	VMOVUPD Y3, 96(DX); \
	VMOVUPD Y5, ST_MINAD(R8); \
	VMOVUPD Y6, ST_MAXAD(R8); \
	VMOVDQU X7, ST_MAXULP(R8); \
	MOVQ    R10, ST_DIFFER(R8); \
	MOVQ    R11, ST_BEYOND(R8); \
	MOVQ    R12, ST_FIRST(R8); \
	VZEROUPPER; \
	MOVQ    AX, ret+48(FP); \
	RET

// func differRun32AVX2(a, b *float32, from, to int, st *differState, mode ulpMode) int
//
// Registers: Y0–Y4 the partials (sqD, sqA, sqB, ab, eq); Y5, Y6 the least
// and largest |a−b| of pairs that differ; X7 the largest ULP distance per
// lane; R9 the histogram; R10, R11, R12 the pairs that differ, those
// beyond the tolerance and the first of these (−1: none yet); R13 the
// ulpMode: bit 1 bfloat16 keys, bits 2 and 3 round a and b to them; AX
// the index of the next pair, from its argument from (R14) up to to (CX).
// Indices count from a and b, so the first index needs no offset.
TEXT ·differRun32AVX2(SB), NOSPLIT, $0-56
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ from+16(FP), AX
	MOVQ to+24(FP), CX
	MOVQ st+32(FP), R8
	MOVBQZX mode+40(FP), R13
	MOVQ ST_SUMS(R8), DX
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	VMOVUPD 128(DX), Y4
	VMOVUPD ST_MINAD(R8), Y5
	VMOVUPD ST_MAXAD(R8), Y6
	VMOVDQU ST_MAXULP(R8), X7
	MOVQ ST_COUNTS(R8), R9
	MOVQ ST_DIFFER(R8), R10
	MOVQ ST_BEYOND(R8), R11
	MOVQ ST_FIRST(R8), R12
	MOVQ AX, R14                       // from

loop:
	LEAQ 4(AX), BX
	CMPQ BX, CX
	JGT  done
	VCVTPS2PD (SI)(AX*4), Y10          // a
	VCVTPS2PD (DI)(AX*4), Y11          // b
	VSUBPD Y10, Y11, Y12               // d = b − a: 0 only where a = b, ±Inf or NaN where a or b is
	VANDPD absMask<>(SB), Y12, Y13     // |d|
	VANDPD absMask<>(SB), Y10, Y14     // |a|
	VCMPPD $0x1E, zero64<>(SB), Y13, Y15 // differ: |d| > 0 (not NaN)
	VMOVMSKPD Y15, DX
	TESTQ DX, DX
	JNZ differs
	CMPQ AX, R14
	JNE done // an equal group after others (or ±Inf, NaN): back to Go

differs:
	// A new maximum (|d| ≥ maxAbs; for a pair that differs, |d| ≥
	// maxRel·|a|, which holds for |a| = 0 unless maxRel is +Inf, when such
	// a pair can only tie) goes to block, and so does ±Inf or NaN on either
	// side: |d| is then +Inf or NaN, and "not |d| < maxAbs" holds.
	VMULPD ST_MAXREL(R8), Y14, Y8
	VCMPPD $0x1D, Y8, Y13, Y8          // |d| ≥ maxRel·|a|
	VANDPD Y15, Y8, Y8
	VCMPPD $0x15, ST_MAXABS(R8), Y13, Y9 // not |d| < maxAbs (NLT_UQ)
	VORPD Y9, Y8, Y8
	VPTEST Y8, Y8
	JNZ done
	// beyond the tolerance: |d| > atol + rtol·|a|
	VMULPD ST_RTOL(R8), Y14, Y8
	VADDPD ST_ATOL(R8), Y8, Y8
	VCMPPD $0x1E, Y8, Y13, Y8
	VMOVMSKPD Y8, BX
	TESTQ BX, BX
	JNZ beyond

counted:
	VMULPD Y12, Y12, Y12
	VADDPD Y12, Y0, Y0                 // sqD += d²
	VMULPD Y10, Y10, Y8                // a²
	VMAXPD Y13, Y6, Y6
	CMPQ DX, $15
	JNE someEqual
	// every pair differs: no masks (adding +0 and taking the minimum with
	// +Inf, which the masks do for equal pairs, change nothing)
	ADDQ $4, R10
	VADDPD Y8, Y1, Y1                  // sqA += a²
	VMULPD Y11, Y11, Y8
	VADDPD Y8, Y2, Y2                  // sqB += b²
	VMULPD Y11, Y10, Y8
	VADDPD Y8, Y3, Y3                  // ab += a·b
	VMINPD Y13, Y5, Y5
	JMP histogram

someEqual:
	POPCNTQ DX, DX
	ADDQ DX, R10
	VANDPD Y15, Y8, Y9
	VADDPD Y9, Y1, Y1                  // sqA += a² where a ≠ b
	VANDNPD Y8, Y15, Y8
	VADDPD Y8, Y4, Y4                  // eq += a² where a = b
	VMULPD Y11, Y11, Y8
	VANDPD Y15, Y8, Y8
	VADDPD Y8, Y2, Y2                  // sqB += b² where a ≠ b
	VMULPD Y11, Y10, Y8
	VANDPD Y15, Y8, Y8
	VADDPD Y8, Y3, Y3                  // ab += a·b where a ≠ b
	VANDNPD posInf<>(SB), Y15, Y8      // +Inf where a = b
	VORPD Y13, Y8, Y8
	VMINPD Y8, Y5, Y5

histogram:
	// bucket: the top 16 bits of |d| (0 where a = b: the caller takes
	// those back)
	VPSRLQ $48, Y13, Y8
	COUNT2(X8)
	VEXTRACTI128 $1, Y8, X8
	COUNT2(X8)
	// ULP distance
	VMOVDQU (SI)(AX*4), X8
	VMOVDQU (DI)(AX*4), X9
	VPAND mag32<>(SB), X8, X10         // magnitudes
	VPAND mag32<>(SB), X9, X11
	BTQ $1, R13
	JCC keys                           // float32 keys
	BTQ $2, R13
	JCS roundA
	VPSRLD $16, X10, X10               // a is bfloat16: its key is its top half
	JMP sideB

roundA:
	ROUND_BF16(X10)

sideB:
	BTQ $3, R13
	JCS roundB
	VPSRLD $16, X11, X11
	JMP keys

roundB:
	ROUND_BF16(X11)

keys:
	ULP_MAX(X8, X9, X10, X11, X7)
	ADDQ $4, AX
	JMP loop

beyond:
	TESTQ R12, R12
	JNS  tally
	BSFQ BX, R12
	ADDQ AX, R12

tally:
	POPCNTQ BX, BX
	ADDQ BX, R11
	JMP counted

done:
	MOVQ ST_SUMS(R8), DX
	VMOVUPD Y4, 128(DX)
	STORE_STATE

// func differRun32AVX512(a, b *float32, from, to int, st *differState, mode ulpMode) int
//
// differRun32AVX2 for eight pairs at a time, where the machine has
// AVX-512 (F, DQ, VL): it stops before any eight with an equal pair,
// ±Inf, NaN or a new maximum, which differRun32AVX2 then takes four at a
// time. With every pair differing there are no masks: the products go
// into the same four-lane partials Y0–Y4, the first four pairs' then the
// next four's, as two groups would. Z5, Z6 and Y7 hold eight lanes of the
// least and largest |a−b| and the largest ULP distance, folded to four at
// the end; Z20–Z25 and Y26–Y28 hold the constants.
TEXT ·differRun32AVX512(SB), NOSPLIT, $0-56
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ from+16(FP), AX
	MOVQ to+24(FP), CX
	MOVQ st+32(FP), R8
	MOVBQZX mode+40(FP), R13
	MOVQ ST_SUMS(R8), DX
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	VBROADCASTF64X4 ST_MINAD(R8), Z5
	VBROADCASTF64X4 ST_MAXAD(R8), Z6
	VBROADCASTI128 ST_MAXULP(R8), Y7
	VBROADCASTSD absMask<>(SB), Z20
	VBROADCASTSD ST_MAXREL(R8), Z21
	VBROADCASTSD ST_MAXABS(R8), Z22
	VBROADCASTSD ST_RTOL(R8), Z23
	VBROADCASTSD ST_ATOL(R8), Z24
	VPXORQ Z25, Z25, Z25
	VPBROADCASTD mag32<>(SB), Y26
	VPBROADCASTD one32<>(SB), Y27
	VPBROADCASTD round16<>(SB), Y28
	MOVQ ST_COUNTS(R8), R9
	MOVQ ST_DIFFER(R8), R10
	MOVQ ST_BEYOND(R8), R11
	MOVQ ST_FIRST(R8), R12

loop8:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT  done8
	VCVTPS2PD (SI)(AX*4), Z10          // a
	VCVTPS2PD (DI)(AX*4), Z11          // b
	VSUBPD Z10, Z11, Z12               // d = b − a
	VANDPD Z20, Z12, Z13               // |d|
	VANDPD Z20, Z10, Z14               // |a|
	VCMPPD $0x1E, Z25, Z13, K1         // |d| > 0 (not NaN)
	KORTESTB K1, K1
	JCC  done8                         // some pair equal, ±Inf or NaN
	VMULPD Z21, Z14, Z8
	VCMPPD $0x1D, Z8, Z13, K2          // |d| ≥ maxRel·|a|
	VCMPPD $0x15, Z22, Z13, K3         // not |d| < maxAbs
	KORTESTB K3, K2
	JNZ  done8                         // a new maximum
	VMULPD Z23, Z14, Z8
	VADDPD Z24, Z8, Z8
	VCMPPD $0x1E, Z8, Z13, K4          // beyond: |d| > atol + rtol·|a|
	KMOVB K4, BX
	TESTQ BX, BX
	JNZ  beyond8

counted8:
	ADDQ $8, R10
	VMULPD Z12, Z12, Z8
	VEXTRACTF64X4 $1, Z8, Y9
	VADDPD Y8, Y0, Y0                  // sqD += d², first four
	VADDPD Y9, Y0, Y0                  // then the next four
	VMULPD Z10, Z10, Z8
	VEXTRACTF64X4 $1, Z8, Y9
	VADDPD Y8, Y1, Y1                  // sqA += a²
	VADDPD Y9, Y1, Y1
	VMULPD Z11, Z11, Z8
	VEXTRACTF64X4 $1, Z8, Y9
	VADDPD Y8, Y2, Y2                  // sqB += b²
	VADDPD Y9, Y2, Y2
	VMULPD Z11, Z10, Z8
	VEXTRACTF64X4 $1, Z8, Y9
	VADDPD Y8, Y3, Y3                  // ab += a·b
	VADDPD Y9, Y3, Y3
	VMAXPD Z13, Z6, Z6
	VMINPD Z13, Z5, Z5
	// histogram bucket: the top 16 bits of |d|
	VPSRLQ $48, Z13, Z8
	COUNT2(X8)
	VEXTRACTI32X4 $1, Z8, X9
	COUNT2(X9)
	VEXTRACTI32X4 $2, Z8, X9
	COUNT2(X9)
	VEXTRACTI32X4 $3, Z8, X9
	COUNT2(X9)
	// ULP distance, as in differRun32AVX2, eight lanes
	VMOVDQU (SI)(AX*4), Y8
	VMOVDQU (DI)(AX*4), Y9
	VPANDD Y26, Y8, Y10                // magnitudes
	VPANDD Y26, Y9, Y11
	BTQ $1, R13
	JCC keys8                          // float32 keys
	BTQ $2, R13
	JCS roundA8
	VPSRLD $16, Y10, Y10
	JMP sideB8

roundA8:
	ROUND_BF16_Y(Y10)

sideB8:
	BTQ $3, R13
	JCS roundB8
	VPSRLD $16, Y11, Y11
	JMP keys8

roundB8:
	ROUND_BF16_Y(Y11)

keys8:
	ULP_MAX(Y8, Y9, Y10, Y11, Y7)
	ADDQ $8, AX
	JMP loop8

beyond8:
	TESTQ R12, R12
	JNS  tally8
	BSFQ BX, R12
	ADDQ AX, R12

tally8:
	POPCNTQ BX, BX
	ADDQ BX, R11
	JMP counted8

done8:
	VEXTRACTF64X4 $1, Z5, Y9
	VMINPD Y9, Y5, Y5
	VEXTRACTF64X4 $1, Z6, Y9
	VMAXPD Y9, Y6, Y6
	VEXTRACTI128 $1, Y7, X9
	VPMAXUD X9, X7, X7
	STORE_STATE
