package diagnose

import (
	"cmp"
	"github.com/graphdiff/graphdiff/compare"
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
	// derived is the rule the gradients' samples were derived by from the
	// optimizer's state (deriveGrads), "" where they were dumped or are
	// not known
	derived string
	// moments are the optimizer-state tensors' places in the samples
	// that hold them (the moments and their step counters), for
	// deriveGrads
	moments map[key][]segment
	// momentFits are the rules the compared run's moments followed, by
	// step, fitted where deriveGrads derived gradients (momentFit)
	momentFits map[int]momentFit
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
	keys := p.keys
	headOf := heads.forPlan(p)
	// keys apart, on all processors: 100,000 pairs make 12.8 million
	// values
	va, vb := make([]vec, len(keys)), make([]vec, len(keys))
	moments := make([][]segment, len(keys))
	parallel.For(len(keys), runtime.GOMAXPROCS(0), func(i int) {
		ms := p.groups[i]
		total := 0
		for j, m := range ms {
			if n, same := headOf(i, j).sides(); same {
				total += min(m.want, n)
			}
		}
		if total == 0 {
			return
		}
		a, b := make(vec, 0, total), make(vec, 0, total)
		for j, m := range ms {
			h := headOf(i, j) // the zero Head of a pair without one adds nothing
			if n, same := h.sides(); same {
				from := len(a)
				a, b = h.appendTo(a, b, min(m.want, n))
				unmask(a[from:], b[from:], p.cs[m.i].MaskFloor)
				if c := p.cs[m.i]; c.Moment.Known() || strings.HasSuffix(c.Name, "/step") {
					moments[i] = append(moments[i], segment{c.Name, from, len(a), c.Moment})
				}
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
	s.moments = map[key][]segment{}
	for i, k := range keys {
		if len(moments[i]) > 0 && va[i] != nil {
			s.moments[k] = moments[i]
		}
	}
	return s
}

// unmask sets to 0 in both a and b the values equal in both at floor or
// more in magnitude (masks; see Candidate.MaskFloor); floor 0 sets none.
func unmask(a, b vec, floor float64) {
	if floor <= 0 {
		return
	}
	for i, x := range a {
		if x == b[i] && math.Abs(x) >= floor {
			a[i], b[i] = 0, 0
		}
	}
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

// Heads are the leading values read for diagnosis as a plan asked: one
// Head for each of its Wants, by position. The zero Heads hold none.
type Heads struct {
	plan *Plan
	of   []Head // by position in plan.Wants()
}

// NewHeads returns the Heads of p's Wants with none read yet; Set gives
// each.
func (p *Plan) NewHeads() Heads { return Heads{plan: p, of: make([]Head, p.first[len(p.groups)])} }

// Set gives h the head of the i-th pair of its plan's Wants. Calls for
// different i may run at once.
func (h Heads) Set(i int, head Head) { h.of[i] = head }

// forPlan returns the head of the j-th pair of p's group g: found by its
// position where p is the plan the heads were read for, by the pair's
// step and name otherwise.
func (h Heads) forPlan(p *Plan) func(g, j int) Head {
	switch h.plan {
	case nil:
		return func(int, int) Head { return Head{} }
	case p:
		return func(g, j int) Head { return h.of[p.first[g]+j] }
	}
	type pairKey struct {
		step int
		name string
	}
	byPair := make(map[pairKey]Head, len(h.of))
	for i, w := range h.plan.Wants() {
		c := h.plan.cs[w.Index]
		byPair[pairKey{c.Step, c.Name}] = h.of[i]
	}
	return func(g, j int) Head {
		c := p.cs[p.groups[g][j].i]
		return byPair[pairKey{c.Step, c.Name}]
	}
}

// SampleWant is how many leading values of a pair diagnosis wants: the
// pair at Index of those the plan was made over.
type SampleWant struct {
	Index int
	N     int
}

// Unread is Candidate.Values for a pair not read yet: a plan wants as
// many of its values as a sample may take.
const Unread = -1

// Candidate is a pair as planning the samples sees it.
type Candidate struct {
	Step int
	Kind loaders.Kind
	Name string
	// Values is how many values each side holds (complex values count
	// twice), or Unread.
	Values int64
	// Sampled is set when the pair may give a sample: both runs hold it,
	// it could be read (or is not read yet), and both sides have the same
	// layout (shape, storage order, real or complex).
	Sampled bool
	// Moment is how the pair carries the gradient when both runs saved it
	// as an optimizer's state under the same rule (loaders.Moment), the
	// zero Moment otherwise.
	Moment loaders.Moment
	// MaskFloor is compare.MaskFloor of the pair's dtype when both sides
	// are real floating point of one dtype, else 0: a sampled value equal
	// in both runs at that magnitude or more is a mask (a padded
	// vocabulary's torch.finfo(dtype).min) and is sampled as 0 in both,
	// as the comparison leaves it out of the norms (compare.Unmasked).
	MaskFloor float64
}

// CandidateOf describes a finished pair for planning.
func CandidateOf(t *judge.TensorResult) Candidate {
	if t.Status == judge.StatusError {
		return Candidate{Step: t.Step, Kind: t.Kind, Name: t.Name}
	}
	return NewCandidate(t.Step, t.Kind, t.Name, t.A, t.B)
}

// NewCandidate describes a pair whose two sides a and b were read (nil
// for a side its run does not hold) for planning.
func NewCandidate(step int, kind loaders.Kind, name string, a, b *loaders.Meta) Candidate {
	c := Candidate{Step: step, Kind: kind, Name: name}
	if a != nil && b != nil && sameLayout(a, b) {
		c.Sampled = true
		c.Values = a.Len() * int64(a.DType.Components())
		if a.DType == b.DType && a.DType.IsFloat() && a.DType.Components() == 1 {
			c.MaskFloor = compare.MaskFloor(a.DType)
		}
		if a.Moment == b.Moment && a.DType.IsFloat() && a.DType.Components() == 1 {
			c.Moment = a.Moment
		}
	}
	return c
}

// PlanSamples returns the pairs of ts whose leading values the samples
// are made of, and how many of each, in the order Plan.Wants says: what the
// pipeline must read (or keep while comparing) and hand to Diagnose as
// Heads.
func PlanSamples(ts []*judge.TensorResult) []SampleWant { return NewPlan(ts).Wants() }

// Plan is which leading values of which pairs the samples are made of.
// Made once over a result's pairs, it serves both the reading (Wants) and
// DiagnosePlanned.
type Plan struct {
	ts    []*judge.TensorResult // the pairs planned on, nil for a plan of candidates
	cs    []Candidate
	names map[loaders.Kind][]string
	// keys are the samples' steps and kinds, step by step and each step's
	// kinds in order; groups, by keys' index, the pairs each sample is
	// made of, in name order (a group may be empty); first, where each
	// group begins in Wants (first[len(groups)]: how many pairs in all).
	keys   []key
	groups [][]sampled
	first  []int
}

// NewPlan plans the samples of the finished pairs ts (see PlanSamples).
func NewPlan(ts []*judge.TensorResult) *Plan {
	cs := make([]Candidate, len(ts))
	for i, t := range ts {
		cs[i] = CandidateOf(t)
	}
	p := PlanCandidates(cs)
	p.ts = ts
	return p
}

// PlanCandidates plans the samples of pairs described before they are
// compared (see Candidate): the pipeline keeps the values it wants while
// comparing. SampleWant.Index is a position in cs.
func PlanCandidates(cs []Candidate) *Plan {
	names, keys, groups := planSamples(cs)
	first := make([]int, len(groups)+1)
	for g, ms := range groups {
		first[g+1] = first[g] + len(ms)
	}
	return &Plan{cs: cs, names: names, keys: keys, groups: groups, first: first}
}

// headOf returns a lookup of one pair's head in heads by its step, kind
// and name: both runs' leading values as far as they were read for p's
// samples, nil where the pair gave none.
func (p *Plan) headOf(heads Heads) func(step int, kind loaders.Kind, name string) (a, b vec) {
	at := heads.forPlan(p)
	return func(step int, kind loaders.Kind, name string) (vec, vec) {
		for g, k := range p.keys {
			if k.step != step {
				continue
			}
			for j, m := range p.groups[g] {
				c := p.cs[m.i]
				if c.Kind != kind || c.Name != name {
					continue
				}
				h := at(g, j)
				n, same := h.sides()
				if !same || n == 0 {
					return nil, nil
				}
				return h.appendTo(nil, nil, min(n, m.want))
			}
		}
		return nil, nil
	}
}

// of reports whether p was made over the pairs ts (the same slice).
func (p *Plan) of(ts []*judge.TensorResult) bool {
	return p.ts != nil && len(p.ts) == len(ts) && (len(ts) == 0 || &p.ts[0] == &ts[0])
}

// Wants is PlanSamples' answer: the pairs sampled and how many leading
// values of each, step by step, each step's kinds in order and each
// kind's pairs in name order (each pair is sampled at one step and kind).
func (p *Plan) Wants() []SampleWant {
	out := make([]SampleWant, 0, p.first[len(p.groups)])
	for _, g := range p.groups {
		for _, m := range g {
			out = append(out, SampleWant{m.i, m.want})
		}
	}
	return out
}

// sampled is one tensor's part of a sample: its first want values of
// each side.
type sampled struct {
	i    int // into the candidates
	want int
}

// planSamples decides which tensors of ts the samples are made of and how
// many values each gives: per step and kind, every tensor paired with the
// same layout whose name the kind has at each of its steps, in name order,
// min(minPerTensor, its length) values at least, and an equal share of
// min(sampleBudget, totalSampleBudget / keys) otherwise. names are the
// names sampled per kind; keys and groups as in Plan.
//
// A run's names are mostly the same at every step: where a kind's steps
// list the same names, all of them are the kind's, found by comparing the
// sorted lists, without counting each name in a map.
func planSamples(ts []Candidate) (names map[loaders.Kind][]string, keys []key, groups [][]sampled) {
	// parameters-kind tensors without a gradient at a step that has
	// gradients are buffers (BatchNorm's statistics, a scheduled value):
	// sampled apart, so that parameter updates stay the optimizer's
	type subject struct {
		step int
		name string
	}
	grads, gradSteps := map[subject]bool{}, map[int]bool{}
	hasParams := slices.ContainsFunc(ts, func(t Candidate) bool { return t.Kind == loaders.KindParam })
	for _, t := range ts {
		if t.Kind == loaders.KindGrad && hasParams { // only parameters look gradients up
			grads[subject{t.Step, loaders.Subject(t.Name)}] = true
			gradSteps[t.Step] = true
		}
	}
	index := map[key]int{} // into keys and groups
	last, lastKey := -1, key{}
	for i, t := range ts {
		if !t.Sampled || t.Step == loaders.NoStep {
			continue
		}
		k := key{t.Step, t.Kind}
		if t.Kind == loaders.KindParam && gradSteps[t.Step] && !grads[subject{t.Step, loaders.Subject(t.Name)}] {
			k.kind = kindBuffer
		}
		if last < 0 || k != lastKey { // pairs mostly come a step and a kind at a time
			g, ok := index[k]
			if !ok {
				g = len(keys)
				index[k] = g
				keys, groups = append(keys, k), append(groups, nil)
			}
			last, lastKey = g, k
		}
		groups[last] = append(groups[last], sampled{i: i})
	}
	names, commons := commonNames(keys, groups, ts)
	budget := min(sampleBudget, totalSampleBudget/max(1, len(keys)))
	for g, k := range keys {
		common := commons[k.kind] // nil: every name is common
		per := int64(max(minPerTensor, budget/max(1, len(names[k.kind]))))
		kept := groups[g][:0]
		for _, m := range groups[g] {
			if common == nil || common[ts[m.i].Name] {
				m.want = int(per)
				if n := ts[m.i].Values; n != Unread {
					m.want = int(min(per, n))
				}
				kept = append(kept, m)
			}
		}
		groups[g] = kept
	}
	// step by step, each step's kinds in order
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		if c := cmp.Compare(keys[x].step, keys[y].step); c != 0 {
			return c
		}
		return strings.Compare(string(keys[x].kind), string(keys[y].kind))
	})
	sortedKeys, sortedGroups := make([]key, len(keys)), make([][]sampled, len(keys))
	for i, g := range order {
		sortedKeys[i], sortedGroups[i] = keys[g], groups[g]
	}
	return names, sortedKeys, sortedGroups
}

// commonNames sorts each group by name and returns the names each kind
// has at every one of its steps, and, for the kinds where not every name
// is common, those names as a set (nil for the others).
func commonNames(keys []key, groups [][]sampled, cs []Candidate) (names map[loaders.Kind][]string, commons map[loaders.Kind]map[string]bool) {
	byName := func(x, y sampled) int { return strings.Compare(cs[x.i].Name, cs[y.i].Name) }
	stepsOf := map[loaders.Kind][]int{} // a kind's groups, one per step
	for g, k := range keys {
		if !slices.IsSortedFunc(groups[g], byName) {
			slices.SortStableFunc(groups[g], byName)
		}
		stepsOf[k.kind] = append(stepsOf[k.kind], g)
	}
	// names common to every step of a kind
	names = map[loaders.Kind][]string{}
	commons = map[loaders.Kind]map[string]bool{} // by kind, where not every name is common
	for kind, gs := range stepsOf {
		if sameNames(groups, gs, cs) {
			for _, m := range groups[gs[0]] {
				names[kind] = append(names[kind], cs[m.i].Name)
			}
			continue
		}
		count := make(map[string]int, len(groups[gs[0]]))
		for _, g := range gs {
			for _, m := range groups[g] {
				count[cs[m.i].Name]++
			}
		}
		common := map[string]bool{}
		for name, n := range count {
			if n == len(gs) {
				names[kind] = append(names[kind], name)
				common[name] = true
			}
		}
		sort.Strings(names[kind])
		commons[kind] = common
	}
	return names, commons
}

// sameNames reports whether the groups gs (sorted by name) hold the same
// names, each once.
func sameNames(groups [][]sampled, gs []int, cs []Candidate) bool {
	first := groups[gs[0]]
	for i := 1; i < len(first); i++ {
		if cs[first[i].i].Name == cs[first[i-1].i].Name {
			return false
		}
	}
	for _, g := range gs[1:] {
		if len(groups[g]) != len(first) {
			return false
		}
		for i, m := range groups[g] {
			if cs[m.i].Name != cs[first[i].i].Name {
				return false
			}
		}
	}
	return true
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

// next returns the sampled step after k, and whether there is one.
func (s *sampleSet) next(k int) (int, bool) {
	i := sort.SearchInts(s.steps, k+1)
	if i >= len(s.steps) {
		return 0, false
	}
	return s.steps[i], true
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

// add returns x+y, nil when their lengths differ.
func add(x, y vec) vec {
	if len(x) != len(y) {
		return nil
	}
	out := make(vec, len(x))
	for i := range x {
		out[i] = x[i] + y[i]
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
