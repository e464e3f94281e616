package check

import (
	"iter"
	"math"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// stepReader reads the deferred entries of a comparison's pairs, a part
// of a step (unit) at a time, and remembers those that could not be read.
//
// A step is read in parts of at most partPairs pairs: while a part is
// classified and compared, the next parts are read (up to partsAhead of
// them, see ahead), so that reading never waits for comparing, nor
// comparing for reading, and a file's bytes are compared soon after they
// were read; what is held at a time is those few parts, where reading
// whole steps ahead held two steps. Before any is compared, the first
// part and the first part with gradients or parameters are read: the
// model's precision comes from them (a later part with a coarser gradient
// or parameter makes the comparison start again, every file read first).
type stepReader struct {
	held  []loaders.Pair
	units [][]int // indexes into held, step by step
	parts [][]int // the units cut in parts, in order: slices of units
	first []int   // by unit: the index of its first part; first[len(units)] = len(parts)
	// failed are the entries that could not be read, with the error Load
	// would have given.
	failed map[*loaders.Entry]error
	read   []bool // by part: read, or being read ahead
	// inflight are the parts being read ahead (readAhead), each with the
	// channel that gives the entries it read and their errors.
	inflight map[int]chan aheadRead
}

// partPairs is the most pairs of a part, and partsAhead how many parts are
// read ahead at most (see stepReader). On 2 x 16,000 files of 4 KiB in 8
// steps (bench/costs.sh's small files), medians of 25 turns taken in turn,
// against 0.100 s for bench/floor files: one part of 1,024 pairs read
// ahead took 0.195 s, 2 parts of 256 0.181 s, 3 parts of 256 0.176 s, 3
// of 192 0.180 s and 3 of 384 0.189 s; 4 of 128 and 8 of 64 took 0.188
// and 0.196 s in another 21 turns. A part of 256 such pairs is 2.2 MB, a
// processor's second-level cache here. A variable so that tests can cut
// steps in parts of a few pairs.
var partPairs = 256

const partsAhead = 3

// heldAhead is the most bytes of small files (held in memory, see
// loaders.Resolve) the parts read ahead may hold together with the part
// compared, going by the part compared (ahead).
const heldAhead = 32 << 20

// newStepReader returns the reader of the pairs held, compared unit by
// unit (indexes into held).
func newStepReader(held []loaders.Pair, units [][]int) *stepReader {
	r := &stepReader{held: held, units: units, failed: map[*loaders.Entry]error{}, inflight: map[int]chan aheadRead{}}
	for _, unit := range units {
		r.first = append(r.first, len(r.parts))
		for len(unit) > 0 {
			n := min(len(unit), partPairs)
			r.parts, unit = append(r.parts, unit[:n:n]), unit[n:]
		}
	}
	r.first = append(r.first, len(r.parts))
	r.read = make([]bool, len(r.parts))
	return r
}

// aheadRead is what reading a part ahead gave.
type aheadRead struct {
	es   []*loaders.Entry
	errs []error
}

// entries yields the entries of the pairs held[i] for i in pairs, each
// with whether it is of the first run (A).
func (r *stepReader) entries(pairs []int) iter.Seq2[*loaders.Entry, bool] {
	return func(yield func(*loaders.Entry, bool) bool) {
		for _, i := range pairs {
			if e := r.held[i].A; e != nil && !yield(e, true) {
				return
			}
			if e := r.held[i].B; e != nil && !yield(e, false) {
				return
			}
		}
	}
}

// ahead returns how many parts to read ahead of part q, just read: up to
// partsAhead, as many as hold, at what q holds, within heldAhead with q;
// one only where q holds a file that is not held in memory (its
// descriptor is kept for the read of its data, up to a number per part:
// more open at once would grow the process's table of descriptors, which
// costs more than opening some files twice).
func (r *stepReader) ahead(q int) int {
	var held int64
	for e := range r.entries(r.parts[q]) {
		switch {
		case live(e) == nil: // not read
		case !e.Held():
			return 1
		default:
			held += e.Size()
		}
	}
	return max(1, min(partsAhead, int(heldAhead/max(held, 1))-1))
}

// readUnit reads the deferred entries of unit u (see readParts).
func (r *stepReader) readUnit(u int) { r.readParts(r.first[u], r.first[u+1]) }

// readPart reads the deferred entries of part q (see readParts).
func (r *stepReader) readPart(q int) { r.readParts(q, q+1) }

// readParts reads the deferred entries of parts from to to-1 not read
// yet, all at once, and waits for the reading ahead of the others to end.
func (r *stepReader) readParts(from, to int) {
	var es []*loaders.Entry
	for q := from; q < to; q++ {
		r.waitFor(q)
		if !r.read[q] {
			r.read[q] = true
			es = append(es, r.deferred(q)...)
		}
	}
	if len(es) > 0 {
		r.record(es, loaders.Resolve(es))
	}
}

// readOnward reads part q and starts reading the parts after it (as many
// as ahead says), to be read while q is classified and compared.
func (r *stepReader) readOnward(q int) {
	r.readPart(q)
	for k := range r.ahead(q) {
		r.readAhead(q + 1 + k)
	}
}

// readAhead starts reading the deferred entries of part q on another
// goroutine, once: the next parts are read while one is classified,
// compared and judged. Only readParts, waitFor and wait touch
// what it reads, and nothing else may touch part q's entries before one
// of them returns.
func (r *stepReader) readAhead(q int) {
	if q >= len(r.parts) || r.read[q] {
		return
	}
	r.read[q] = true
	es := r.deferred(q)
	done := make(chan aheadRead, 1)
	r.inflight[q] = done
	go func() { done <- aheadRead{es, loaders.Resolve(es)} }()
}

// waitFor waits for the reading ahead of part q to end, if it is under
// way, and records its failures.
func (r *stepReader) waitFor(q int) {
	if done, ok := r.inflight[q]; ok {
		got := <-done
		delete(r.inflight, q)
		r.record(got.es, got.errs)
	}
}

// wait waits for every reading ahead to end.
func (r *stepReader) wait() {
	for q := range r.inflight {
		r.waitFor(q)
	}
}

// deferred returns the entries of part q not read yet.
func (r *stepReader) deferred(q int) []*loaders.Entry {
	var es []*loaders.Entry
	for e := range r.entries(r.parts[q]) {
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
	for _, unit := range r.units {
		for e, isA := range r.entries(unit) {
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
// of the pairs held[i], i in pairs, that were read (see coarserWeight).
func (r *stepReader) weightDType(pairs []int) loaders.DType {
	d := loaders.Invalid
	for e := range r.entries(pairs) {
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
// or as the tensors of its name first read in each run, or, where no
// tensor of its name was read yet, as unread (the plan then wants all it
// allows of the pair: the comparison keeps as many values as the pair
// has, up to that). A pair whose files could not be read, and of a name
// not read in either run, is left out. The descriptions are set on ts and
// replaced when the pairs are classified.
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
		if t.A == nil && t.B == nil && p.A.Deferred() && p.B.Deferred() {
			t.A, t.B = unread, unread
		}
		if t.A != nil && t.B != nil {
			plan = append(plan, t)
		}
	}
	return plan
}

// unread describes, for provisional, a pair of a name not read yet: of
// the largest length a tensor the plan wants the values of can have.
var unread = &loaders.Meta{DType: loaders.Float32, Shape: []int{math.MaxInt32}}

// release drops the data that the entries of the pairs held[i], i in
// pairs, hold in memory, and returns the parameters among them, whose
// data it leaves for the next step's updates (release them with Release
// then). Losses held in memory are left: the loss curve reads them.
func (r *stepReader) release(pairs []int) (params []*loaders.Entry) {
	for e := range r.entries(pairs) {
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
