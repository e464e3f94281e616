package diagnose

import (
	"errors"
	"io"
	"math"
	"runtime"
	"sort"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/internal/parallel"
	"github.com/graphdiff/graphdiff/loaders"
)

// The detectors look at the runs' raw values through samples: for each
// step and kind, a vector made of the first elements (in storage order) of
// every tensor of that kind present in both runs with the same shape,
// taken in name order. The same tensors and positions are sampled at every
// step and in both runs, so vectors can be compared across runs and across
// steps. A sample holds at most sampleBudget values per step and kind, and
// all samples of a run together about totalSampleBudget, so diagnosis costs
// little even on multi-GB dumps or runs of thousands of steps.

// sampleBudget is how many values one step-and-kind sample holds at most.
const sampleBudget = 1 << 16

// totalSampleBudget is how many values all of one run's samples hold
// (16 MiB as float64) before each tensor's share drops to minPerTensor.
const totalSampleBudget = 1 << 21

// minPerTensor is how many values each tensor contributes at least.
const minPerTensor = 64

type key struct {
	step int
	kind loaders.Kind
}

// vec is a sample: values of one run at one step for one kind.
type vec []float64

// sampleSet holds both runs' samples and what they were made of.
type sampleSet struct {
	a, b  map[key]vec
	steps []int                 // steps with samples, ascending
	kinds map[loaders.Kind]bool // kinds sampled
	names map[loaders.Kind][]string
}

// takeSamples reads the samples of every paired tensor of the comparison.
// Tensors whose shape or storage order differ between the runs, or that
// cannot be read, are left out; a kind keeps only the names present at
// every one of its steps, so that vectors line up across steps.
func takeSamples(r *compare.Result) *sampleSet {
	type member struct {
		t    *compare.TensorResult
		name string
	}
	byKey := map[key][]member{}
	stepsOf := map[loaders.Kind]map[int]bool{}
	for _, t := range r.Tensors {
		if t.A == nil || t.B == nil || t.Step == loaders.NoStep || t.Status == compare.StatusError ||
			!sameLayout(t.A.Tensor, t.B.Tensor) {
			continue
		}
		k := key{t.Step, t.Kind}
		byKey[k] = append(byKey[k], member{t, t.Name})
		if stepsOf[t.Kind] == nil {
			stepsOf[t.Kind] = map[int]bool{}
		}
		stepsOf[t.Kind][t.Step] = true
	}
	s := &sampleSet{a: map[key]vec{}, b: map[key]vec{}, kinds: map[loaders.Kind]bool{}, names: map[loaders.Kind][]string{}}
	// names common to every step of a kind
	for kind, steps := range stepsOf {
		count := map[string]int{}
		for k := range steps {
			for _, m := range byKey[key{k, kind}] {
				count[m.name]++
			}
		}
		for name, n := range count {
			if n == len(steps) {
				s.names[kind] = append(s.names[kind], name)
			}
		}
		sort.Strings(s.names[kind])
	}
	// The heads to read, key by key, members in name order, each into its
	// place in its key's sample; read several at a time (thousands of
	// small files wait on the file system), then packed where some failed.
	type read struct {
		t      *compare.TensorResult
		want   int // values to read from each side
		da, db vec // where they go
		got    int
		ok     bool
	}
	byKeyReads := map[key][]*read{}
	var reads []*read
	for k, members := range byKey {
		common := map[string]bool{}
		for _, n := range s.names[k.kind] {
			common[n] = true
		}
		sort.Slice(members, func(i, j int) bool { return members[i].name < members[j].name })
		budget := min(sampleBudget, totalSampleBudget/max(1, len(byKey)))
		per := int64(max(minPerTensor, budget/max(1, len(common))))
		var rs []*read
		total := 0
		for _, m := range members {
			if common[m.name] {
				t := m.t.A.Tensor
				r := &read{t: m.t, want: int(min(per, t.Len()*int64(t.DType.Components())))}
				rs = append(rs, r)
				total += r.want
			}
		}
		va, vb := make(vec, total), make(vec, total)
		for _, r := range rs {
			r.da, r.db, va, vb = va[:r.want], vb[:r.want], va[r.want:], vb[r.want:]
		}
		byKeyReads[k] = rs
		reads = append(reads, rs...)
	}
	parallel.For(len(reads), 2*runtime.GOMAXPROCS(0), func(i int) {
		r := reads[i]
		na, errA := headInto(r.t.A.Tensor, r.da)
		nb, errB := headInto(r.t.B.Tensor, r.db)
		r.got, r.ok = na, errA == nil && errB == nil && na == nb
	})
	allSteps := map[int]bool{}
	for k, rs := range byKeyReads {
		if len(rs) == 0 {
			continue
		}
		va, vb := rs[0].da[:0], rs[0].db[:0] // the key's whole sample, packed in place
		for _, r := range rs {
			if r.ok {
				va, vb = append(va, r.da[:r.got]...), append(vb, r.db[:r.got]...)
			}
		}
		if len(va) == 0 {
			continue
		}
		s.a[k], s.b[k] = va, vb
		s.kinds[k.kind] = true
		allSteps[k.step] = true
	}
	for k := range allSteps {
		s.steps = append(s.steps, k)
	}
	sort.Ints(s.steps)
	return s
}

func sameLayout(a, b *loaders.Tensor) bool {
	if a.FortranOrder != b.FortranOrder || len(a.Shape) != len(b.Shape) || a.DType.Components() != b.DType.Components() {
		return false
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return false
		}
	}
	return true
}

// headInto reads the first len(dst) values of a tensor into dst and
// returns how many it read (fewer at the end of the tensor).
func headInto(t *loaders.Tensor, dst vec) (int, error) {
	var r *loaders.Reader
	var err error
	if t.RandomAccess() {
		r, err = t.OpenRange(0, min(t.Len(), int64(len(dst))))
	} else {
		r, err = t.Open()
	}
	if err != nil {
		return 0, err
	}
	defer r.Close()
	n := 0
	for n < len(dst) {
		var k int
		var err error
		if len(dst)-n < t.DType.Components() { // half a complex value left
			var last [2]float64
			k, err = r.Read(last[:])
			k = copy(dst[n:], last[:k])
		} else {
			k, err = r.Read(dst[n:])
		}
		n += k
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// get returns a run's sample at a step, nil when there is none.
func (s *sampleSet) get(run map[key]vec, step int, kind loaders.Kind) vec {
	return run[key{step, kind}]
}

// prev returns the step before k among the sampled steps, and whether
// there is one.
func (s *sampleSet) prev(k int) (int, bool) {
	i := sort.SearchInts(s.steps, k)
	if i == 0 || i > len(s.steps) {
		return 0, false
	}
	return s.steps[i-1], true
}

// Vector arithmetic over finite values. Each function skips positions where
// either value is NaN or ±Inf.

func finite(v float64) bool { return v-v == 0 }

// relL2 returns ‖x−ref‖/‖ref‖ (0 when both are zero vectors, +Inf when only
// ref is).
func relL2(ref, x vec) float64 {
	if len(ref) != len(x) || len(ref) == 0 {
		return math.NaN()
	}
	var d2, r2 float64
	for i := range ref {
		if !finite(ref[i]) || !finite(x[i]) {
			continue
		}
		d := x[i] - ref[i]
		d2 += d * d
		r2 += ref[i] * ref[i]
	}
	switch {
	case d2 == 0:
		return 0
	case r2 == 0:
		return math.Inf(1)
	}
	return math.Sqrt(d2 / r2)
}

// cosine returns x·y/(‖x‖‖y‖), NaN when either is a zero vector.
func cosine(x, y vec) float64 {
	if len(x) != len(y) {
		return math.NaN()
	}
	var xy, xx, yy float64
	for i := range x {
		if !finite(x[i]) || !finite(y[i]) {
			continue
		}
		xy += x[i] * y[i]
		xx += x[i] * x[i]
		yy += y[i] * y[i]
	}
	if xx == 0 || yy == 0 {
		return math.NaN()
	}
	return xy / math.Sqrt(xx*yy)
}

// norm returns ‖x‖₂ over finite values.
func norm(x vec) float64 {
	var s float64
	for _, v := range x {
		if finite(v) {
			s += v * v
		}
	}
	return math.Sqrt(s)
}

// sub returns x−y, nil when their lengths differ.
func sub(x, y vec) vec {
	if len(x) != len(y) {
		return nil
	}
	out := make(vec, len(x))
	for i := range x {
		out[i] = x[i] - y[i]
	}
	return out
}

// zeroJaccard returns the Jaccard index of the positions where x and y are
// exactly zero, and the fraction of zeros in x; NaN index when neither has
// a zero.
func zeroJaccard(x, y vec) (index, zeroFraction float64) {
	if len(x) != len(y) || len(x) == 0 {
		return math.NaN(), 0
	}
	var both, either, zx int
	for i := range x {
		xz, yz := x[i] == 0, y[i] == 0
		if xz {
			zx++
		}
		if xz && yz {
			both++
		}
		if xz || yz {
			either++
		}
	}
	if either == 0 {
		return math.NaN(), 0
	}
	return float64(both) / float64(either), float64(zx) / float64(len(x))
}

// maxAbs returns the largest finite |v| and whether any value is NaN or ±Inf.
func maxAbs(x vec) (m float64, special bool) {
	for _, v := range x {
		if !finite(v) {
			special = true
			continue
		}
		m = math.Max(m, math.Abs(v))
	}
	return m, special
}
