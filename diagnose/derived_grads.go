package diagnose

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// segment is one tensor's place in a sample, values [from, to): an
// optimizer's moment (its Moment known) or a step counter ("…/step", the
// zero Moment).
type segment struct {
	name     string
	from, to int
	moment   loaders.Moment
}

// deriveGrads gives the samples gradients where the runs dumped none but
// saved an optimizer's state whose rule is known (loaders.Moment: a
// torch.save of optimizer.state_dict(), whose param groups state it): at
// each sampled step k whose step before, k−1, is sampled with the same
// tensors, each moment tensor gives
//
//	g_k = (m_k − Decay·m_{k−1}) / Gain
//
// in both runs, in the sample's order: the gradient each run's optimizer
// saw, which is what the detectors test their predictions on (a lag, a
// repeated batch, a sum). The two dumps must be consecutive optimizer
// steps: a moment whose parameter has a step counter (the "step" of
// Adam's state) is derived only where the counter is one more at k than
// at k−1 in both runs, and a state with exp_avg but no counter is not
// derived; SGD keeps no counter, and there the dumps' step numbers k−1
// and k are taken as the optimizer's (a dump numbered by epoch would
// mislead it). Nothing is derived where the runs dumped gradients.
//
// Rounding: the difference cancels where the gradient is small against
// the moment, and carries about ε·(|m_k| + Decay·|m_{k−1}|)/Gain of it;
// both runs' derived gradients carry it alike, so it matters only where
// the runs' moments already differ by rounding alone, which is why only
// a failed comparison derives them (Diagnose), never a passing one.
func (s *sampleSet) deriveGrads() {
	if s.kinds[loaders.KindGrad] || len(s.moments) == 0 {
		return
	}
	ga, gb := map[int]vec{}, map[int]vec{}
	var rules []string
	keys := slices.SortedFunc(maps.Keys(s.moments), func(x, y key) int {
		return cmp.Or(cmp.Compare(x.step, y.step), strings.Compare(string(x.kind), string(y.kind)))
	})
	for _, k := range keys {
		segs := s.moments[k]
		prev := key{k.step - 1, k.kind}
		psegs, ok := s.moments[prev]
		if !ok || !sameSegments(segs, psegs) {
			continue
		}
		a, ap, b, bp := s.a[k], s.a[prev], s.b[k], s.b[prev]
		if a == nil || ap == nil || b == nil || bp == nil {
			continue
		}
		counters := map[string]segment{}
		for _, sg := range segs {
			if !sg.moment.Known() {
				counters[sg.name] = sg
			}
		}
		var da, db vec
		var fit momentFit // over the segments of the first rule met
		consecutive := true
		for _, sg := range segs {
			if !sg.moment.Known() {
				continue
			}
			member := sg.name[strings.LastIndexByte(sg.name, '/')+1:]
			c, counted := counters[strings.TrimSuffix(sg.name, member)+"step"]
			switch {
			case counted:
				consecutive = oneMore(a, ap, c) && oneMore(b, bp, c)
			case member == "exp_avg":
				consecutive = false // Adam's state without its counter
			}
			if !consecutive {
				break
			}
			from := len(da)
			da = appendDerived(da, a[sg.from:sg.to], ap[sg.from:sg.to], sg.moment)
			db = appendDerived(db, b[sg.from:sg.to], bp[sg.from:sg.to], sg.moment)
			fit.add(sg.moment, b[sg.from:sg.to], bp[sg.from:sg.to], da[from:])
			if rule := sg.moment.String(); !slices.Contains(rules, rule) {
				rules = append(rules, rule)
			}
		}
		if !consecutive || len(da) == 0 {
			continue
		}
		ga[k.step], gb[k.step] = append(ga[k.step], da...), append(gb[k.step], db...)
		if fit.solve() {
			if s.momentFits == nil {
				s.momentFits = map[int]momentFit{}
			}
			s.momentFits[k.step] = fit
		}
	}
	for step, a := range ga {
		k := key{step, loaders.KindGrad}
		s.a[k], s.b[k] = a, gb[step]
		s.kinds[loaders.KindGrad] = true
	}
	if s.kinds[loaders.KindGrad] {
		s.derived = strings.Join(rules, "; ")
	}
}

// derivedDiverged returns the steps whose derived gradients stand for
// diverged ones (the judged gradients' diverged steps, which derived
// gradients have none of): those at which a moment they are derived from
// failed, at the step or the one before. A gradient derived from moments
// that all passed is as close as the dumps can tell.
func (f *facts) derivedDiverged() []int {
	failed := map[int]bool{}
	for _, t := range f.r.Tensors {
		if t.Status == judge.StatusMismatch && t.A != nil && t.A.Moment.Known() {
			failed[t.Step] = true
		}
	}
	var out []int
	for _, k := range f.s.steps {
		if f.s.get(f.s.a, k, loaders.KindGrad) != nil && (failed[k] || failed[k-1]) {
			out = append(out, k)
		}
	}
	return out
}

// sameSegments reports whether two samples hold the same tensors at the
// same places, each a moment in both or in neither. The rules may differ:
// a momentum the loop changes between the steps (OneCycleLR cycling β1)
// is saved with each, and step k's moment is derived by step k's rule.
func sameSegments(x, y []segment) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].name != y[i].name || x[i].from != y[i].from || x[i].to != y[i].to || x[i].moment.Known() != y[i].moment.Known() {
			return false
		}
	}
	return true
}

// oneMore reports whether the counter c reads one more in cur than in
// prev.
func oneMore(cur, prev vec, c segment) bool {
	return c.to > c.from && cur[c.from]-prev[c.from] == 1
}

// appendDerived appends (m − Decay·mp) / Gain, element by element.
func appendDerived(dst, m, mp vec, r loaders.Moment) vec {
	for i := range m {
		dst = append(dst, (m[i]-r.Decay*mp[i])/r.Gain)
	}
	return dst
}

// noteDerived adds to each cause that read gradients, where the
// gradients were derived (deriveGrads), how: the reader of "gradients"
// must know they were not dumped.
func (s *sampleSet) noteDerived(cs []Cause) {
	if s.derived == "" {
		return
	}
	note := fmt.Sprintf("the gradients here were not dumped: derived from the optimizer's saved state at consecutive steps, g_k = (m_k − Decay·m_{k−1}) / Gain for its rule (%s)", s.derived)
	for i := range cs {
		for _, e := range cs[i].Evidence {
			if strings.Contains(e, "gradient") {
				cs[i].Evidence = append(cs[i].Evidence, note)
				break
			}
		}
	}
}

// momentFit is the rule the compared run's optimizer moments followed
// from one step to the next, fitted with the gradient the reference run's
// moments give under their saved rule (g_A = (m_A − Decay·m_A′)/Gain): the
// least-squares D and G of
//
//	m_B ≈ D·m_B′ + G·g_A
//
// over the moments of one saved rule (the first met; m′ the step
// before's). Where the runs' parameters agree, the gradient the compared
// run saw is g_A, and a compared run whose optimizer read the rule its
// param groups save leaves nothing for D and G to move: Resid and Dep are
// then alike. Resid is ‖m_B − D·m_B′ − G·g_A‖, Dep ‖m_B − Decay·m_B′ −
// Gain·g_A‖ (the departure from the saved rule), Norm ‖m_B‖, each summed
// element by element (not from the normal equations' sums, whose
// cancellation would hide a residual below √ε64 of the norm).
type momentFit struct {
	Saved            loaders.Moment
	D, G             float64
	Resid, Dep, Norm float64
	x, g, y          vec // m_B′, g_A and m_B, pooled
}

// add pools one segment's moments m (m_B), mp (m_B′) and gradient ga into
// the fit, where its saved rule is the fit's (the first added).
func (f *momentFit) add(rule loaders.Moment, m, mp, ga vec) {
	if len(f.y) == 0 {
		f.Saved = rule
	} else if rule.Decay != f.Saved.Decay || rule.Gain != f.Saved.Gain {
		return
	}
	for i := range m {
		if finite(mp[i]) && finite(ga[i]) && finite(m[i]) {
			f.x, f.g, f.y = append(f.x, mp[i]), append(f.g, ga[i]), append(f.y, m[i])
		}
	}
}

// solve fits D and G (the normal equations of the 2×2 least squares) and
// sets Resid, Dep and Norm; false where fewer than 3 elements were pooled
// or the two columns are (nearly) parallel. It drops the pooled values.
func (f *momentFit) solve() bool {
	var xx, xg, gg, xy, gy float64
	for i := range f.y {
		x, g, y := f.x[i], f.g[i], f.y[i]
		xx, xg, gg, xy, gy = xx+x*x, xg+x*g, gg+g*g, xy+x*y, gy+g*y
	}
	det := xx*gg - xg*xg
	if len(f.y) < 3 || !(det > 1e-12*xx*gg) {
		return false
	}
	f.D, f.G = (xy*gg-gy*xg)/det, (gy*xx-xy*xg)/det
	var r2, d2, n2 float64
	for i := range f.y {
		x, g, y := f.x[i], f.g[i], f.y[i]
		r, d := y-f.D*x-f.G*g, y-f.Saved.Decay*x-f.Saved.Gain*g
		r2, d2, n2 = r2+r*r, d2+d*d, n2+y*y
	}
	f.Resid, f.Dep, f.Norm = math.Sqrt(r2), math.Sqrt(d2), math.Sqrt(n2)
	f.x, f.g, f.y = nil, nil, nil
	return true
}
