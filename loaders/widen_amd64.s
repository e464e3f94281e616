//go:build amd64 && !purego

#include "textflag.h"

// func widenBF16AVX2(dst *float32, src *uint16, n int)
//
// n is a multiple of 8. Each bfloat16 is zero-extended to 32 bits and
// shifted into the top half: the float32 of the same value.
TEXT ·widenBF16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
loop16:
	LEAQ 16(AX), BX
	CMPQ BX, CX
	JGT  last8
	VPMOVZXWD (SI)(AX*2), Y0
	VPMOVZXWD 16(SI)(AX*2), Y1
	VPSLLD $16, Y0, Y0
	VPSLLD $16, Y1, Y1
	VMOVDQU Y0, (DI)(AX*4)
	VMOVDQU Y1, 32(DI)(AX*4)
	MOVQ BX, AX
	JMP  loop16
last8:
	CMPQ AX, CX
	JGE  done
	VPMOVZXWD (SI)(AX*2), Y0
	VPSLLD $16, Y0, Y0
	VMOVDQU Y0, (DI)(AX*4)
done:
	VZEROUPPER
	RET
