package check

import (
	"sort"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// stepUnits groups the indexes of pairs by step, in comparison order: steps
// ascending, step-less pairs last; each unit keeps the pairing order.
func stepUnits(pairs []loaders.Pair) [][]int {
	index := map[int]int{}
	var units [][]int
	for i, p := range pairs {
		u, ok := index[p.Step]
		if !ok {
			u = len(units)
			index[p.Step] = u
			units = append(units, nil)
		}
		units[u] = append(units[u], i)
	}
	sort.SliceStable(units, func(i, j int) bool {
		return judge.StepOrder(pairs[units[i][0]].Step) < judge.StepOrder(pairs[units[j][0]].Step)
	})
	return units
}

// stepReader reads the deferred entries of a comparison's pairs, a step
// (unit) at a time, and remembers those that could not be read.
type stepReader struct {
	a, b  *loaders.Run
	held  []loaders.Pair
	units [][]int
	// failed are the entries that could not be read, with the error Load
	// would have given; late are those errors by run.
	failed map[*loaders.Entry]error
	late   map[*loaders.Run][]error
	done   map[int]bool // units read
}

// read reads the deferred entries of unit u, once. (Reading the next unit
// while one is compared was tried: on 2 cores, where reading and
// comparing both keep the processors busy, it changed no time.)
func (r *stepReader) read(u int) {
	if r.done == nil {
		r.done = map[int]bool{}
	}
	if r.done[u] {
		return
	}
	r.done[u] = true
	var es []*loaders.Entry
	var runs []*loaders.Run
	for _, i := range r.units[u] {
		if e := r.held[i].A; e != nil && e.Deferred() {
			es, runs = append(es, e), append(runs, r.a)
		}
		if e := r.held[i].B; e != nil && e.Deferred() {
			es, runs = append(es, e), append(runs, r.b)
		}
	}
	for k, err := range loaders.Resolve(es) {
		if err != nil {
			r.failed[es[k]] = err
			r.late[runs[k]] = append(r.late[runs[k]], err)
		}
	}
}

// live returns e when it is there and read, nil otherwise.
func (r *stepReader) live(e *loaders.Entry) *loaders.Entry {
	if e == nil || e.Deferred() {
		return nil
	}
	return e
}

// holdsWeights reports whether a unit has a gradient or a parameter.
func (r *stepReader) holdsWeights(unit []int) bool {
	for _, i := range unit {
		if k := r.held[i].Kind; k == loaders.KindGrad || k == loaders.KindParam {
			return true
		}
	}
	return false
}

// weightDType returns the coarsest dtype of the gradients and parameters
// of unit u that were read (see weightDType).
func (r *stepReader) weightDType(u int) loaders.DType {
	var es []*loaders.Entry
	for _, i := range r.units[u] {
		for _, e := range []*loaders.Entry{r.held[i].A, r.held[i].B} {
			if r.live(e) != nil {
				es = append(es, e)
			}
		}
	}
	return weightDType(es)
}

// coarser reports whether d is coarser (has a larger epsilon) than model.
func coarser(d, model loaders.DType) bool {
	return d != loaders.Invalid && tolerances.Epsilon(d) > tolerances.Epsilon(model)
}

// provisional returns the results of the pairs to plan diagnosis' samples
// on before their steps are read: each pair described as it is, if read,
// or as the tensors of its name first read in each run (a pair of a name
// not read yet is left out). The descriptions are set on ts and replaced
// when the pairs are classified.
func (r *stepReader) provisional(ts []*judge.TensorResult) []*judge.TensorResult {
	firstA, firstB := map[string]*loaders.Meta{}, map[string]*loaders.Meta{}
	describe := func(e *loaders.Entry, first map[string]*loaders.Meta) *loaders.Meta {
		switch {
		case e == nil:
			return nil
		case r.live(e) != nil:
			m := e.Meta()
			if first[e.Name] == nil {
				first[e.Name] = m
			}
			return m
		}
		return nil
	}
	for i, p := range r.held {
		ts[i].A, ts[i].B = describe(p.A, firstA), describe(p.B, firstB)
	}
	var plan []*judge.TensorResult
	for i, p := range r.held {
		t := ts[i]
		if p.A == nil || p.B == nil {
			continue
		}
		if t.A == nil {
			t.A = firstA[p.Name]
		}
		if t.B == nil {
			t.B = firstB[p.Name]
		}
		if t.A != nil && t.B != nil {
			plan = append(plan, t)
		}
	}
	return plan
}

// release drops the data that unit u's entries hold in memory, and that of
// prev; it returns the unit's parameters, whose data it leaves for the
// next unit's updates (pass them as prev then). Losses held in memory are
// left: the loss curve reads them.
func (r *stepReader) release(u int, prev []*loaders.Entry) (params []*loaders.Entry) {
	for _, e := range prev {
		e.Release()
	}
	for _, i := range r.units[u] {
		for _, e := range []*loaders.Entry{r.held[i].A, r.held[i].B} {
			switch {
			case r.live(e) == nil:
			case e.Kind == loaders.KindLoss && e.Held():
				// left for the loss curve
			case e.Kind == loaders.KindParam:
				params = append(params, e)
			default:
				e.Release()
			}
		}
	}
	return params
}

// entries counts the entries of run that could be read, or were not tried.
func (r *stepReader) entries(run *loaders.Run) int {
	n := len(run.Entries)
	for _, e := range run.Entries {
		if r.failed[e] != nil {
			n--
		}
	}
	return n
}
