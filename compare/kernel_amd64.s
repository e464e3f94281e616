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

// The sixteen-pair loops, with AVX-512 (F, DQ, VL, BW): fold32AVX512
// (both sides float32) and foldBF16AVX512 (one side bfloat16 words read
// in place). Each takes sixteen pairs at a time, equal or not, and leaves
// only for sixteen that hold ±Inf or NaN or a new maximum (a tie is none:
// its position is later), which Go takes (block keeps positions and ties).
// A step goes one of three ways:
//
//   - all sixteen equal (b − a is 0 in float32 exactly when a = b, both
//     finite): the squares into eq, one VMULPD and one VADDPD a group, as
//     equalRun32 does;
//   - some differ: float32 tests first, each conservative (they may pass
//     a pair that block would call a new maximum or beyond the tolerance,
//     never the reverse); if any passes, the sixteen are tested exactly,
//     in float64, as block and peak decide, and left to Go for a new
//     maximum, ±Inf or NaN, or counted beyond the tolerance. Then the
//     sums, group by group in storage order (with masks where some pairs
//     are equal), the histogram, the ULP distances;
//   - all sixteen differ: the same without masks.
//
// The float32 tests compare bit patterns of non-negative values as
// unsigned integers (NaN above +Inf above every finite value): a pair may
// be an event where |b − a|, rounded to float32 (Z10), is at least
//
//   - maxAbs rounded down to float32 (at least 2⁻¹⁴⁹: with maxAbs 0 every
//     pair that differs is a new maximum), or NaN or ±Inf: a new maximum
//     |a−b| is at least maxAbs, and rounding to nearest is monotonic;
//   - |a|·T rounded down, T below maxRel by 2⁻⁴¹ of it at least: a new
//     maximum |a−b|/|a| > maxRel (divided in float64, which rounds it by
//     2⁻⁵³ of it at most) is then at least it;
//   - atol′ + rtol′·|a| rounded down (one rounding, VFMADD with RD_SAE),
//     atol′ and rtol′ below atol and rtol by 2⁻³⁰ of them at least, so
//     that it is below atol + rtol·|a| in float64, whose two roundings
//     move it by 2⁻⁵² of it at most: a pair beyond the tolerance is at
//     least it. Where T ≤ rtol′ and atol′ ≥ 0, |a|·T rounded down is
//     never above it, and the loop skips it (foldNoFMA in the mode).
//
// T is below 1 (foldState caps it), so a pair that differs whose signs
// differ, |b − a| ≥ |a|, always passes: the sign test that the ULP
// distances need runs only in the exact tests (K3), 0 elsewhere.
//
// The sums add in block's order: lane l of each partial takes the pairs
// of lane l of the four groups in turn; a², b² and a·b of float32 values
// are exact in float64, so VFMADD231PD rounds their sums as VMULPD and
// VADDPD do; (b − a)² is not, and is VMULPD then VADDPD. Masked lanes are
// left as they are, as block leaves them.
//
// The histogram: each lane of the sixteen counts apart from the others
// (errorHistogram.spread, 16-bit counts: counts of one bucket in two lanes
// of a step would be two increments of one address, and the processor's
// guesses at such pairs cost more than the increments), added to the
// histogram before it is read. The sixteen lanes' counts of a bucket lie
// side by side, 32 bytes, half a cache line: where differences cluster in
// few buckets, as differences of one ulp do (one bucket a binade), a
// step's increments fall in few lines, which costs less than one line
// each (BenchmarkKernelRounding's pairs, thread CPU time, median of 7:
// every pair one ulp apart 0.58 ns a pair with a table per lane, 0.55
// so; float32 against its bfloat16 rounding, spread over many buckets,
// 0.62 and 0.63). A step's bucket indices are counted in the next step
// (Y29), which leaves their increments to run beside its work; pairs that
// differ among some equal ones are packed first (VPCOMPRESSW where K0
// says the processor has it) and counted alone.
//
// Registers: Y0–Y4 the partials (sqD, sqA, sqB, ab, eq); Y5 the least
// bucket of each lane; Z7 the largest ULP distance of each lane; Z8, Z9
// the sixteen a and b (float32); Z10 |b − a| in float32; Z11 |a|; Z12–Z15
// and Z31 temporaries; Y16–Y19 b − a of the four groups (float64); Z20,
// Z21 the rounding constants 1 and 0x7FFF; Z22 the permutation of the top
// words; Y23 0x7FFF words; Z24 0x7FFFFFFF; Z25–Z28 the float32 thresholds
// (maxAbs, relative, rtol′, atol′); Y29 the previous step's counter
// offsets (spread index · 4, in units of 8 bytes); Y30 spreadBase words.
// K1 the pairs that differ (or hold ±Inf or NaN), K2 maybe events, K3
// signs that differ (set in the exact tests only), K4 equal pairs, K5–K7
// masks of groups. AX the next pair, CX the last a step starts at, SI and
// DI the sides, R8 the pairs that differ, R9 the spread counts, R10 and
// R13 BEXTR controls, R12 the mode (FLOOP), R14 the state in the exact
// tests (which keep the first pair beyond the tolerance there).

// Offsets in foldState (kernel_amd64.go; TestFoldStateLayout).
#define FS_SUMS 0
#define FS_COUNTS 8
#define FS_DIFFER 16
#define FS_BEYOND 24
#define FS_FIRST 32
#define FS_PACK16 40
#define FS_MAXULP 48
#define FS_MINBUCKET 112
#define FS_MAXABS 144
#define FS_MAXREL 152
#define FS_ATOL 160
#define FS_RTOL 168
#define FS_MAXABS32 176
#define FS_RELTHR32 180
#define FS_ATOL32 184
#define FS_RTOL32 188

// foldNoFMA, a bit of the mode argument, says that the float32 tolerance
// test is never below the relative one (foldNoFMA in kernel_amd64.go).
#define foldNoFMA 0x80

// TOPWORDS16 lists the words of two ZMM registers of eight float64 each
// that hold their top 16 bits, for VPERMT2W: words 3, 7, …, 31 of the
// first and 35, 39, …, 63 (3, 7, … of the second).
DATA topWords16<>+0(SB)/8, $0x000F000B00070003
DATA topWords16<>+8(SB)/8, $0x001F001B00170013
DATA topWords16<>+16(SB)/8, $0x002F002B00270023
DATA topWords16<>+24(SB)/8, $0x003F003B00370033
GLOBL topWords16<>(SB), RODATA|NOPTR, $32

// ULP_MAX16 is ULP_MAX for sixteen lanes (ZMM): the signs of the bit
// patterns a and b differ where K5 is set. It overwrites a.
#define ULP_MAX16(a, b, ma, mb, acc) \
	VPXORD    b, a, a; \
	VPMOVD2M  a, K5; \
	VPSUBD    mb, ma, a; \
	VPABSD    a, a; \
	VPADDD    mb, ma, K5, a; \
	VPMAXUD   a, acc, acc

// ROUND16 rounds the sixteen float32 magnitudes in ZMM m to bfloat16 keys
// (ROUND_BF16 for sixteen lanes), through Z31.
#define ROUND16(m) \
	VPSRLD $16, m, Z31; \
	VPANDD Z20, Z31, Z31; \
	VPADDD Z31, m, m; \
	VPADDD Z21, m, m; \
	VPSRLD $16, m, m

// The keys by ULP mode, of the magnitudes |a| in Z14 and |b| in Z15:
// float32 units need none; for bfloat16 units a bfloat16 side is shifted
// down and a float32 side rounded.
#define FKEYS_F32
#define FKEYS_BF16 VPSRLD $16, Z14, Z14; VPSRLD $16, Z15, Z15
#define FKEYS_ROUND_A ROUND16(Z14); VPSRLD $16, Z15, Z15
#define FKEYS_ROUND_B VPSRLD $16, Z14, Z14; ROUND16(Z15)
#define FKEYS_ROUND_AB ROUND16(Z14); ROUND16(Z15)

// FDIST_* take the ULP distances of the pairs that differ (K1) and whose
// signs agree, |ka − kb|, into Z7, through Z13–Z15 and Z31: for float32
// units the bit patterns' difference; for bfloat16 units the magnitudes
// shifted down, and a float32 side rounded first (ROUND16), except where
// the other side is bfloat16: a multiple of 2¹⁶, which the difference of
// the rounding sum (|a| + 0x7FFF + bit 16 of |a|) and it, shifted down
// arithmetically, leaves exact, so that the float32 side is not rounded
// alone.
#define FDIST_F32 \
	VPSUBD  Z9, Z8, Z13; \
	VPABSD  Z13, Z13; \
	VPMAXUD Z13, Z7, K1, Z7
#define FDIST_BF16 \
	VPANDD  Z24, Z9, Z15; \
	VPSUBD  Z15, Z11, Z13; \
	VPSRAD  $16, Z13, Z13; \
	VPABSD  Z13, Z13; \
	VPMAXUD Z13, Z7, K1, Z7
#define FDIST_ROUND(f, h) \
	VPSRLD  $16, f, Z31; \
	VPANDD  Z20, Z31, Z31; \
	VPADDD  Z31, f, Z14; \
	VPSUBD  h, Z14, Z14; \
	VPADDD  Z21, Z14, Z14; \
	VPSRAD  $16, Z14, Z13; \
	VPABSD  Z13, Z13; \
	VPMAXUD Z13, Z7, K1, Z7
#define FDIST_ROUND_A VPANDD Z24, Z9, Z15; FDIST_ROUND(Z11, Z15)
#define FDIST_ROUND_B VPANDD Z24, Z9, Z15; FDIST_ROUND(Z15, Z11)
#define FDIST_ROUND_AB \
	VPANDD    Z24, Z9, Z15; \
	VMOVDQA32 Z11, Z14; \
	FKEYS_ROUND_AB; \
	VPSUBD    Z15, Z14, Z13; \
	VPABSD    Z13, Z13; \
	VPMAXUD   Z13, Z7, K1, Z7

// The layouts. FLOAD_* put the sixteen a in Z8 and b in Z9 as float32;
// FCVT_*(off, i, y) put the four of group i (at byte offset off of a
// float32 side in memory) in YMM y as float64. A float32 side's line is
// asked for twice, as the eight-pair loops ask for it (PREFETCH32 for
// each half): once a line, sixteen equal pairs took 0.34 ns a pair where
// equalRun32AVX2 took 0.29 (BenchmarkKernelRounding, median of 8), twice
// 0.29.
#define PREFETCH32X2(p) \
	PREFETCH32(p); \
	PREFETCHT0 (prefetchAhead+32)(p)(AX*4)
#define FLOAD_F32 \
	PREFETCH32X2(SI); \
	PREFETCH32X2(DI); \
	VMOVUPS (SI)(AX*4), Z8; \
	VMOVUPS (DI)(AX*4), Z9
#define FLOAD_BF16_B \
	PREFETCH32X2(SI); \
	PREFETCH16(DI); \
	VMOVUPS   (SI)(AX*4), Z8; \
	VPMOVZXWD (DI)(AX*2), Z9; \
	VPSLLD    $16, Z9, Z9
#define FLOAD_BF16_A \
	PREFETCH16(SI); \
	PREFETCH32X2(DI); \
	VPMOVZXWD (SI)(AX*2), Z8; \
	VPSLLD    $16, Z8, Z8; \
	VMOVUPS   (DI)(AX*4), Z9
#define FCVT_MEM_A(off, i, y) VCVTPS2PD off(SI)(AX*4), y
#define FCVT_MEM_B(off, i, y) VCVTPS2PD off(DI)(AX*4), y
#define FCVT_REG_A(off, i, y) VEXTRACTF32X4 $i, Z8, X31; VCVTPS2PD X31, y
#define FCVT_REG_B(off, i, y) VEXTRACTF32X4 $i, Z9, X31; VCVTPS2PD X31, y

// FEQUAL adds the squares of group i of sixteen equal pairs to eq.
#define FEQUAL(off, i, CVT) \
	CVT(off, i, Y12); \
	VMULPD Y12, Y12, Y12; \
	VADDPD Y12, Y4, Y4

// FALL folds group i of sixteen pairs that all differ, leaving b − a in d.
#define FALL(off, i, d, CVT_A, CVT_B) \
	CVT_A(off, i, Y12); \
	CVT_B(off, i, Y13); \
	VSUBPD      Y12, Y13, d; \
	VMULPD      d, d, Y14; \
	VADDPD      Y14, Y0, Y0; \
	VFMADD231PD Y12, Y12, Y1; \
	VFMADD231PD Y13, Y13, Y2; \
	VFMADD231PD Y13, Y12, Y3

// FMIX is FALL where some pairs are equal: those of mask kd differ, those
// of ke are equal (their (b − a)² is +0, which leaves sqD as it is).
#define FMIX(off, i, kd, ke, d, CVT_A, CVT_B) \
	CVT_A(off, i, Y12); \
	CVT_B(off, i, Y13); \
	VSUBPD      Y12, Y13, d; \
	VMULPD      d, d, Y14; \
	VADDPD      Y14, Y0, Y0; \
	VFMADD231PD Y12, Y12, kd, Y1; \
	VFMADD231PD Y12, Y12, ke, Y4; \
	VFMADD231PD Y13, Y13, kd, Y2; \
	VFMADD231PD Y13, Y12, kd, Y3

// FEXACT tests group i in float64, as peak does: it leaves for done16
// where a pair is ±Inf or NaN or |b − a| exceeds maxAbs, or where a pair
// that differs (mask kd) has |b − a|/|a| above maxRel (+Inf for |a| = 0:
// above any finite maxRel); a tie is no new maximum, its position being
// later. Else it sets the bits of the pairs beyond the tolerance, |b − a|
// > atol + rtol·|a| (of those that differ), in BX.
#define FEXACT(off, i, kd, CVT_A, CVT_B) \
	CVT_A(off, i, Y12); \
	CVT_B(off, i, Y13); \
	VSUBPD      Y12, Y13, Y14; \
	VANDPD.BCST absMask<>(SB), Y14, Y14; \
	VANDPD.BCST absMask<>(SB), Y12, Y15; \
	VCMPPD.BCST $0x16, FS_MAXABS(R14), Y14, K7; \
	KORTESTB    K7, K7; \
	JNZ         done16; \
	VDIVPD      Y15, Y14, Y12; \
	VCMPPD.BCST $0x1E, FS_MAXREL(R14), Y12, kd, K7; \
	KORTESTB    K7, K7; \
	JNZ         done16; \
	VMULPD.BCST FS_RTOL(R14), Y15, Y15; \
	VADDPD.BCST FS_ATOL(R14), Y15, Y15; \
	VCMPPD      $0x1E, Y15, Y14, kd, K7; \
	KMOVB       K7, DX; \
	SHLQ        $(4*i), DX; \
	ORQ         DX, BX

// FBUCKETS puts the buckets of the sixteen b − a (Y16–Y19: the top 16
// bits of |b − a| as float64) in Y16 and takes the least of those of
// mask k into Y5.
#define FBUCKETS(k) \
	VINSERTF64X4 $1, Y17, Z16, Z16; \
	VINSERTF64X4 $1, Y19, Z18, Z18; \
	VPERMT2W     Z18, Z22, Z16; \
	VPANDD       Y23, Y16, Y16; \
	VPMINUW      Y16, Y5, k, Y5

// FULPTEST goes to slow where a pair that differs has signs that differ
// (K3, which only sixteen that went through the exact tests may have).
#define FULPTEST(slow) \
	KTESTW   K1, K3; \
	JNZ      slow

// FULPSLOW is ULP_MAX16, for sixteen pairs of which some have signs that
// differ (around zero), which then goes back to done.
#define FULPSLOW(KEYS, slow, done) \
slow: \
	VPANDD    Z24, Z9, Z15; \
	VMOVDQA32 Z11, Z14; \
	KEYS; \
	ULP_MAX16(Z8, Z9, Z14, Z15, Z7); \
	JMP       done

// SCOUNT4 adds one to the spread counts (R9) of lanes l0–l3 at the four
// counter offsets in r (spread index · 4: 32 bytes a bucket, lane l at 2l),
// through R14; it overwrites r.
#define SCOUNT4(r, l0, l1, l2, l3) \
	MOVWQZX r, R14; \
	INCW    (l0*2)(R9)(R14*8); \
	BEXTRQ  R13, r, R14; \
	INCW    (l1*2)(R9)(R14*8); \
	BEXTRQ  R10, r, R14; \
	INCW    (l2*2)(R9)(R14*8); \
	SHRQ    $48, r; \
	INCW    (l3*2)(R9)(r*8)

// COUNT16 counts the counter offsets in YMM y (low XMM x), packed first,
// the rest 0: a quadword of zeros ends them (an offset is never 0), past
// the first, which counts even zeros (in bucket spreadBase's counts, never
// read) rather than branch on a count that varies at random. It overwrites
// x.
#define COUNT16(y, x, done) \
	VMOVQ         x, BX; \
	VPEXTRQ       $1, x, DX; \
	SCOUNT4(BX, 0, 1, 2, 3); \
	TESTQ         DX, DX; \
	JZ            done; \
	VEXTRACTI32X4 $1, y, x; \
	VMOVQ         x, BX; \
	SCOUNT4(DX, 4, 5, 6, 7); \
	TESTQ         BX, BX; \
	JZ            done; \
	VPEXTRQ       $1, x, DX; \
	SCOUNT4(BX, 8, 9, 10, 11); \
	TESTQ         DX, DX; \
	JZ            done; \
	SCOUNT4(DX, 12, 13, 14, 15); \
done:

// FHEAD loads sixteen pairs and sets K1 and R11 to those that differ (or
// hold ±Inf or NaN: b − a in float32 is 0 exactly where a = b, both
// finite).
#define FHEAD(LOAD) \
	LOAD; \
	VSUBPS   Z8, Z9, Z10; \
	VANDPS   Z24, Z10, Z10; \
	VPTESTMD Z10, Z10, K1; \
	KMOVW    K1, R11

// FLOOP is the loop of one layout and one ULP mode; its labels are its
// first sixteen arguments. K0 is not 0 where VPCOMPRESSW may run.
//
// Where equal and differing sixteens alternate at random, the branch
// between their paths is mispredicted often; so the loop runs in two
// modes. From top (R12 ≥ 0) all equal sixteens take the equal path, and
// R12 counts the sixteens in a row that mix equal and differing pairs: at
// three it switches to topm (R12 < 0), where every sixteen takes the
// general path (which folds equal pairs as the equal path does) and R12
// is −1 less the equal sixteens in a row, back to top at four of them.
#define FLOOP(top, topm, tolerated, noneq, next, exact, checked, mixed, slow1, ulp1, slow2, ulp2, count1, count2, pack32, packed, LOAD, CVT_A, CVT_B, CVT_EQ, KEYS, DIST) \
top: \
	FHEAD(LOAD); \
	TESTL         R11, R11; \
	JNZ           noneq; \
	XORL          R12, R12; \
	FEQUAL(0, 0, CVT_EQ); \
	FEQUAL(16, 1, CVT_EQ); \
	FEQUAL(32, 2, CVT_EQ); \
	FEQUAL(48, 3, CVT_EQ); \
	ADDQ          $16, AX; \
	CMPQ          AX, CX; \
	JLE           top; \
	JMP           done16; \
noneq: \
	CMPL          R11, $0xFFFF; \
	JEQ           exact; \
	INCQ          R12; \
	CMPQ          R12, $3; \
	JLT           exact; \
	MOVQ          $-1, R12; \
	JMP           exact; \
topm: \
	FHEAD(LOAD); \
	LEAQ          -1(R12), DX; \
	MOVQ          $-1, BX; \
	TESTL         R11, R11; \
	CMOVQNE       BX, DX; \
	MOVQ          DX, R12; \
	CMPQ          DX, $-5; \
	JGT           exact; \
	XORL          R12, R12; \
exact: \
	VANDPS        Z24, Z8, Z11; \
	VMULPS.RD_SAE Z26, Z11, Z12; \
	TESTB         $foldNoFMA, mode+40(FP); \
	JNZ           tolerated; \
	VMOVAPS       Z28, Z13; \
	VFMADD231PS.RD_SAE Z27, Z11, Z13; \
	VMINPS        Z13, Z12, Z12; \
tolerated: \
	VMINPS        Z25, Z12, Z12; \
	VPCMPUD       $5, Z12, Z10, K1, K2; \
	KXORW         K3, K3, K3; \
	KORTESTW      K2, K2; \
	JZ            checked; \
	VPXORD        Z8, Z9, Z13; \
	VPMOVD2M      Z13, K3; \
	XORQ          BX, BX; \
	MOVQ          st+32(FP), R14; \
	KSHIFTRW      $4, K1, K5; \
	KSHIFTRW      $8, K1, K6; \
	FEXACT(0, 0, K1, CVT_A, CVT_B); \
	FEXACT(16, 1, K5, CVT_A, CVT_B); \
	KSHIFTRW      $12, K1, K5; \
	FEXACT(32, 2, K6, CVT_A, CVT_B); \
	FEXACT(48, 3, K5, CVT_A, CVT_B); \
	TESTQ         BX, BX; \
	JZ            checked; \
	POPCNTQ       BX, DX; \
	ADDQ          DX, FS_BEYOND(R14); \
	CMPQ          FS_FIRST(R14), $0; \
	JGE           checked; \
	BSFQ          BX, DX; \
	ADDQ          AX, DX; \
	MOVQ          DX, FS_FIRST(R14); \
checked: \
	CMPL          R11, $0xFFFF; \
	JNE           mixed; \
	FALL(0, 0, Y16, CVT_A, CVT_B); \
	FALL(16, 1, Y17, CVT_A, CVT_B); \
	FALL(32, 2, Y18, CVT_A, CVT_B); \
	FALL(48, 3, Y19, CVT_A, CVT_B); \
	FBUCKETS(K1); \
	FULPTEST(slow1); \
	DIST; \
ulp1: \
	COUNT16(Y29, X29, count1); \
	VPSUBW        Y30, Y16, Y29; \
	VPSLLW        $2, Y29, Y29; \
	ADDQ          $16, R8; \
next: \
	ADDQ          $16, AX; \
	CMPQ          AX, CX; \
	JGT           done16; \
	TESTQ         R12, R12; \
	JS            topm; \
	JMP           top; \
mixed: \
	KNOTW         K1, K4; \
	FMIX(0, 0, K1, K4, Y16, CVT_A, CVT_B); \
	KSHIFTRW      $4, K1, K5; \
	KSHIFTRW      $4, K4, K6; \
	FMIX(16, 1, K5, K6, Y17, CVT_A, CVT_B); \
	KSHIFTRW      $8, K1, K5; \
	KSHIFTRW      $8, K4, K6; \
	FMIX(32, 2, K5, K6, Y18, CVT_A, CVT_B); \
	KSHIFTRW      $12, K1, K5; \
	KSHIFTRW      $12, K4, K6; \
	FMIX(48, 3, K5, K6, Y19, CVT_A, CVT_B); \
	FBUCKETS(K1); \
	FULPTEST(slow2); \
	DIST; \
ulp2: \
	COUNT16(Y29, X29, count2); \
	VPSUBW        Y30, Y16, Y29; \
	VPSLLW        $2, Y29, Y29; \
	KORTESTW      K0, K0; \
	JZ            pack32; \
	VPCOMPRESSW.Z Y29, K1, Y29;          /* the indices of pairs that differ, first */ \
packed: \
	POPCNTL       R11, R11; \
	ADDQ          R11, R8; \
	JMP           next; \
	FULPSLOW(KEYS, slow1, ulp1); \
	FULPSLOW(KEYS, slow2, ulp2); \
pack32: \
	VPMOVZXWD     Y29, Z31;              /* VPCOMPRESSW without AVX512_VBMI2 */ \
	VPCOMPRESSD.Z Z31, K1, Z31; \
	VPMOVDW       Z31, Y29; \
	JMP           packed

// FPROLOGUE reads the arguments (a, b, from, to, st, mode: SI, DI, AX,
// CX, R14, BX) and the state, and sets up the constants; CX becomes the
// last index a step may start at. With fewer than sixteen pairs it goes to
// done16.
#define FPROLOGUE \
	MOVQ         a+0(FP), SI; \
	MOVQ         b+8(FP), DI; \
	MOVQ         from+16(FP), AX; \
	MOVQ         to+24(FP), CX; \
	MOVQ         st+32(FP), R14; \
	MOVBQZX      mode+40(FP), BX; \
	MOVQ         FS_SUMS(R14), DX; \
	VMOVUPD      0(DX), Y0; \
	VMOVUPD      32(DX), Y1; \
	VMOVUPD      64(DX), Y2; \
	VMOVUPD      96(DX), Y3; \
	VMOVUPD      128(DX), Y4; \
	MOVQ         FS_COUNTS(R14), R9; \
	XORL         R12, R12; \
	MOVQ         FS_PACK16(R14), DX; \
	KMOVW        DX, K0; \
	VPTERNLOGD   $0xFF, Z5, Z5, Z5; \
	VPXORD       Z7, Z7, Z7; \
	VPXORD       Z29, Z29, Z29; \
	VPBROADCASTD one32<>(SB), Z20; \
	VPBROADCASTD round16<>(SB), Z21; \
	VMOVDQU32    topWords16<>(SB), Y22; \
	MOVL         $0x7FFF, DX; \
	VPBROADCASTW DX, Y23; \
	VPBROADCASTD mag32<>(SB), Z24; \
	VBROADCASTSS FS_MAXABS32(R14), Z25; \
	VBROADCASTSS FS_RELTHR32(R14), Z26; \
	VBROADCASTSS FS_RTOL32(R14), Z27; \
	VBROADCASTSS FS_ATOL32(R14), Z28; \
	MOVL         $spreadBase, DX; \
	VPBROADCASTW DX, Y30; \
	MOVL         $0x1010, R13;           /* BEXTR: 16 bits from bit 16 */ \
	MOVL         $0x1020, R10;           /* and from bit 32 */ \
	XORQ         R8, R8; \
	SUBQ         $16, CX; \
	CMPQ         AX, CX; \
	JGT          done16

// FEPILOGUE, at done16, counts the last step's buckets and writes the
// state back, returning AX, the index where the loop stopped.
#define FEPILOGUE \
	COUNT16(Y29, X29, counted); \
	MOVQ      st+32(FP), R14; \
	MOVQ      R8, FS_DIFFER(R14); \
	MOVQ      FS_SUMS(R14), DX; \
	VMOVUPD   Y0, 0(DX); \
	VMOVUPD   Y1, 32(DX); \
	VMOVUPD   Y2, 64(DX); \
	VMOVUPD   Y3, 96(DX); \
	VMOVUPD   Y4, 128(DX); \
	VMOVDQU32 Z7, FS_MAXULP(R14); \
	VMOVDQU16 Y5, FS_MINBUCKET(R14); \
	VZEROUPPER; \
	MOVQ      AX, ret+48(FP); \
	RET

// spreadBase is the bucket of spread index 0 (spreadBase in
// kernel_amd64.go): below every bucket of a float32 |b − a| ≥ 2⁻¹⁴⁹.
#define spreadBase 0x3600

// func fold32AVX512(a, b unsafe.Pointer, from, to int, st *foldState, mode ulpMode) int
TEXT ·fold32AVX512(SB), NOSPLIT, $0-56
	FPROLOGUE
	BTQ  $1, BX
	JCC  f32
	ANDQ $12, BX                       // ulpRoundA, ulpRoundB
	JZ   bf16
	CMPQ BX, $4
	JEQ  roundA
	CMPQ BX, $8
	JEQ  roundB
	JMP  roundAB

FLOOP(f32, topmf32, toleratedf32, noneqf32, nextf32, exactF32, checkedF32, mixedF32, slow1F32, ulp1F32, slow2F32, ulp2F32, count1F32, count2F32, pack32F32, packedF32, FLOAD_F32, FCVT_MEM_A, FCVT_MEM_B, FCVT_MEM_A, FKEYS_F32, FDIST_F32)
FLOOP(bf16, topmbf16, toleratedbf16, noneqbf16, nextbf16, exactBF16, checkedBF16, mixedBF16, slow1BF16, ulp1BF16, slow2BF16, ulp2BF16, count1BF16, count2BF16, pack32BF16, packedBF16, FLOAD_F32, FCVT_MEM_A, FCVT_MEM_B, FCVT_MEM_A, FKEYS_BF16, FDIST_BF16)
FLOOP(roundA, topmroundA, toleratedroundA, noneqroundA, nextroundA, exactRA, checkedRA, mixedRA, slow1RA, ulp1RA, slow2RA, ulp2RA, count1RA, count2RA, pack32RA, packedRA, FLOAD_F32, FCVT_MEM_A, FCVT_MEM_B, FCVT_MEM_A, FKEYS_ROUND_A, FDIST_ROUND_A)
FLOOP(roundB, topmroundB, toleratedroundB, noneqroundB, nextroundB, exactRB, checkedRB, mixedRB, slow1RB, ulp1RB, slow2RB, ulp2RB, count1RB, count2RB, pack32RB, packedRB, FLOAD_F32, FCVT_MEM_A, FCVT_MEM_B, FCVT_MEM_A, FKEYS_ROUND_B, FDIST_ROUND_B)
FLOOP(roundAB, topmroundAB, toleratedroundAB, noneqroundAB, nextroundAB, exactRAB, checkedRAB, mixedRAB, slow1RAB, ulp1RAB, slow2RAB, ulp2RAB, count1RAB, count2RAB, pack32RAB, packedRAB, FLOAD_F32, FCVT_MEM_A, FCVT_MEM_B, FCVT_MEM_A, FKEYS_ROUND_AB, FDIST_ROUND_AB)

done16:
	FEPILOGUE

// func foldBF16AVX512(a, b unsafe.Pointer, from, to int, st *foldState, mode ulpMode) int
//
// fold32AVX512 with one side bfloat16 words, read in place: the mode is
// ulpBFloat16 with ulpRoundA (a is float32, b bfloat16) or with ulpRoundB
// (a is bfloat16, b float32). Equal pairs are squared from the float32
// side.
TEXT ·foldBF16AVX512(SB), NOSPLIT, $0-56
	FPROLOGUE
	BTQ  $2, BX
	JCC  bfA

FLOOP(bfB, topmbfB, toleratedbfB, noneqbfB, nextbfB, exactB, checkedB, mixedB, slow1B, ulp1B, slow2B, ulp2B, count1B, count2B, pack32B, packedB, FLOAD_BF16_B, FCVT_MEM_A, FCVT_REG_B, FCVT_MEM_A, FKEYS_ROUND_A, FDIST_ROUND_A)
FLOOP(bfA, topmbfA, toleratedbfA, noneqbfA, nextbfA, exactA, checkedA, mixedA, slow1A, ulp1A, slow2A, ulp2A, count1A, count2A, pack32A, packedA, FLOAD_BF16_A, FCVT_REG_A, FCVT_MEM_B, FCVT_MEM_B, FKEYS_ROUND_B, FDIST_ROUND_B)

done16:
	FEPILOGUE

// SPREADROWS2 sums, in ZMM z, the sixteen counts of each of the two
// buckets at SI + off (words 0–15 and 16–31): eight partial sums of each
// (dwords 0–7 and 8–15), zeroing them (Z1 is 0, Z2 0xFFFF dwords).
#define SPREADROWS2(off, z) \
	VMOVDQU16 off(SI), z; \
	VMOVDQU16 Z1, off(SI); \
	VPSRLD    $16, z, Z3; \
	VPANDD    Z2, z, z; \
	VPADDD    Z3, z, z

// SPREADLANES4 adds the 128-bit lanes of the four buckets of a and b
// (two lanes each, SPREADROWS2) into a: four partials of each bucket.
#define SPREADLANES4(a, b) \
	VSHUFI32X4 $0x88, b, a, Z3; \
	VSHUFI32X4 $0xDD, b, a, a; \
	VPADDD     Z3, a, a

// spreadOrder puts the sums that a step of addSpreadAVX512 leaves, bucket
// j + 4i in dword 4j + i, in bucket order (VPERMD).
DATA spreadOrder<>+0(SB)/8, $0x0000000400000000
DATA spreadOrder<>+8(SB)/8, $0x0000000C00000008
DATA spreadOrder<>+16(SB)/8, $0x0000000500000001
DATA spreadOrder<>+24(SB)/8, $0x0000000D00000009
DATA spreadOrder<>+32(SB)/8, $0x0000000600000002
DATA spreadOrder<>+40(SB)/8, $0x0000000E0000000A
DATA spreadOrder<>+48(SB)/8, $0x0000000700000003
DATA spreadOrder<>+56(SB)/8, $0x0000000F0000000B
GLOBL spreadOrder<>(SB), RODATA|NOPTR, $64

// func addSpreadAVX512(counts *uint32, spread *uint16, n int)
//
// addSpreadAVX512 adds the sixteen lanes' counts of each of n buckets
// (n a multiple of sixteen; bucket k's at spread + 32·k) to counts[k], and
// zeroes them: sixteen buckets a step.
TEXT ·addSpreadAVX512(SB), NOSPLIT, $0-24
	MOVQ         counts+0(FP), DI
	MOVQ         spread+8(FP), SI
	MOVQ         n+16(FP), CX
	VPXORD       Z1, Z1, Z1
	MOVL         $0xFFFF, AX
	VPBROADCASTD AX, Z2
	VMOVDQU32    spreadOrder<>(SB), Z20

spreadStep:
	SUBQ         $16, CX
	JLT          spreadDone
	SPREADROWS2(0, Z4)
	SPREADROWS2(64, Z5)
	SPREADROWS2(128, Z6)
	SPREADROWS2(192, Z7)
	SPREADROWS2(256, Z8)
	SPREADROWS2(320, Z9)
	SPREADROWS2(384, Z10)
	SPREADROWS2(448, Z11)
	SPREADLANES4(Z4, Z5)                 // buckets 0–3: lane j bucket j
	SPREADLANES4(Z6, Z7)                 // 4–7
	SPREADLANES4(Z8, Z9)                 // 8–11
	SPREADLANES4(Z10, Z11)               // 12–15
	VPUNPCKLQDQ  Z6, Z4, Z3              // lane j: buckets j and j + 4, two partials each
	VPUNPCKHQDQ  Z6, Z4, Z4
	VPADDD       Z3, Z4, Z4
	VPUNPCKLQDQ  Z10, Z8, Z3             // buckets j + 8 and j + 12
	VPUNPCKHQDQ  Z10, Z8, Z8
	VPADDD       Z3, Z8, Z8
	VSHUFPS      $0x88, Z8, Z4, Z3       // lane j: buckets j, j + 4, j + 8, j + 12
	VSHUFPS      $0xDD, Z8, Z4, Z4
	VPADDD       Z3, Z4, Z4
	VPERMD       Z4, Z20, Z4
	VPADDD       (DI), Z4, Z4
	VMOVDQU32    Z4, (DI)
	ADDQ         $64, DI
	ADDQ         $512, SI
	JMP          spreadStep

spreadDone:
	VZEROUPPER
	RET
