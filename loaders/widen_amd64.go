//go:build amd64 && !purego

package loaders

import (
	"os"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// On amd64 with AVX2, bfloat16 widens to float32 sixteen elements per
// iteration in assembly (widen_amd64.s): a zero extension and a shift,
// bit for bit what widenBF16Go does. Build with -tags purego to leave it
// out.

// useAVX2 selects the assembly; tests turn it off, and so does "widen" in
// GRAPHDIFF_NOASM (a comma-separated list), for measuring what it gains.
var useAVX2 = cpu.X86.HasAVX2 && !slices.Contains(strings.Split(os.Getenv("GRAPHDIFF_NOASM"), ","), "widen")

//go:noescape
func widenBF16AVX2(dst *float32, src *uint16, n int)

// widenBF16 sets dst[i] to the float32 whose top half is src[i].
func widenBF16(dst []float32, src []uint16) {
	src = src[:len(dst)]
	k := 0
	if useAVX2 {
		if k = len(dst) &^ 7; k > 0 {
			widenBF16AVX2(unsafe.SliceData(dst), unsafe.SliceData(src), k)
		}
	}
	widenBF16Go(dst[k:], src[k:])
}
