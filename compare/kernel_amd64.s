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

// PREFETCH32 and PREFETCH16 ask for the cache line prefetchAhead bytes
// past the float32 (16-bit) element AX of p: each stream of a loop is
// prefetched that far ahead of its loads. The hardware prefetchers alone
// leave the loops waiting on memory when the machine's memory is busy: on
// a shared 2-core VM, a 2 × 1 GiB float32 pair took 0.205 s without and
// 0.156 s with (the floor of mapping and touching both: 0.148 s), a pair
// whose elements all differ 0.445 s and 0.193 s, float32 against
// bfloat16 0.55 s and 0.20 s; 2 to 8 KiB ahead did alike. A prefetch
// never faults, past the end of a mapping either.
#define prefetchAhead 2048
#define PREFETCH32(p) PREFETCHT0 prefetchAhead(p)(AX*4)
#define PREFETCH16(p) PREFETCHT0 prefetchAhead(p)(AX*2)

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
	PREFETCH32(SI)
	PREFETCH32(DI)
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
	PREFETCH16(SI)
	PREFETCH16(DI)
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

// func equalRunMixedAVX2(v *float32, raw *byte, n int, e *[4]float64) int
// equalRun32AVX2 with the second side little-endian bfloat16, widened to
// float32 bit patterns: a group is equal when the bit patterns are.
TEXT ·equalRunMixedAVX2(SB), NOSPLIT, $0-40
	MOVQ v+0(FP), SI
	MOVQ raw+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ e+24(FP), DX
	VMOVUPD (DX), Y0
	MOVL $0x7F800000, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	XORQ AX, AX
loopM8:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT  groupM4
	PREFETCH32(SI)
	PREFETCH16(DI)
	VMOVUPS (SI)(AX*4), Y1
	VPMOVZXWD (DI)(AX*2), Y2
	VPSLLD $16, Y2, Y2
	VPXOR Y1, Y2, Y2     // bits where a and b differ
	VPAND Y15, Y1, Y3
	VPCMPEQD Y15, Y3, Y3 // a is ±Inf or NaN
	VPOR Y3, Y2, Y2
	VPTEST Y2, Y2
	JNZ groupM4
	SQUARE_ADD8(Y1, X1)
	MOVQ BX, AX
	JMP loopM8
groupM4:
	LEAQ 4(AX), BX
	CMPQ BX, CX
	JGT  doneM
	VMOVUPS (SI)(AX*4), X1
	VPMOVZXWD (DI)(AX*2), X2
	VPSLLD $16, X2, X2
	VPXOR X1, X2, X2
	VPAND X15, X1, X3
	VPCMPEQD X15, X3, X3
	VPOR X3, X2, X2
	VPTEST X2, X2
	JNZ doneM
	SQUARE_ADD(X1)
	MOVQ BX, AX
doneM:
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
	PREFETCH16(SI)
	PREFETCH16(DI)
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
#define ST_MAXULP 80
#define ST_ATOL 96
#define ST_RTOL 128
#define ST_MAXABS 160
#define ST_MAXREL 192

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

// ROUND_BF16_Z is ROUND_BF16 for the sixteen magnitudes in ZMM m, with
// the constants in registers (Z27: 1, Z28: 0x7FFF), through Z12.
#define ROUND_BF16_Z(m) \
	VPSRLD $16, m, Z12; \
	VPANDD Z27, Z12, Z12; \
	VPADDD Z12, m, m; \
	VPADDD Z28, m, m; \
	VPSRLD $16, m, m

// COUNT2 adds one to the histogram buckets (R9) of the two quadwords of
// XMM x, through BX.
#define COUNT2(x) \
	VMOVQ   x, BX; \
	INCL    (R9)(BX*4); \
	VPEXTRQ $1, x, BX; \
	INCL    (R9)(BX*4)

// COUNT4 adds one to the histogram buckets (R9) of the four words of r,
// through R14, with the BEXTR controls of words 1 and 2 in R13 and R8; it
// overwrites r.
#define COUNT4(r) \
	MOVWQZX r, R14; \
	INCL    (R9)(R14*4); \
	BEXTRQ  R13, r, R14; \
	INCL    (R9)(R14*4); \
	BEXTRQ  R8, r, R14; \
	INCL    (R9)(R14*4); \
	SHRQ    $48, r; \
	INCL    (R9)(r*4)

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

// LOAD_STATE reads the arguments of a slow-path loop (a, b, from, to, st,
// mode into SI, DI, AX, CX, R8, R13), the partials sqD, sqA, sqB and ab
// into Y0–Y3 (DX: the laneSums), the histogram into R9 and the counts into
// R10–R12, as STORE_STATE writes them back.
#define LOAD_STATE \
	MOVQ    a+0(FP), SI; \
	MOVQ    b+8(FP), DI; \
	MOVQ    from+16(FP), AX; \
	MOVQ    to+24(FP), CX; \
	MOVQ    st+32(FP), R8; \
	MOVBQZX mode+40(FP), R13; \
	MOVQ    ST_SUMS(R8), DX; \
	VMOVUPD 0(DX), Y0; \
	VMOVUPD 32(DX), Y1; \
	VMOVUPD 64(DX), Y2; \
	VMOVUPD 96(DX), Y3; \
	MOVQ    ST_COUNTS(R8), R9; \
	MOVQ    ST_DIFFER(R8), R10; \
	MOVQ    ST_BEYOND(R8), R11; \
	MOVQ    ST_FIRST(R8), R12

// STORE_STATE writes the partials Y0–Y3, the lane extremes Y5 and X7 and
// the counts R10–R12 back to the differState at R8, and returns AX, the
// index where the loop stopped.
#define STORE_STATE \
	MOVQ    ST_SUMS(R8), DX; \
	VMOVUPD Y0, 0(DX); \
	VMOVUPD Y1, 32(DX); \
	VMOVUPD Y2, 64(DX); \
	VMOVUPD Y3, 96(DX); \
	VMOVUPD Y5, ST_MINAD(R8); \
	VMOVDQU X7, ST_MAXULP(R8); \
	MOVQ    R10, ST_DIFFER(R8); \
	MOVQ    R11, ST_BEYOND(R8); \
	MOVQ    R12, ST_FIRST(R8); \
	VZEROUPPER; \
	MOVQ    AX, ret+48(FP); \
	RET

// func differRun32AVX2(a, b *float32, from, to int, st *differState, mode ulpMode) int
//
// Registers: Y0–Y4 the partials (sqD, sqA, sqB, ab, eq); Y5 the least
// |a−b| of pairs that differ (the largest is below maxAbs, whose bucket
// block counted); X7 the largest ULP distance per lane; R9 the histogram;
// R10, R11, R12 the pairs that differ, those beyond the tolerance and the
// first of these (−1: none yet); R13 the
// ulpMode: bit 1 bfloat16 keys, bits 2 and 3 round a and b to them; AX
// the index of the next pair, from its argument from (R14) up to to (CX).
// Indices count from a and b, so the first index needs no offset.
TEXT ·differRun32AVX2(SB), NOSPLIT, $0-56
	LOAD_STATE
	VMOVUPD 128(DX), Y4
	VMOVUPD ST_MINAD(R8), Y5
	VMOVDQU ST_MAXULP(R8), X7
	MOVQ AX, R14                       // from

loop:
	LEAQ 4(AX), BX
	CMPQ BX, CX
	JGT  done
	PREFETCH32(SI)
	PREFETCH32(DI)
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

// TOPWORDS16 lists the words of two ZMM registers of eight float64 each
// that hold their top 16 bits, for VPERMT2W: words 3, 7, …, 31 of the
// first and 35, 39, …, 63 (3, 7, … of the second).
DATA topWords16<>+0(SB)/8, $0x000F000B00070003
DATA topWords16<>+8(SB)/8, $0x001F001B00170013
DATA topWords16<>+16(SB)/8, $0x002F002B00270023
DATA topWords16<>+24(SB)/8, $0x003F003B00370033
GLOBL topWords16<>(SB), RODATA|NOPTR, $32

// SUMS8 adds the products of the eight pairs a, b (float64, ZMM) with
// d = b − a to the four-lane partials Y0–Y3: the first four pairs' terms
// and then the next four's, through Z8 and Z9.
#define SUMS8(a, b, d) \
	VMULPD        d, d, Z8; \
	VEXTRACTF64X4 $1, Z8, Y9; \
	VADDPD        Y8, Y0, Y0; \
	VADDPD        Y9, Y0, Y0; \
	VMULPD        a, a, Z8; \
	VEXTRACTF64X4 $1, Z8, Y9; \
	VADDPD        Y8, Y1, Y1; \
	VADDPD        Y9, Y1, Y1; \
	VMULPD        b, b, Z8; \
	VEXTRACTF64X4 $1, Z8, Y9; \
	VADDPD        Y8, Y2, Y2; \
	VADDPD        Y9, Y2, Y2; \
	VMULPD        b, a, Z8; \
	VEXTRACTF64X4 $1, Z8, Y9; \
	VADDPD        Y8, Y3, Y3; \
	VADDPD        Y9, Y3, Y3

// ULP_MAX16 is ULP_MAX for sixteen lanes (ZMM): the signs of the bit
// patterns a and b differ where K5 is set. It overwrites a.
#define ULP_MAX16(a, b, ma, mb, acc) \
	VPXORD    b, a, a; \
	VPMOVD2M  a, K5; \
	VPSUBD    mb, ma, a; \
	VPABSD    a, a; \
	VPADDD    mb, ma, K5, a; \
	VPMAXUD   a, acc, acc

// LOOP16 is the body of differRun32AVX512 and differRunBF16AVX512 for
// one ULP mode and one layout of the sides: it takes sixteen pairs at AX,
// and more while AX ≤ CX, with the label top at its start and counted
// after the tolerance test. LOAD puts the first eight pairs in Z10 and Z11
// (a and b, float64), the next eight in Z15 and Z16; the rest go in
// Z12–Z14 (d = b − a, |d|, |a|) and Z17–Z19. BITS puts the sixteen float32
// bit patterns of a in Z8 and of b in Z9, and KEYS turns their magnitudes
// in Z10 (a) and Z11 (b) into keys. A step leaves for done16 before it
// changes anything, so the pairs taken are AX − from, and all of them
// differ.
#define LOOP16(top, counted, LOAD, BITS, KEYS) \
top: \
	LOAD; \
	VSUBPD    Z10, Z11, Z12;         /* d = b − a */ \
	VSUBPD    Z15, Z16, Z17; \
	VANDPD    Z20, Z12, Z13;         /* |d| */ \
	VANDPD    Z20, Z17, Z18; \
	VCMPPD    $0x1E, Z25, Z13, K1;   /* |d| > 0 (not NaN) */ \
	VCMPPD    $0x1E, Z25, Z18, K2; \
	KANDB     K2, K1, K1; \
	KORTESTB  K1, K1; \
	JCC       done16;                /* some pair equal, ±Inf or NaN */ \
	VANDPD    Z20, Z10, Z14;         /* |a| */ \
	VANDPD    Z20, Z15, Z19; \
	VMULPD    Z21, Z14, Z8; \
	VMULPD    Z21, Z19, Z9; \
	VCMPPD    $0x1D, Z8, Z13, K1;    /* |d| ≥ maxRel·|a| */ \
	VCMPPD    $0x1D, Z9, Z18, K2; \
	VCMPPD    $0x15, Z22, Z13, K3;   /* not |d| < maxAbs */ \
	VCMPPD    $0x15, Z22, Z18, K4; \
	KORB      K1, K2, K1; \
	KORB      K3, K4, K3; \
	KORTESTB  K1, K3; \
	JNZ       done16;                /* a new maximum */ \
	VMULPD    Z23, Z14, Z8; \
	VMULPD    Z23, Z19, Z9; \
	VADDPD    Z24, Z8, Z8; \
	VADDPD    Z24, Z9, Z9; \
	VCMPPD    $0x1E, Z8, Z13, K1;    /* beyond: |d| > atol + rtol·|a| */ \
	VCMPPD    $0x1E, Z9, Z18, K2; \
	KORTESTB  K1, K2; \
	JZ        counted; \
	KUNPCKBW  K1, K2, K3; \
	KMOVW     K3, BX; \
	POPCNTQ   BX, DX; \
	ADDQ      DX, R11; \
	TESTQ     R12, R12; \
	JNS       counted; \
	BSFQ      BX, R12; \
	ADDQ      AX, R12; \
counted: \
	SUMS8(Z10, Z11, Z12); \
	SUMS8(Z15, Z16, Z17); \
	VMINPD    Z13, Z5, Z5; \
	VMINPD    Z18, Z5, Z5; \
	VPERMT2W  Z18, Z29, Z13; \
	VMOVQ     X13, BX; \
	VPEXTRQ   $1, X13, DX; \
	COUNT4(BX); \
	COUNT4(DX); \
	VEXTRACTI128 $1, Y13, X13; \
	VMOVQ     X13, BX; \
	VPEXTRQ   $1, X13, DX; \
	COUNT4(BX); \
	COUNT4(DX); \
	BITS; \
	VPANDD    Z26, Z8, Z10; \
	VPANDD    Z26, Z9, Z11; \
	KEYS; \
	ULP_MAX16(Z8, Z9, Z10, Z11, Z7); \
	ADDQ      $16, AX; \
	CMPQ      AX, CX; \
	JLE       top

// The keys of LOOP16 by ULP mode: float32 units need none (the magnitude
// is the key); for bfloat16 units a bfloat16 side is shifted down and a
// float32 side rounded.
#define KEYS_F32
#define KEYS_BF16 VPSRLD $16, Z10, Z10; VPSRLD $16, Z11, Z11
#define KEYS_ROUND_A ROUND_BF16_Z(Z10); VPSRLD $16, Z11, Z11
#define KEYS_ROUND_B VPSRLD $16, Z10, Z10; ROUND_BF16_Z(Z11)
#define KEYS_ROUND_AB ROUND_BF16_Z(Z10); ROUND_BF16_Z(Z11)

// The layouts of LOOP16: both sides float32 (LOAD_F32, BITS_F32), or one
// side float32 and the other bfloat16 (16-bit words, widened to float32
// bit patterns in Z30 by a zero extension and a shift).
#define LOAD_F32 \
	PREFETCH32(SI); \
	PREFETCH32(DI); \
	VCVTPS2PD (SI)(AX*4), Z10; \
	VCVTPS2PD (DI)(AX*4), Z11; \
	VCVTPS2PD 32(SI)(AX*4), Z15; \
	VCVTPS2PD 32(DI)(AX*4), Z16
#define BITS_F32 \
	VMOVDQU32 (SI)(AX*4), Z8; \
	VMOVDQU32 (DI)(AX*4), Z9
#define WIDEN_BF16(p, lo, hi) \
	VPMOVZXWD     (p)(AX*2), Z30; \
	VPSLLD        $16, Z30, Z30; \
	VCVTPS2PD     Y30, lo; \
	VEXTRACTF32X8 $1, Z30, Y9; \
	VCVTPS2PD     Y9, hi
#define LOAD_BF16_B \
	PREFETCH32(SI); \
	PREFETCH16(DI); \
	VCVTPS2PD (SI)(AX*4), Z10; \
	VCVTPS2PD 32(SI)(AX*4), Z15; \
	WIDEN_BF16(DI, Z11, Z16)
#define BITS_BF16_B \
	VMOVDQU32 (SI)(AX*4), Z8; \
	VMOVDQA32 Z30, Z9
#define LOAD_BF16_A \
	PREFETCH32(DI); \
	PREFETCH16(SI); \
	VCVTPS2PD (DI)(AX*4), Z11; \
	VCVTPS2PD 32(DI)(AX*4), Z16; \
	WIDEN_BF16(SI, Z10, Z15)
#define BITS_BF16_A \
	VMOVDQA32 Z30, Z8; \
	VMOVDQU32 (DI)(AX*4), Z9

// PROLOGUE16 is the start of a sixteen-pair function: LOAD_STATE, the
// lane extremes in Z5 and Z7, the constants in Z20–Z29 and the BEXTR
// controls; BX holds the mode, and CX the last index a step may start at.
// With fewer than sixteen pairs it goes to done16.
#define PROLOGUE16 \
	LOAD_STATE; \
	VBROADCASTF64X4 ST_MINAD(R8), Z5; \
	VBROADCASTI32X4 ST_MAXULP(R8), Z7; \
	VBROADCASTSD absMask<>(SB), Z20; \
	VBROADCASTSD ST_MAXREL(R8), Z21; \
	VBROADCASTSD ST_MAXABS(R8), Z22; \
	VBROADCASTSD ST_RTOL(R8), Z23; \
	VBROADCASTSD ST_ATOL(R8), Z24; \
	VPXORQ Z25, Z25, Z25; \
	VPBROADCASTD mag32<>(SB), Z26; \
	VPBROADCASTD one32<>(SB), Z27; \
	VPBROADCASTD round16<>(SB), Z28; \
	VMOVDQU32 topWords16<>(SB), Y29; \
	SUBQ AX, R10;                      /* plus AX at the end: every pair taken differs */ \
	MOVQ R13, BX;                      /* the mode */ \
	MOVL $0x1010, R13;                 /* BEXTR: 16 bits from bit 16 */ \
	MOVL $0x1020, R8;                  /* and from bit 32 (R8 is reloaded at the end) */ \
	SUBQ $16, CX; \
	CMPQ AX, CX; \
	JGT  done16

// EPILOGUE16 is the end of a sixteen-pair function, at done16: the count
// of pairs that differ, the lane extremes folded to four, STORE_STATE.
#define EPILOGUE16 \
	ADDQ AX, R10; \
	MOVQ st+32(FP), R8; \
	VEXTRACTF64X4 $1, Z5, Y9; \
	VMINPD Y9, Y5, Y5; \
	VEXTRACTI64X4 $1, Z7, Y9; \
	VPMAXUD Y9, Y7, Y7; \
	VEXTRACTI128 $1, Y7, X9; \
	VPMAXUD X9, X7, X7; \
	STORE_STATE

// func differRun32AVX512(a, b *float32, from, to int, st *differState, mode ulpMode) int
//
// differRun32AVX2 for sixteen pairs at a time, where the machine has
// AVX-512 (F, DQ, VL, BW): it stops before any sixteen with an equal pair,
// ±Inf, NaN or a new maximum, which differRun32AVX2 then takes four at a
// time. With every pair differing there are no masks: the products go
// into the same four-lane partials Y0–Y3, four pairs' at a time in
// storage order, as four groups would. Z5 holds eight lanes of the least
// |a−b| and Z7 sixteen of the largest ULP distance, folded to four at the
// end; Z20–Z29 hold the constants. There is one loop per ULP mode, so
// that a step does not test the mode.
TEXT ·differRun32AVX512(SB), NOSPLIT, $0-56
	PROLOGUE16
	BTQ  $1, BX
	JCC  loopF32
	ANDQ $12, BX                       // ulpRoundA, ulpRoundB
	JZ   loopBF16
	CMPQ BX, $4
	JEQ  loopRoundA
	CMPQ BX, $8
	JEQ  loopRoundB
	JMP  loopRoundAB

LOOP16(loopF32, countedF32, LOAD_F32, BITS_F32, KEYS_F32)
	JMP done16
LOOP16(loopBF16, countedBF16, LOAD_F32, BITS_F32, KEYS_BF16)
	JMP done16
LOOP16(loopRoundA, countedRoundA, LOAD_F32, BITS_F32, KEYS_ROUND_A)
	JMP done16
LOOP16(loopRoundB, countedRoundB, LOAD_F32, BITS_F32, KEYS_ROUND_B)
	JMP done16
LOOP16(loopRoundAB, countedRoundAB, LOAD_F32, BITS_F32, KEYS_ROUND_AB)

done16:
	EPILOGUE16

// func differRunBF16AVX512(a, b unsafe.Pointer, from, to int, st *differState, mode ulpMode) int
//
// differRun32AVX512 for a pair of which one side is float32 and the other
// bfloat16, read in place: the mode is ulpBFloat16 with ulpRoundA (a is
// float32, b bfloat16) or with ulpRoundB (a is bfloat16, b float32).
TEXT ·differRunBF16AVX512(SB), NOSPLIT, $0-56
	PROLOGUE16
	BTQ  $2, BX
	JCC  loopA16

LOOP16(loopB16, countedB16, LOAD_BF16_B, BITS_BF16_B, KEYS_ROUND_A)
	JMP done16
LOOP16(loopA16, countedA16, LOAD_BF16_A, BITS_BF16_A, KEYS_ROUND_B)

done16:
	EPILOGUE16
