package check

import (
	"iter"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// stepReader reads the deferred entries of a comparison's pairs, a step
// (unit) at a time, and remembers those that could not be read.
type stepReader struct {
	held  []loaders.Pair
	units [][]int // indexes into held, step by step
	// failed are the entries that could not be read, with the error Load
	// would have given.
	failed map[*loaders.Entry]error
	read   []bool // by unit
	// aheadDone reports the end of a reading ahead (readAhead): the
	// entries it read and their errors; nil when none is under way.
	aheadDone chan aheadRead
}

// aheadRead is what reading a unit ahead gave.
type aheadRead struct {
	es   []*loaders.Entry
	errs []error
}

// entries yields the entries of unit u's pairs, each with whether it is of
// the first run (A).
func (r *stepReader) entries(u int) iter.Seq2[*loaders.Entry, bool] {
	return func(yield func(*loaders.Entry, bool) bool) {
		for _, i := range r.units[u] {
			if e := r.held[i].A; e != nil && !yield(e, true) {
				return
			}
			if e := r.held[i].B; e != nil && !yield(e, false) {
				return
			}
		}
	}
}

// readUnit reads the deferred entries of unit u, once, or waits for
// their reading ahead to end.
func (r *stepReader) readUnit(u int) {
	if es, ok := r.claim(u); ok {
		r.record(es, loaders.Resolve(es))
	}
}

// readAhead starts reading the deferred entries of unit u on another
// goroutine, once: the next step is read while one is classified,
// compared and judged, which keep a processor each part of the time. Only
// readUnit and wait touch what it reads, and nothing else may touch unit
// u's entries before readUnit(u) or wait returns.
func (r *stepReader) readAhead(u int) {
	if u >= len(r.units) {
		return
	}
	if es, ok := r.claim(u); ok {
		r.aheadDone = make(chan aheadRead, 1)
		go func(done chan<- aheadRead) { done <- aheadRead{es, loaders.Resolve(es)} }(r.aheadDone)
	}
}

// claim waits for any reading ahead to end and returns the deferred
// entries of unit u to read, marking the unit read; false when it was
// read already.
func (r *stepReader) claim(u int) ([]*loaders.Entry, bool) {
	r.wait()
	if r.read[u] {
		return nil, false
	}
	r.read[u] = true
	return r.deferred(u), true
}

// wait waits for a reading ahead to end, if one is under way, and records
// its failures.
func (r *stepReader) wait() {
	if r.aheadDone == nil {
		return
	}
	got := <-r.aheadDone
	r.aheadDone = nil
	r.record(got.es, got.errs)
}

// deferred returns the entries of unit u not read yet.
func (r *stepReader) deferred(u int) []*loaders.Entry {
	var es []*loaders.Entry
	for e := range r.entries(u) {
		if e.Deferred() {
			es = append(es, e)
		}
	}
	return es
}

// record remembers the entries of es that could not be read.
func (r *stepReader) record(es []*loaders.Entry, errs []error) {
	for k, err := range errs {
		if err != nil {
			r.failed[es[k]] = err
		}
	}
}

// errorsOf returns the errors of the entries of run A (a) or B that could
// not be read.
func (r *stepReader) errorsOf(a bool) []error {
	var errs []error
	for u := range r.units {
		for e, isA := range r.entries(u) {
			if err := r.failed[e]; err != nil && isA == a {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// live returns e when it is there and read, nil otherwise.
func live(e *loaders.Entry) *loaders.Entry {
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
// of unit u that were read (see coarserWeight).
func (r *stepReader) weightDType(u int) loaders.DType {
	d := loaders.Invalid
	for e := range r.entries(u) {
		if live(e) != nil {
			d = coarserWeight(d, e)
		}
	}
	return d
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
		case live(e) != nil:
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
	for e := range r.entries(u) {
		switch {
		case live(e) == nil:
		case e.Kind == loaders.KindLoss && e.Held():
			// left for the loss curve
		case e.Kind == loaders.KindParam:
			params = append(params, e)
		default:
			e.Release()
		}
	}
	return params
}

// readable counts the entries of run that could be read, or were not
// tried.
func (r *stepReader) readable(run *loaders.Run) int {
	n := len(run.Entries)
	for _, e := range run.Entries {
		if r.failed[e] != nil {
			n--
		}
	}
	return n
}
