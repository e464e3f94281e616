package check

import (
	"cmp"
	"slices"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
)

// likelyRenames finds the tensors the two runs seem to hold under two
// names: at one step, a pair only the reference run holds (missing) and
// one only the other run holds (extra), of one kind, shape and dtype.
// Where a step has several of one kind, shape and dtype, their names are
// matched by how many bytes they share at their two ends (sharedEnds),
// most first, then in name order. A pair of names matched at several
// steps is one Rename, with those steps; renames are in the order of
// their first step, then of their names.
func likelyRenames(ts []*judge.TensorResult) []outcome.Rename {
	type group struct {
		step  int
		kind  loaders.Kind
		shape string
		dtype loaders.DType
	}
	key := func(step int, kind loaders.Kind, m *loaders.Meta) group {
		return group{step, kind, loaders.FormatShape(m.Shape), m.Effective()}
	}
	var groups []group
	missing, extra := map[group][]*judge.TensorResult{}, map[group][]*judge.TensorResult{}
	for _, t := range ts {
		switch {
		case t.Status == judge.StatusMissing && t.A != nil:
			g := key(t.Step, t.Kind, t.A)
			if len(missing[g]) == 0 {
				groups = append(groups, g)
			}
			missing[g] = append(missing[g], t)
		case t.Status == judge.StatusExtra && t.B != nil:
			g := key(t.Step, t.Kind, t.B)
			extra[g] = append(extra[g], t)
		}
	}
	byNames := map[[2]string]int{}
	var out []outcome.Rename
	for _, g := range groups {
		for _, m := range matchNames(missing[g], extra[g]) {
			a, b := m[0], m[1]
			names := [2]string{a.Name, b.Name}
			i, ok := byNames[names]
			if !ok {
				i = len(out)
				byNames[names] = i
				out = append(out, outcome.Rename{A: a.Name, B: b.Name, Kind: a.Kind, Shape: a.A.Shape, DType: a.A.Effective(),
					Flag: loaders.RenameFor(a.Name, b.Name)})
			}
			out[i].Steps = append(out[i].Steps, a.Step)
		}
	}
	slices.SortStableFunc(out, func(x, y outcome.Rename) int {
		return cmp.Or(cmp.Compare(judge.StepOrder(x.Steps[0]), judge.StepOrder(y.Steps[0])), cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B))
	})
	return out
}

// matchNames pairs pairs missing from the second run with pairs extra in
// it, one to one, the names that share most at their ends first.
func matchNames(missing, extra []*judge.TensorResult) [][2]*judge.TensorResult {
	if len(missing) == 0 || len(extra) == 0 {
		return nil
	}
	type candidate struct {
		m, e   int
		shared int
	}
	var cs []candidate
	for i, m := range missing {
		for j, e := range extra {
			cs = append(cs, candidate{i, j, sharedEnds(m.Name, e.Name)})
		}
	}
	slices.SortStableFunc(cs, func(x, y candidate) int {
		return cmp.Or(cmp.Compare(y.shared, x.shared), cmp.Compare(missing[x.m].Name, missing[y.m].Name),
			cmp.Compare(extra[x.e].Name, extra[y.e].Name))
	})
	usedM, usedE := make([]bool, len(missing)), make([]bool, len(extra))
	var out [][2]*judge.TensorResult
	for _, c := range cs {
		if usedM[c.m] || usedE[c.e] {
			continue
		}
		usedM[c.m], usedE[c.e] = true, true
		out = append(out, [2]*judge.TensorResult{missing[c.m], extra[c.e]})
	}
	return out
}

// sharedEnds is the length of the longest common prefix of a and b plus
// that of the longest common suffix of what is left of them: how much of
// two names a rename kept (params/fc.weight and params/fc1.weight share
// 16 bytes).
func sharedEnds(a, b string) int {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return p + s
}

// diagnosable returns r without the pairs of renames, for diagnosis: a
// tensor held under two names is no bug of the graphed run, and no
// detector is to read it as one (a gradient only the graphed run has,
// steps one run lacks). Its verdict and first divergence are those of
// the pairs left. It is r itself when there are no renames.
func diagnosable(r *judge.Result, renames []outcome.Rename) *judge.Result {
	if len(renames) == 0 {
		return r
	}
	missing, extra := map[pairKey]bool{}, map[pairKey]bool{}
	for _, rn := range renames {
		for _, k := range rn.Steps {
			missing[pairKey{Step: k, Name: rn.A}] = true
			extra[pairKey{Step: k, Name: rn.B}] = true
		}
	}
	view := *r
	view.Tensors = nil
	for _, t := range r.Tensors {
		key := pairKey{Step: t.Step, Name: t.Name}
		if t.Status == judge.StatusMissing && missing[key] || t.Status == judge.StatusExtra && extra[key] {
			continue
		}
		view.Tensors = append(view.Tensors, t)
	}
	view.Verdict, view.FirstDivergence = judge.Run(view.Tensors, view.Errors)
	view.FirstModule, view.ModulesAgree = judge.FirstModule(view.Taps, view.Tensors, view.FirstDivergence)
	return &view
}
