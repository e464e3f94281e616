//go:build amd64 && !purego

package compare

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// On amd64 with AVX2 the fast paths run in assembly (kernel_amd64.s), eight
// pairs per iteration, with the Go loops' float64 operations in the Go
// loops' order: the partials they return are bit for bit the same, which
// TestKernelsMatchGenericInPieces checks with useAVX2 on and off. Build
// with -tags purego to use the Go loops only.

// useAVX2 selects the assembly kernels; tests turn it off.
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func equalRun32AVX2(a, b *float32, n int, e *[lanes]float64) int

//go:noescape
func equalRunBF16AVX2(a, b *byte, n int, e *[lanes]float64) int

//go:noescape
func equalRunF16AVX2(a, b *byte, n int, e *[lanes]float64) int

func equalRun32(va, vb []float32, e [lanes]float64) (int, [lanes]float64) {
	if !useAVX2 || len(va) < lanes {
		return equalRun32Go(va, vb, e)
	}
	vb = vb[:len(va)]
	return equalRun32AVX2(unsafe.SliceData(va), unsafe.SliceData(vb), len(va), &e), e
}

func equalRunBF16(ra, rb []byte, e [lanes]float64) (int, [lanes]float64) {
	if !useAVX2 || len(ra) < 2*lanes {
		return equalRunBF16Go(ra, rb, e)
	}
	rb = rb[:len(ra)]
	return equalRunBF16AVX2(unsafe.SliceData(ra), unsafe.SliceData(rb), len(ra)/2, &e), e
}

func equalRunF16(ra, rb []byte, e [lanes]float64) (int, [lanes]float64) {
	if !useAVX2 || len(ra) < 2*lanes {
		return equalRunF16Go(ra, rb, e)
	}
	rb = rb[:len(ra)]
	return equalRunF16AVX2(unsafe.SliceData(ra), unsafe.SliceData(rb), len(ra)/2, &e), e
}
