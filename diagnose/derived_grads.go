package diagnose

import (
	"cmp"
	"fmt"
	"maps"
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
			da = appendDerived(da, a[sg.from:sg.to], ap[sg.from:sg.to], sg.moment)
			db = appendDerived(db, b[sg.from:sg.to], bp[sg.from:sg.to], sg.moment)
			if rule := sg.moment.String(); !slices.Contains(rules, rule) {
				rules = append(rules, rule)
			}
		}
		if !consecutive || len(da) == 0 {
			continue
		}
		ga[k.step], gb[k.step] = append(ga[k.step], da...), append(gb[k.step], db...)
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
// same places.
func sameSegments(x, y []segment) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
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
