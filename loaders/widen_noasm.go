//go:build !amd64 || purego

package loaders

// useAVX2 is false where there is no assembly.
var useAVX2 = false

// widenBF16 sets dst[i] to the float32 whose top half is src[i].
func widenBF16(dst []float32, src []uint16) { widenBF16Go(dst, src[:len(dst)]) }
