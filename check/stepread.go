package check

import (
	"iter"
	"slices"
	"sort"

	"github.com/graphdiff/graphdiff/loaders"
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
// or parameter ends the comparison: see Runs).
type stepReader struct {
	held  []loaders.Pair
	units [][]int // indexes into held, step by step
	parts [][]int // the units cut in parts, in order: slices of units
	first []int   // by unit: the index of its first part; first[len(units)] = len(parts)
	// failed holds, by side (2i for held[i].A, 2i+1 for its B), the error
	// Load would have given for an entry that could not be read.
	failed []error
	read   []bool // by part: read, or being read ahead
	// inflight are the parts being read ahead (readAhead), each with the
	// channel that gives the entries it read and their errors.
	inflight map[int]chan aheadRead
}

// partPairsDefault is the most pairs of a part, and partsAhead how many
// parts are read ahead at most (see stepReader): a part of 256 small
// files' pairs fits a processor's second-level cache, and three read
// ahead keep reading and comparing apart (bench/README.md).
const (
	partPairsDefault = 256
	partsAhead       = 3
)

// heldAhead is the most bytes of small files (held in memory, see
// loaders.Resolve) the parts read ahead may hold together with the part
// compared, going by the part compared (ahead).
const heldAhead = 32 << 20

// newStepReader returns the reader of the pairs held, compared unit by
// unit (indexes into held), in parts of at most partPairs pairs
// (partPairsDefault when ≤ 0).
func newStepReader(held []loaders.Pair, units [][]int, partPairs int) *stepReader {
	if partPairs <= 0 {
		partPairs = partPairsDefault
	}
	r := &stepReader{held: held, units: units, failed: make([]error, 2*len(held)), inflight: map[int]chan aheadRead{}}
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

// aheadRead is what reading a part ahead gave: the sides read (see
// stepReader.failed) and their errors.
type aheadRead struct {
	sides []int
	errs  []error
}

// entries yields the entries of the pairs held[i] for i in pairs, each
// with its side: 2i for the first run's (A), 2i+1 for the second's.
func (r *stepReader) entries(pairs []int) iter.Seq2[int, *loaders.Entry] {
	return func(yield func(int, *loaders.Entry) bool) {
		for _, i := range pairs {
			if e := r.held[i].A; e != nil && !yield(2*i, e) {
				return
			}
			if e := r.held[i].B; e != nil && !yield(2*i+1, e) {
				return
			}
		}
	}
}

// entry returns the entry of side k (see entries).
func (r *stepReader) entry(k int) *loaders.Entry {
	if k%2 == 0 {
		return r.held[k/2].A
	}
	return r.held[k/2].B
}

// errs returns the errors that kept pair i's sides from being read (nil
// where a side was read or is not held).
func (r *stepReader) errs(i int) (a, b error) { return r.failed[2*i], r.failed[2*i+1] }

// ahead returns how many parts to read ahead of part q, just read: up to
// partsAhead, as many as hold, at what q holds, within heldAhead with q;
// one only where q holds a file that is not held in memory (its
// descriptor is kept for the read of its data, up to a number per part:
// more open at once would grow the process's table of descriptors, which
// costs more than opening some files twice).
func (r *stepReader) ahead(q int) int {
	var held int64
	for _, e := range r.entries(r.parts[q]) {
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

// readFirstParts reads what deciding the precision needs before any pair
// is compared: with all, every part; otherwise the first part, and every
// part of the first step that holds gradients or parameters (the
// precision the model computes in, which revealAutocast reads from all of
// that step's gradients and outputs).
func (r *stepReader) readFirstParts(all bool) {
	switch {
	case all:
		for u := range r.units {
			r.readUnit(u)
		}
	case len(r.units) > 0:
		r.readPart(0)
		if q := slices.IndexFunc(r.parts, r.holdsWeights); q >= 0 {
			u := sort.Search(len(r.units), func(u int) bool { return r.first[u+1] > q })
			r.readUnit(u) // the whole step: revealAutocast samples all of its gradients and outputs
		}
	}
}

// readUnit reads the deferred entries of unit u (see readParts).
func (r *stepReader) readUnit(u int) { r.readParts(r.first[u], r.first[u+1]) }

// readPart reads the deferred entries of part q (see readParts).
func (r *stepReader) readPart(q int) { r.readParts(q, q+1) }

// readParts reads the deferred entries of parts from to to-1 not read
// yet, all at once, and waits for the reading ahead of the others to end.
func (r *stepReader) readParts(from, to int) {
	var sides []int
	for q := from; q < to; q++ {
		r.waitFor(q)
		if !r.read[q] {
			r.read[q] = true
			sides = append(sides, r.deferred(q)...)
		}
	}
	if len(sides) > 0 {
		r.record(sides, r.resolve(sides))
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
	sides := r.deferred(q)
	done := make(chan aheadRead, 1)
	r.inflight[q] = done
	go func() { done <- aheadRead{sides, r.resolve(sides)} }()
}

// waitFor waits for the reading ahead of part q to end, if it is under
// way, and records its failures.
func (r *stepReader) waitFor(q int) {
	if done, ok := r.inflight[q]; ok {
		got := <-done
		delete(r.inflight, q)
		r.record(got.sides, got.errs)
	}
}

// wait waits for every reading ahead to end.
func (r *stepReader) wait() {
	for q := range r.inflight {
		r.waitFor(q)
	}
}

// deferred returns the sides of part q not read yet.
func (r *stepReader) deferred(q int) []int {
	var sides []int
	for k, e := range r.entries(r.parts[q]) {
		if e.Deferred() {
			sides = append(sides, k)
		}
	}
	return sides
}

// resolve reads the entries of sides (loaders.Resolve) and returns their
// errors, by position.
func (r *stepReader) resolve(sides []int) []error {
	es := make([]*loaders.Entry, len(sides))
	for j, k := range sides {
		es[j] = r.entry(k)
	}
	return loaders.Resolve(es)
}

// record remembers the sides that could not be read.
func (r *stepReader) record(sides []int, errs []error) {
	for j, err := range errs {
		if err != nil {
			r.failed[sides[j]] = err
		}
	}
}

// errorsOf returns the errors of the entries of run A (a) or B that could
// not be read.
func (r *stepReader) errorsOf(a bool) []error {
	var errs []error
	for _, unit := range r.units {
		for k := range r.entries(unit) {
			if err := r.failed[k]; err != nil && (k%2 == 0) == a {
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

// holdsWeights reports whether the pairs held[i], i in pairs, include a
// gradient or a parameter.
func (r *stepReader) holdsWeights(pairs []int) bool {
	for _, i := range pairs {
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
	for _, e := range r.entries(pairs) {
		if live(e) != nil {
			d = coarserWeight(d, e)
		}
	}
	return d
}

// release drops the data that the entries of the pairs held[i], i in
// pairs, hold in memory, and returns the stateful ones among them
// (parameters, tensors of no kind word: stateful), whose data it leaves
// for the next step's updates (release them with Release then). Losses
// held in memory are left: the loss curve reads them.
func (r *stepReader) release(pairs []int) (state []*loaders.Entry) {
	for _, e := range r.entries(pairs) {
		switch {
		case live(e) == nil:
		case e.Kind == loaders.KindLoss && e.Held():
			// left for the loss curve
		case stateful(e.Kind):
			state = append(state, e)
		default:
			e.Release()
		}
	}
	return state
}

// readable counts the entries of run A (a) or B, of n, that could be
// read, or were not tried.
func (r *stepReader) readable(n int, a bool) int {
	for k, err := range r.failed {
		if err != nil && (k%2 == 0) == a {
			n--
		}
	}
	return n
}
