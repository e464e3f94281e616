//go:build amd64 && !purego

#include "textflag.h"

// addUpdatesAVX512 adds a block of n float32 elements (n a multiple of 16)
// to the update sums, as addUpdatesGo (update.go) does, bit for bit.
//
// The first pass takes sixteen elements at a time, in float64 (VCVTPS2PD
// is exact), with the Go loop's operations and no fused multiply-add:
//
//	moved      a1 ≠ a0 (unordered or not equal: NaN moves), b likewise
//	one ulp    moved in one run only, and |u| ≤ ε·|p0| in that run (not
//	           computed for sixteen with no such element)
//	ua, ub     a1 − a0, b1 − b0; d = ub − ua, NaN or ±Inf exactly where ua
//	           or ub is (x − x ≠ 0 in the Go loop)
//	terms      ua·ua, d·ua, d·d, |a0·ua|: four float64 an element, stored
//	           with VPERMT2PD so that each element's are one 256-bit row
//	bin e      the gradient's biased exponent, 0 for 0xff; skipBin (0xff)
//	           where d is NaN or ±Inf
//	cand       finite elements with |d| > floor: one bit each, for the Go
//	           side to offer to worstElems in element order
//
// It adds the four counts (moved and one ulp, per run) to st.moved, and
// stores for each element the offset e·8 of its row (×4: sums, ×1: count
// tables) and a second offset, of the row to read: e·8 again, or, where e
// is the element before's (a run in one bin), 256·8, the row never
// written, with a mask byte 0xFF.
//
// The second pass adds the elements' terms in element order: each
// element's row of sums gets one VADDPD (four IEEE additions, lane by
// lane). An element whose bin is the element before's adds its terms to
// the sums the element before left in a register (a masked VADDPD), not
// to its row read back from memory, so that a run in one bin waits on one
// addition per element, not on a store and a load; every element stores
// its row. Element i is counted in table i mod 8 of the eight count
// tables. The second pass runs lag elements behind the first, in the same
// loop.

#define US_PA 0
#define US_CA 8
#define US_PB 16
#define US_CB 24
#define US_G 32
#define US_N 40
#define US_EPS 48
#define US_FLOOR 56
#define US_SUMS 64
#define US_COUNTS 72
#define US_TERMS 80
#define US_OFFS 88
#define US_MOVED 96

// The qword indexes of VPERMT2PD: from T0 = (uu0 du0 uu2 du2 uu4 du4 uu6
// du6) and T2 = (dd0 pu0 dd2 pu2 …), rows 0 and 2, then rows 4 and 6.
DATA updPerm<>+0(SB)/8, $0
DATA updPerm<>+8(SB)/8, $1
DATA updPerm<>+16(SB)/8, $8
DATA updPerm<>+24(SB)/8, $9
DATA updPerm<>+32(SB)/8, $2
DATA updPerm<>+40(SB)/8, $3
DATA updPerm<>+48(SB)/8, $10
DATA updPerm<>+56(SB)/8, $11
DATA updPerm<>+64(SB)/8, $4
DATA updPerm<>+72(SB)/8, $5
DATA updPerm<>+80(SB)/8, $12
DATA updPerm<>+88(SB)/8, $13
DATA updPerm<>+96(SB)/8, $6
DATA updPerm<>+104(SB)/8, $7
DATA updPerm<>+112(SB)/8, $14
DATA updPerm<>+120(SB)/8, $15
GLOBL updPerm<>(SB), RODATA|NOPTR, $128

// COUNT adds the number of elements set in mask k to st.moved[off].
#define COUNT(k, off) \
	KMOVW   k, DX; \
	POPCNTL DX, DX; \
	ADDQ    DX, (US_MOVED+off)(BX)

// Offsets in the block's buffers (updateBlock; R13 points at offs).
#define UB_MASKS 2048
#define UB_CAND 2560

// ULP sets K6 to the elements of k (one of eight) whose |u| ≤ ε·|p0|, u
// and p0 in ZMM u and p.
#define ULP(p, u, k) \
	VANDPD Z20, p, Z15; \
	VMULPD Z21, Z15, Z15; \
	VANDPD Z20, u, Z16; \
	VCMPPD $2, Z15, Z16, k, K6

// ROWS stores the terms ua·ua, d·ua, d·d, |a0·ua| of eight elements (a0,
// ua and d in ZMM a, u and d) at off(R12), one row of four an element,
// rows in the order 0 2 1 3 4 6 5 7.
#define ROWS(a, u, d, off) \
	VMULPD    u, u, Z15; \
	VMULPD    u, d, Z16; \
	VMULPD    d, d, Z17; \
	VMULPD    u, a, Z18; \
	VANDPD    Z20, Z18, Z18; \
	VUNPCKLPD Z16, Z15, Z19; \
	VUNPCKHPD Z16, Z15, Z29; \
	VUNPCKLPD Z18, Z17, Z4; \
	VUNPCKHPD Z18, Z17, Z1; \
	VMOVAPD   Z19, Z15; \
	VPERMT2PD Z4, Z25, Z15; \
	VPERMT2PD Z4, Z26, Z19; \
	VMOVAPD   Z29, Z16; \
	VPERMT2PD Z1, Z25, Z16; \
	VPERMT2PD Z1, Z26, Z29; \
	VMOVUPD   Z15, (off)(R12); \
	VMOVUPD   Z16, (off+64)(R12); \
	VMOVUPD   Z19, (off+128)(R12); \
	VMOVUPD   Z29, (off+192)(R12)

// lag is how many elements the second pass runs behind the first, in one
// loop: its additions, one chain per bin, wait in the shadow of the first
// pass's work.
#define lag 32

// ADD_ROW adds the terms of one element of the sixteen at AX−lag (at
// toff(R12)−lag·32) to its row of sums (CX): o4 and o1 are its offsets in
// the offsets and mask buffers, ra the register that holds the sums of
// the element before, rb the one that gets this element's, tab the offset
// of its count table (R14).
#define ADD_ROW(o4, o1, toff, ra, rb, tab) \
	MOVWLZX (o4-4*lag)(R13)(AX*4), R11; \
	MOVWLZX (o4+2-4*lag)(R13)(AX*4), DX; \
	KMOVB   (UB_MASKS+o1-lag)(R13)(AX*1), K1; \
	VMOVUPD (toff-32*lag)(R12), Y28; \
	VADDPD  (CX)(DX*4), Y28, rb; \
	VADDPD  Y28, ra, K1, rb; \
	VMOVUPD rb, (CX)(R11*4); \
	INCQ    tab(R14)(R11*1)

// SUMS is the second pass over the sixteen elements at AX−lag.
#define SUMS \
	ADD_ROW(0, 0, 0, Y30, Y31, 0); \
	ADD_ROW(4, 1, 64, Y31, Y30, 2048); \
	ADD_ROW(8, 2, 32, Y30, Y31, 4096); \
	ADD_ROW(12, 3, 96, Y31, Y30, 6144); \
	ADD_ROW(16, 4, 128, Y30, Y31, 8192); \
	ADD_ROW(20, 5, 192, Y31, Y30, 10240); \
	ADD_ROW(24, 6, 160, Y30, Y31, 12288); \
	ADD_ROW(28, 7, 224, Y31, Y30, 14336); \
	ADD_ROW(32, 8, 256, Y30, Y31, 0); \
	ADD_ROW(36, 9, 320, Y31, Y30, 2048); \
	ADD_ROW(40, 10, 288, Y30, Y31, 4096); \
	ADD_ROW(44, 11, 352, Y31, Y30, 6144); \
	ADD_ROW(48, 12, 384, Y30, Y31, 8192); \
	ADD_ROW(52, 13, 448, Y31, Y30, 10240); \
	ADD_ROW(56, 14, 416, Y30, Y31, 12288); \
	ADD_ROW(60, 15, 480, Y31, Y30, 14336)

// func addUpdatesAVX512(st *updateState)
TEXT ·addUpdatesAVX512(SB), NOSPLIT, $0-8
	MOVQ st+0(FP), BX
	MOVQ US_PA(BX), SI
	MOVQ US_CA(BX), DI
	MOVQ US_PB(BX), R8
	MOVQ US_CB(BX), R9
	MOVQ US_G(BX), R10
	MOVQ US_TERMS(BX), R12
	MOVQ US_OFFS(BX), R13
	MOVQ US_SUMS(BX), CX
	MOVQ US_COUNTS(BX), R14

	MOVQ         $0x7fffffffffffffff, AX
	VPBROADCASTQ AX, Z20                // |·| mask
	VBROADCASTSD US_EPS(BX), Z21
	VBROADCASTSD US_FLOOR(BX), Z22
	MOVL         $0x7f8, AX             // the biased exponent's bits, times 8
	VPBROADCASTD AX, Z23
	MOVL         $(2048<<16), AX        // offset 256·8 of the row read in runs
	VPBROADCASTD AX, Z24
	VMOVDQU64    updPerm<>+0(SB), Z25
	VMOVDQU64    updPerm<>+64(SB), Z26
	VPTERNLOGD   $0xff, Z27, Z27, Z27   // the offset of the element before: none
	VXORPD       Y30, Y30, Y30
	XORQ         AX, AX

terms:
	PREFETCHT0 2048(SI)(AX*4)
	PREFETCHT0 2048(DI)(AX*4)
	PREFETCHT0 2048(R8)(AX*4)
	PREFETCHT0 2048(R9)(AX*4)
	PREFETCHT0 2048(R10)(AX*4)
	VCVTPS2PD  (SI)(AX*4), Z0    // a0 of the first eight
	VCVTPS2PD  (DI)(AX*4), Z1    // a1
	VCVTPS2PD  (R8)(AX*4), Z2    // b0
	VCVTPS2PD  (R9)(AX*4), Z3    // b1
	VCVTPS2PD  32(SI)(AX*4), Z8  // and of the next eight
	VCVTPS2PD  32(DI)(AX*4), Z9
	VCVTPS2PD  32(R8)(AX*4), Z10
	VCVTPS2PD  32(R9)(AX*4), Z11
	VCMPPD     $4, Z0, Z1, K1    // moved in A: a1 ≠ a0, or NaN
	VCMPPD     $4, Z2, Z3, K2    // moved in B
	VCMPPD     $4, Z8, Z9, K3
	VCMPPD     $4, Z10, Z11, K4
	KUNPCKBW   K1, K3, K1
	KUNPCKBW   K2, K4, K2
	VSUBPD     Z0, Z1, Z5        // ua
	VSUBPD     Z2, Z3, Z6        // ub
	VSUBPD     Z5, Z6, Z7        // d = ub − ua: NaN or ±Inf where ua or ub is
	VSUBPD     Z8, Z9, Z12
	VSUBPD     Z10, Z11, Z13
	VSUBPD     Z12, Z13, Z14
	COUNT(K1, 0)
	COUNT(K2, 8)

	// one ulp: moved in one run only, by at most ε·|p0|
	KANDNW   K1, K2, K3 // A only
	KANDNW   K2, K1, K4 // B only
	KORTESTW K3, K4
	JZ       bin
	KSHIFTRW $8, K3, K5
	ULP(Z0, Z5, K3)
	KMOVW    K6, K7
	ULP(Z8, Z12, K5)
	KUNPCKBW K7, K6, K7
	COUNT(K7, 16)
	KSHIFTRW $8, K4, K5
	ULP(Z2, Z6, K4)
	KMOVW    K6, K7
	ULP(Z10, Z13, K5)
	KUNPCKBW K7, K6, K7
	COUNT(K7, 24)

bin:
	// the bin's offset e·8: the gradient's biased exponent, 0 for 0xff,
	// skipBin where d is NaN or ±Inf
	VMOVDQU32   (R10)(AX*4), Z4
	VPSRLD      $20, Z4, Z4
	VPANDD      Z23, Z4, Z4
	VPCMPEQD    Z23, Z4, K5
	VPXORD      Z4, Z4, K5, Z4
	VFPCLASSPDZ $0x99, Z7, K5  // NaN or ±Inf
	VFPCLASSPDZ $0x99, Z14, K6
	KUNPCKBW    K5, K6, K5
	VMOVDQA32   Z23, K5, Z4
	KNOTW       K5, K6         // finite
	KSHIFTRW    $8, K6, K7

	// offsets: e·8 | e·8<<16, or e·8 | 2048<<16 where the element before
	// has the same bin (mask byte 0xFF)
	VALIGND   $15, Z27, Z4, Z18 // the offset of the element before each
	VMOVDQA32 Z4, Z27
	VPCMPEQD  Z18, Z4, K5
	VPSLLD    $16, Z4, Z19
	VMOVDQA32 Z24, K5, Z19
	VPORD     Z4, Z19, Z19
	VMOVDQU32 Z19, (R13)(AX*4)
	VPMOVM2B  K5, X18
	VMOVDQU8  X18, UB_MASKS(R13)(AX*1)

	// candidates for the worst elements: finite, |d| > floor
	VANDPD   Z20, Z7, Z15
	VCMPPD   $0x1e, Z22, Z15, K6, K6
	VANDPD   Z20, Z14, Z15
	VCMPPD   $0x1e, Z22, Z15, K7, K7
	KUNPCKBW K6, K7, K6
	MOVQ     AX, DX
	SHRQ     $3, DX
	KMOVW    K6, UB_CAND(R13)(DX*1)

	ROWS(Z0, Z5, Z7, 0)
	ROWS(Z8, Z12, Z14, 256)

	CMPQ AX, $lag
	JB   next
	SUMS

next:
	ADDQ $512, R12
	ADDQ $16, AX
	CMPQ AX, US_N(BX)
	JB   terms

	// the second pass alone over the last lag elements (all, for n ≤ lag)
	CMPQ AX, $lag
	JAE  tail
	MOVQ $lag, AX
	MOVQ US_TERMS(BX), R12
	ADDQ $(32*lag), R12

tail:
	SUMS
	ADDQ $512, R12
	ADDQ $16, AX
	LEAQ -lag(AX), DX
	CMPQ DX, US_N(BX)
	JB   tail

	VZEROUPPER
	RET
