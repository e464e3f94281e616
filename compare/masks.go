package compare

import (
	"errors"
	"io"
	"math"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// MaskFloor returns the magnitude from which a value of dtype d equal in
// both runs is a mask: half the dtype's largest finite value. PyTorch
// code masks with torch.finfo(dtype).min (attention masks, a padded
// vocabulary's logits), a value that carries nothing and swamps any norm
// it enters: beside values near 1, one mask of −3.4e38 makes every other
// difference a relative L2 of 1e-38.
func MaskFloor(d loaders.DType) float64 { return maxFinite(d) / 2 }

// HasMasks reports whether metrics m of a pair of dtype d may hold masks:
// the reference's norm reaches MaskFloor (so some element does), and
// rounding alone cannot say so of an ordinary tensor.
func HasMasks(m *Metrics, d loaders.DType) bool {
	return m != nil && d.IsFloat() && d.Components() == 1 && m.NormA >= MaskFloor(d) && !math.IsInf(m.NormA, 0)
}

// Unmasked measures a pair again without its masks (elements equal in
// both runs at MaskFloor of a's dtype or more), reading both tensors a
// chunk at a time in storage order (both must be stored in the same
// order), and returns m with the numbers a verdict reads taken
// over the finite elements left (Mismatched by tol, NormA, NormDiff,
// RelL2, Cosine, as Decode.LogitsMetrics), and how many masks it
// left out. NaN and ±Inf are judged by position, as in m; Count stays
// the tensor's.
func Unmasked(a, b *loaders.Tensor, tol tolerances.Tolerance, m *Metrics) (*Metrics, int64, error) {
	ra, err := a.Open()
	if err != nil {
		return nil, 0, err
	}
	defer ra.Close()
	rb, err := b.Open()
	if err != nil {
		return nil, 0, err
	}
	defer rb.Close()
	floor := MaskFloor(a.DType)
	var d Decode
	const chunk = 1 << 14
	xa, xb := make([]float64, chunk), make([]float64, chunk)
	for {
		na, errA := readFull(ra, xa)
		nb, errB := readFull(rb, xb)
		if na != nb {
			return nil, 0, errors.New("the two sides hold different numbers of elements")
		}
		for i := range na {
			x, y := xa[i], xb[i]
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
				continue
			}
			if x == y && math.Abs(x) >= floor {
				d.Masked++
				continue
			}
			diff := y - x
			d.LogitsSS += x * x
			d.LogitsDD += diff * diff
			d.LogitsBB += y * y
			d.LogitsAB += x * y
			d.LogitsCount++
			if tol.Beyond(math.Abs(diff), math.Abs(x)) {
				d.LogitsMismatched++
			}
		}
		if errA != nil || errB != nil {
			if errors.Is(errA, io.EOF) && errors.Is(errB, io.EOF) {
				break
			}
			return nil, 0, errors.Join(ignoreEOF(errA), ignoreEOF(errB))
		}
	}
	return d.LogitsMetrics(m), d.Masked, nil
}

// readFull reads into dst until it is full or the reader ends (io.EOF).
func readFull(r *loaders.Reader, dst []float64) (int, error) {
	n := 0
	for n < len(dst) {
		k, err := r.Read(dst[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
