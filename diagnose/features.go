package diagnose

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/graphdiff/graphdiff/internal/parallel"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// The detectors look at the runs' raw values through samples: for each
// step and kind, a vector made of the first elements (in storage order) of
// every tensor of that kind present in both runs with the same shape,
// taken in name order. The same tensors and positions are sampled at every
// step and in both runs, so vectors can be compared across runs and across
// steps. A sample holds at most sampleBudget values per step and kind, and
// all samples of a run together about totalSampleBudget, so diagnosis costs
// little even on multi-GB dumps or runs of thousands of steps, except that
// every tensor gives minPerTensor values at least: a run of more than
// 32,768 tensors sampled (steps × tensors) holds 64 values of each, 512
// bytes a pair as float32 while comparing and 1 KiB as float64 in the
// samples (100,000 pairs: 51 and 102 MB). Fewer values per tensor cost
// diagnosis its causes: with totalSampleBudget lowered to 2^14 and the
// minimum to what that leaves, an rnn bug of the corpus gets the wrong top
// cause, and at 2^12 a correct run gets a warning.

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

// kindBuffer is the sample kind of parameters-kind tensors that have no
// gradient where the step's others do (see planSamples).
const kindBuffer loaders.Kind = "buffer"

// vec is a sample: values of one run at one step for one kind.
type vec []float64

// sampleSet holds both runs' samples and what they were made of.
type sampleSet struct {
	a, b  map[key]vec
	steps []int                 // steps with samples, ascending
	kinds map[loaders.Kind]bool // kinds sampled
	names map[loaders.Kind][]string
}

// takeSamples builds the samples of the comparison's paired tensors, as
// planned by p, from heads, the leading values the pipeline read as the
// plan asked. Tensors whose shape or storage order differ between the runs, or that
// have no head (they could not be read), are left out; a kind keeps only
// the names present at every one of its steps, so that vectors line up
// across steps.
func takeSamples(p *Plan, heads Heads) *sampleSet {
	s := &sampleSet{a: map[key]vec{}, b: map[key]vec{}, kinds: map[loaders.Kind]bool{}}
	s.names = p.names
	keys := make([]key, 0, len(p.byKey))
	for k := range p.byKey {
		keys = append(keys, k)
	}
	// keys apart, on all processors: 100,000 pairs make 12.8 million
	// values
	va, vb := make([]vec, len(keys)), make([]vec, len(keys))
	parallel.For(len(keys), runtime.GOMAXPROCS(0), func(i int) {
		ms := p.byKey[keys[i]]
		total := 0
		for _, m := range ms {
			if n, same := heads[m.t].sides(); same {
				total += min(m.want, n)
			}
		}
		if total == 0 {
			return
		}
		a, b := make(vec, 0, total), make(vec, 0, total)
		for _, m := range ms {
			h := heads[m.t] // the zero Head of a pair without one adds nothing
			if n, same := h.sides(); same {
				a, b = h.appendTo(a, b, min(m.want, n))
			}
		}
		va[i], vb[i] = a, b
	})
	allSteps := map[int]bool{}
	for i, k := range keys {
		if va[i] == nil {
			continue
		}
		s.a[k], s.b[k] = va[i], vb[i]
		s.kinds[k.kind] = true
		allSteps[k.step] = true
	}
	for k := range allSteps {
		s.steps = append(s.steps, k)
	}
	sort.Ints(s.steps)
	return s
}

// Head is the leading values, in storage order, of both sides of a pair
// (complex values as re, im): A and B, or, for values that are all
// float32 (as a comparison keeps them), A32 and B32 with A and B nil.
type Head struct {
	A, B     []float64
	A32, B32 []float32
}

// sides returns the number of values on each side, and whether the two
// sides hold the same number.
func (h Head) sides() (int, bool) {
	if h.A == nil && h.B == nil {
		return len(h.A32), len(h.A32) == len(h.B32)
	}
	return len(h.A), len(h.A) == len(h.B)
}

// appendTo appends the first n values of each side to va and vb.
func (h Head) appendTo(va, vb vec, n int) (vec, vec) {
	if h.A == nil && h.B == nil {
		la, lb := len(va), len(vb)
		va, vb = slices.Grow(va, n)[:la+n], slices.Grow(vb, n)[:lb+n]
		for i, x := range h.A32[:n] {
			va[la+i] = float64(x)
		}
		for i, x := range h.B32[:n] {
			vb[lb+i] = float64(x)
		}
		return va, vb
	}
	return append(va, h.A[:n]...), append(vb, h.B[:n]...)
}

// Heads are the leading values read for diagnosis, by pair (the pairs of
// the result being diagnosed).
type Heads map[*judge.TensorResult]Head

// SampleWant is how many leading values of a pair diagnosis wants.
type SampleWant struct {
	Pair *judge.TensorResult
	N    int
}

// PlanSamples returns the pairs of ts whose leading values the samples
// are made of, and how many of each, in the order Plan.Wants says: what the
// pipeline must read (or keep while comparing) and hand to Diagnose as
// Heads. ts may be the pairs about to be compared, or the finished ones;
// Diagnose plans on the finished ones, so heads read for a plan made
// before comparing may hold pairs it then leaves out.
func PlanSamples(ts []*judge.TensorResult) []SampleWant { return NewPlan(ts).Wants() }

// Plan is which leading values of which pairs of ts the samples are made
// of. Made once over a result's pairs, it serves both the reading
// (Wants) and DiagnosePlanned: planning 100,000 pairs takes some 40 ms.
type Plan struct {
	ts    []*judge.TensorResult
	names map[loaders.Kind][]string
	byKey map[key][]sampled
}

// NewPlan plans the samples of the pairs ts (see PlanSamples).
func NewPlan(ts []*judge.TensorResult) *Plan {
	names, byKey := planSamples(ts)
	return &Plan{ts: ts, names: names, byKey: byKey}
}

// of reports whether p was made over the pairs ts (the same slice).
func (p *Plan) of(ts []*judge.TensorResult) bool {
	return len(p.ts) == len(ts) && (len(ts) == 0 || &p.ts[0] == &ts[0])
}

// Wants is PlanSamples' answer: the pairs sampled and how many leading
// values of each, step by step, each step's kinds in order and each
// kind's pairs in name order (each pair is sampled at one step and kind).
func (p *Plan) Wants() []SampleWant {
	keys := make([]key, 0, len(p.byKey))
	n := 0
	for k, ms := range p.byKey {
		keys = append(keys, k)
		n += len(ms)
	}
	slices.SortFunc(keys, func(x, y key) int {
		if x.step != y.step {
			return cmp.Compare(x.step, y.step)
		}
		return strings.Compare(string(x.kind), string(y.kind))
	})
	out := make([]SampleWant, 0, n)
	for _, k := range keys {
		for _, m := range p.byKey[k] {
			out = append(out, SampleWant{m.t, m.want})
		}
	}
	return out
}

// sampled is one tensor's part of a sample: its first want values of
// each side.
type sampled struct {
	t    *judge.TensorResult
	want int
}

// planSamples decides which tensors of ts the samples are made of and how
// many values each gives: per step and kind, every tensor paired with the
// same layout whose name the kind has at each of its steps, in name order,
// min(minPerTensor, its length) values at least, and an equal share of
// min(sampleBudget, totalSampleBudget / keys) otherwise. names are the
// names sampled per kind.
func planSamples(ts []*judge.TensorResult) (names map[loaders.Kind][]string, byKey map[key][]sampled) {
	byKey = map[key][]sampled{}
	stepsOf := map[loaders.Kind]map[int]bool{}
	// parameters-kind tensors without a gradient at a step that has
	// gradients are buffers (BatchNorm's statistics, a scheduled value):
	// sampled apart, so that parameter updates stay the optimizer's
	type subject struct {
		step int
		name string
	}
	grads, gradSteps := map[subject]bool{}, map[int]bool{}
	hasParams := slices.ContainsFunc(ts, func(t *judge.TensorResult) bool { return t.Kind == loaders.KindParam })
	for _, t := range ts {
		if t.Kind == loaders.KindGrad && hasParams { // only parameters look gradients up
			grads[subject{t.Step, loaders.Subject(t.Name)}] = true
			gradSteps[t.Step] = true
		}
	}
	for _, t := range ts {
		if t.A == nil || t.B == nil || t.Step == loaders.NoStep || t.Status == judge.StatusError ||
			!sameLayout(t.A, t.B) {
			continue
		}
		k := key{t.Step, t.Kind}
		if t.Kind == loaders.KindParam && gradSteps[t.Step] && !grads[subject{t.Step, loaders.Subject(t.Name)}] {
			k.kind = kindBuffer
		}
		byKey[k] = append(byKey[k], sampled{t: t})
		if stepsOf[k.kind] == nil {
			stepsOf[k.kind] = map[int]bool{}
		}
		stepsOf[k.kind][t.Step] = true
	}
	// names common to every step of a kind
	names = map[loaders.Kind][]string{}
	for kind, steps := range stepsOf {
		hint := 0 // the names of one step
		for k := range steps {
			hint = len(byKey[key{k, kind}])
			break
		}
		count := make(map[string]int, hint)
		for k := range steps {
			for _, m := range byKey[key{k, kind}] {
				count[m.t.Name]++
			}
		}
		for name, n := range count {
			if n == len(steps) {
				names[kind] = append(names[kind], name)
			}
		}
		sort.Strings(names[kind])
	}
	budget := min(sampleBudget, totalSampleBudget/max(1, len(byKey)))
	commons := map[loaders.Kind]map[string]bool{} // names[kind] as a set, made once per kind
	for k, ms := range byKey {
		common := commons[k.kind]
		if common == nil {
			common = make(map[string]bool, len(names[k.kind]))
			for _, n := range names[k.kind] {
				common[n] = true
			}
			commons[k.kind] = common
		}
		per := int64(max(minPerTensor, budget/max(1, len(common))))
		kept := ms[:0]
		for _, m := range ms {
			if common[m.t.Name] {
				t := m.t.A
				m.want = int(min(per, t.Len()*int64(t.DType.Components())))
				kept = append(kept, m)
			}
		}
		sort.Slice(kept, func(i, j int) bool { return kept[i].t.Name < kept[j].t.Name })
		byKey[k] = kept
	}
	return names, byKey
}

func sameLayout(a, b *loaders.Meta) bool {
	if a.FortranOrder != b.FortranOrder || a.DType.Components() != b.DType.Components() {
		return false
	}
	return slices.Equal(a.Shape, b.Shape)
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

// allFinite reports whether every value of every vector is finite.
func allFinite(xs ...vec) bool {
	for _, x := range xs {
		if _, special := maxAbs(x); special {
			return false
		}
	}
	return true
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
