package compare

import (
	"errors"
	"io"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/stat"

	"github.com/graphdiff/graphdiff/loaders"
)

// Summary holds the statistics of one tensor's values.
//
// NaN and ±Inf elements are counted, not folded into the other statistics:
// Min, Max, Mean and Std are over the finite elements only, so one NaN does
// not hide the range of the rest. Std is the population standard deviation
// (numpy's default, ddof=0): sqrt(Σ(x−mean)²/Finite). Zeros counts +0 and −0.
// For complex tensors an element is NaN when either part is, Inf when either
// part is infinite (and neither is NaN), zero when both parts are, and Min,
// Max, Mean and Std describe the modulus |z|.
type Summary struct {
	Count  int64 // elements
	Finite int64
	NaN    int64
	Inf    int64
	Zeros  int64
	Min    float64 // meaningful when Finite > 0
	Max    float64
	Mean   float64
	m2     float64 // Σ(x−Mean)² over finite elements
}

// Std returns the population standard deviation of the finite elements, or
// NaN when there are none.
func (s Summary) Std() float64 {
	if s.Finite == 0 {
		return math.NaN()
	}
	return math.Sqrt(s.m2 / float64(s.Finite))
}

// ZeroFraction returns Zeros/Count, or NaN for an empty tensor.
func (s Summary) ZeroFraction() float64 {
	if s.Count == 0 {
		return math.NaN()
	}
	return float64(s.Zeros) / float64(s.Count)
}

// Merge adds the statistics of another part of the same tensor, combining
// means and squared deviations with Chan, Golub and LeVeque's pairwise
// update: for parts a and b with n = na+nb and δ = mean_b − mean_a,
// mean = mean_a + δ·nb/n and M2 = M2_a + M2_b + δ²·na·nb/n.
func (s *Summary) Merge(o Summary) {
	if o.Finite > 0 {
		if s.Finite == 0 {
			s.Min, s.Max, s.Mean, s.m2 = o.Min, o.Max, o.Mean, o.m2
		} else {
			n := float64(s.Finite + o.Finite)
			delta := o.Mean - s.Mean
			s.Mean += delta * float64(o.Finite) / n
			s.m2 += o.m2 + delta*delta*float64(s.Finite)*float64(o.Finite)/n
			s.Min = math.Min(s.Min, o.Min)
			s.Max = math.Max(s.Max, o.Max)
		}
	}
	s.Count += o.Count
	s.Finite += o.Finite
	s.NaN += o.NaN
	s.Inf += o.Inf
	s.Zeros += o.Zeros
}

// add folds a buffer of decoded values into s. finite is scratch space at
// least as long as vals.
func (s *Summary) add(vals, finite []float64, complex bool) {
	var part Summary
	fin := finite[:0]
	if complex {
		for i := 0; i+1 < len(vals); i += 2 {
			re, im := vals[i], vals[i+1]
			switch {
			case re != re || im != im:
				part.NaN++
			case math.IsInf(re, 0) || math.IsInf(im, 0):
				part.Inf++
			default:
				fin = append(fin, math.Hypot(re, im))
			}
		}
		part.Count = int64(len(vals) / 2)
	} else {
		for _, v := range vals {
			switch {
			case v != v:
				part.NaN++
			case math.IsInf(v, 0):
				part.Inf++
			default:
				fin = append(fin, v)
			}
		}
		part.Count = int64(len(vals))
	}
	if len(fin) > 0 {
		part.Finite = int64(len(fin))
		part.Min, part.Max = fin[0], fin[0]
		for _, v := range fin {
			if v == 0 {
				part.Zeros++
			}
			if v < part.Min {
				part.Min = v
			}
			if v > part.Max {
				part.Max = v
			}
		}
		// gonum's MeanVariance is the corrected two-pass algorithm, exact
		// enough on a cache-sized buffer; its variance is unbiased (n−1).
		mean, variance := stat.MeanVariance(fin, nil)
		part.Mean = mean
		if len(fin) > 1 {
			part.m2 = variance * float64(len(fin)-1)
		}
	}
	s.Merge(part)
}

// bufValues is the size of each worker's decode buffer, in float64 values.
const bufValues = 1 << 17

type task struct {
	tensor       int
	chunk        int
	first, count int64
	whole        bool
}

// Summarize computes the Summary of each tensor with up to jobs goroutines
// (all CPUs when jobs ≤ 0). Large tensors are split into chunks summarized
// in parallel and merged in chunk order, so the result does not depend on
// jobs. errs[i] is non-nil when tensor i could not be read; its Summary is
// then incomplete.
func Summarize(tensors []*loaders.Tensor, jobs int) (sums []Summary, errs []error) {
	return newEngine().summarize(tensors, jobs)
}

// summarize is Summarize, run by e (chunks of e.chunkElems).
func (e *engine) summarize(tensors []*loaders.Tensor, jobs int) (sums []Summary, errs []error) {
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	var tasks []task
	parts := make([][]Summary, len(tensors))
	for i, t := range tensors {
		n := t.Len()
		if !t.RandomAccess() || n <= e.chunkElems {
			tasks = append(tasks, task{tensor: i, whole: true})
			parts[i] = make([]Summary, 1)
			continue
		}
		chunks := int((n + e.chunkElems - 1) / e.chunkElems)
		parts[i] = make([]Summary, chunks)
		for c := 0; c < chunks; c++ {
			first := int64(c) * e.chunkElems
			tasks = append(tasks, task{tensor: i, chunk: c, first: first, count: min(e.chunkElems, n-first)})
		}
	}
	errs = make([]error, len(tensors))
	var mu sync.Mutex
	next := make(chan task)
	var wg sync.WaitGroup
	for w := 0; w < min(jobs, max(len(tasks), 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vals := make([]float64, bufValues)
			finite := make([]float64, bufValues)
			for tk := range next {
				t := tensors[tk.tensor]
				var r *loaders.Reader
				var err error
				if tk.whole {
					r, err = t.Open()
				} else {
					r, err = t.OpenRange(tk.first, tk.count)
				}
				var s Summary
				if err == nil {
					err = summarizeReader(r, &s, vals, finite, t.DType.IsComplex())
					r.Close()
				}
				mu.Lock()
				parts[tk.tensor][tk.chunk] = s
				if err != nil && errs[tk.tensor] == nil {
					errs[tk.tensor] = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, tk := range tasks {
		next <- tk
	}
	close(next)
	wg.Wait()
	sums = make([]Summary, len(tensors))
	for i := range tensors {
		for _, p := range parts[i] {
			sums[i].Merge(p)
		}
	}
	return sums, errs
}

func summarizeReader(r *loaders.Reader, s *Summary, vals, finite []float64, complex bool) error {
	for {
		n, err := r.Read(vals)
		if n > 0 {
			s.add(vals[:n], finite, complex)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
