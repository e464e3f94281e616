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

// unmaskedSums accumulates a pair's real elements with masks (equal in
// both runs at MaskFloor or more) and NaN/±Inf (judged by position, as in
// the whole tensor's Metrics) left out: over the count elements left,
// ss = Σa², dd = Σ(b − a)², bb = Σb², ab = Σa·b, and mismatched, those
// beyond tol.
type unmaskedSums struct {
	floor                     float64
	tol                       tolerances.Tolerance
	count, mismatched, masked int64
	ss, dd, bb, ab            float64
}

// newUnmaskedSums returns the empty sums of a pair of dtype d (its masks'
// floor) judged with tol.
func newUnmaskedSums(d loaders.DType, tol tolerances.Tolerance) unmaskedSums {
	return unmaskedSums{floor: MaskFloor(d), tol: tol}
}

// add folds the elements a[i], b[i].
func (s *unmaskedSums) add(a, b []float64) {
	for i, x := range a {
		y := b[i]
		switch {
		case math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0):
			continue
		case x == y && math.Abs(x) >= s.floor:
			s.masked++
			continue
		}
		diff := y - x
		s.ss += x * x
		s.dd += diff * diff
		s.bb += y * y
		s.ab += x * y
		s.count++
		if s.tol.Beyond(math.Abs(diff), math.Abs(x)) {
			s.mismatched++
		}
	}
}

// metrics returns m with the numbers a verdict reads taken over the
// elements s holds: Mismatched, NormA = √Σa², NormDiff = √Σ(b − a)²,
// RelL2 = NormDiff/NormA (0 for equal elements, +Inf for differing ones of
// norm 0) and Cosine = Σab/√(Σa²Σb²). Count stays the tensor's elements (a
// report is checked against its shape), so the elements left out count as
// matching in the mismatch fraction; maxima, percentiles, ULP and NaN/Inf
// counts stay the whole tensor's (a mask equal in both runs adds nothing
// to a difference).
func (s *unmaskedSums) metrics(m *Metrics) *Metrics {
	c := *m
	c.Mismatched = s.mismatched
	c.NormA, c.NormDiff = math.Sqrt(s.ss), math.Sqrt(s.dd)
	switch {
	case s.dd == 0:
		c.RelL2 = 0
	case s.ss == 0:
		c.RelL2 = math.Inf(1)
	default:
		c.RelL2 = c.NormDiff / c.NormA
	}
	if s.ss > 0 && s.bb > 0 {
		c.Cosine = s.ab / math.Sqrt(s.ss*s.bb)
	}
	return &c
}

// Unmasked measures a pair again without its masks (unmaskedSums),
// reading both tensors a chunk at a time in storage order (both must be
// stored in the same order), and returns m with the numbers a verdict
// reads taken over the elements left (unmaskedSums.metrics) and how many
// masks it left out.
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
	s := newUnmaskedSums(a.DType, tol)
	xa, xb := make([]float64, pairBufElems), make([]float64, pairBufElems)
	for {
		na, errA := readFull(ra, xa)
		nb, errB := readFull(rb, xb)
		if na != nb {
			return nil, 0, errors.New("the two sides hold different numbers of elements")
		}
		s.add(xa[:na], xb[:nb])
		if errA != nil || errB != nil {
			if errors.Is(errA, io.EOF) && errors.Is(errB, io.EOF) {
				return s.metrics(m), s.masked, nil
			}
			return nil, 0, errors.Join(ignoreEOF(errA), ignoreEOF(errB))
		}
	}
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
