package compare

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"unsafe"

	"github.com/graphdiff/graphdiff/internal/parallel"
	"github.com/graphdiff/graphdiff/loaders"
)

// UpdateJob is one parameter at one step of two runs: how far each run
// moved it from the previous step, element by element, against the size of
// the reference run's gradient there. All five tensors have the same shape
// and storage order.
type UpdateJob struct {
	// Grad is the reference run's gradient of the parameter at this step;
	// nil when the run did not dump it (every element then goes to the
	// NoGrad bin).
	Grad *loaders.Tensor
	// PrevA and CurA are the reference run's parameter at the previous
	// and at this step; PrevB and CurB the compared run's.
	PrevA, CurA, PrevB, CurB *loaders.Tensor
	// Epsilon is the machine epsilon of the dtype the parameters are
	// held in (their unit in the last place at 1): what Update.UlpMovedA
	// and UlpMovedB measure moves against; 0 counts none.
	Epsilon float64
}

// NoGrad is the Exp of the bin that holds elements without a usable
// gradient: zero, subnormal, NaN or ±Inf, or not dumped.
const NoGrad = math.MinInt32

// UpdateBin holds the update sums of the elements whose reference gradient
// g has |g| in [2^(Exp−1), 2^Exp) (Exp = NoGrad: see NoGrad). With
// u = cur − prev in each run, over the elements whose four values are
// finite:
//
//	UU = Σ u_A²,  DU = Σ (u_B − u_A)·u_A,  DD = Σ (u_B − u_A)²,
//	PU = Σ |p_A|·|u_A|   (p_A the reference run's previous value)
//
// PU/UU is the parameters' size in units of their update: storing p + u in
// a dtype of epsilon ε rounds the update by up to about ε·|p|.
//
// Bins of one octave let a verdict pick the elements whose gradients are
// above a threshold it learns only later (from the whole step's gradients),
// and let shards' sums add up to the unsharded ones.
type UpdateBin struct {
	Exp            int
	N              int64
	UU, DU, DD, PU float64
}

// Update is what an UpdateJob measured.
type Update struct {
	// Count is the number of elements; MovedA and MovedB count those whose
	// value at this step differs from the previous step's (NaN counts as
	// moved), in each run. UlpMovedA counts those that moved in run A while
	// run B left them unchanged, by at most one unit in the last place of
	// the parameters' dtype (|u_A| ≤ ε·|p_A|, UpdateJob.Epsilon): an
	// update that rounds to nothing in one run and to one unit in the
	// other. UlpMovedB likewise for run B.
	Count, MovedA, MovedB int64
	UlpMovedA, UlpMovedB  int64
	// Bins, by increasing Exp, holds only bins with elements.
	Bins []UpdateBin
	// Worst holds up to WorstElems elements with the largest update
	// difference |u_B − u_A|, largest first (ties: the earlier element):
	// where a difference sits, element by element.
	Worst []UpdateElem
}

// WorstElems is how many elements Update.Worst keeps.
const WorstElems = 8

// UpdateElem is one element of an Update: its C-order index, the Exp of
// the bin its reference gradient falls in, and its update difference
// D = u_B − u_A.
type UpdateElem struct {
	Index []int
	Exp   int
	D     float64
}

// Above returns the sums of the bins whose Exp is at least minExp (the
// NoGrad bin counts only when minExp is NoGrad), with Exp set to minExp.
func (u *Update) Above(minExp int) UpdateBin {
	s := UpdateBin{Exp: minExp}
	for _, b := range u.Bins {
		if b.Exp >= minExp {
			s.N += b.N
			s.UU += b.UU
			s.DU += b.DU
			s.DD += b.DD
			s.PU += b.PU
		}
	}
	return s
}

// UpdateOutcome is what measuring one UpdateJob gave.
type UpdateOutcome struct {
	Update *Update // nil when Err is set
	Err    error
}

// Updates measures every job on up to workers goroutines (all CPUs when
// workers ≤ 0); the outcomes are in job order and do not depend on
// workers. Each job's sums are added in storage order.
func Updates(jobs []UpdateJob, workers int) []UpdateOutcome {
	return newEngine().updates(jobs, workers)
}

// updates is Updates, run by e.
func (e *engine) updates(jobs []UpdateJob, workers int) []UpdateOutcome {
	out := make([]UpdateOutcome, len(jobs))
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	order := make([]int, len(jobs)) // largest first: no large job left to run alone at the end
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(jobs[y].CurA.Len(), jobs[x].CurA.Len()) })
	parallel.For(len(jobs), workers, func(k int) {
		i := order[k]
		u, err := e.measureUpdate(jobs[i])
		out[i] = UpdateOutcome{Update: u, Err: err}
	})
	return out
}

// updateBufElems is how many elements of each tensor are decoded at a time.
const updateBufElems = 1 << 14

// binOffset maps a float32 biased exponent e (1..254) to Exp = e − 126:
// |g| in [2^(e−127), 2^(e−126)).
const binOffset = 126

func (e *engine) measureUpdate(j UpdateJob) (*Update, error) {
	ts := []*loaders.Tensor{j.PrevA, j.CurA, j.PrevB, j.CurB}
	if j.Grad != nil {
		ts = append(ts, j.Grad)
	}
	n := j.CurA.Len()
	wide := false // some side is float64: read as float64, not float32
	for _, t := range ts {
		if t.Len() != n || t.FortranOrder != j.CurA.FortranOrder {
			return nil, fmt.Errorf("%s: parameter and gradient differ in size or storage order", t.Path)
		}
		if !t.DType.IsFloat() {
			return nil, fmt.Errorf("%s: %s is not a floating-point dtype", t.Path, t.DType)
		}
		wide = wide || t.DType == loaders.Float64
	}
	sc := takeUpdateScratch()
	defer updateScratchPool.Put(sc)
	sums := &updateSums{u: &Update{Count: n}, noKernels: ^e.kernels, t: sc.table(), blk: sc.blk}
	defer func() { sc.blk = sums.blk }()
	var err error
	sums.eps = j.Epsilon
	if wide {
		err = readUpdate64(ts, n, sums)
	} else {
		err = e.readUpdate32(ts, n, sums, sc)
	}
	if err != nil {
		return nil, err
	}
	return sums.finish(j), nil
}

// updateScratch is what measuring one update uses besides its result:
// the sums' table, the assembly's block and the buffers values are
// decoded into, kept from one job to the next (updateScratchPool): the
// 296 updates of a GPT-2-sized dump would otherwise allocate about 100 MB
// the collector must take back.
type updateScratch struct {
	t    *updateTable
	blk  *updateBlock
	bufs []float32
}

var updateScratchPool sync.Pool

// takeUpdateScratch returns a kept updateScratch, or a new one.
func takeUpdateScratch() *updateScratch {
	if sc, ok := updateScratchPool.Get().(*updateScratch); ok {
		return sc
	}
	return &updateScratch{}
}

// table returns the scratch's sums table, zeroed.
func (sc *updateScratch) table() *updateTable {
	if sc.t == nil {
		sc.t = newUpdateTable()
	} else {
		*sc.t = updateTable{}
	}
	return sc.t
}

// floats returns n float32 of the scratch's buffers.
func (sc *updateScratch) floats(n int) []float32 {
	if cap(sc.bufs) < n {
		sc.bufs = make([]float32, n)
	}
	return sc.bufs[:n]
}

// readUpdate32 adds the elements of ts (prev and current parameter of
// each run, and the gradient when there is a fifth) to sums, read as
// float32, the engine's way: in place where the files allow. A file
// truncated while it is mapped is an error naming it (RecoverFault).
func (e *engine) readUpdate32(ts []*loaders.Tensor, n int64, sums *updateSums, sc *updateScratch) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer loaders.RecoverFault(&err, ts...)
	srcs := make([]*float32Source, len(ts))
	defer func() {
		for _, s := range srcs {
			if s != nil {
				s.close()
			}
		}
	}()
	bufLen := int(min(updateBufElems, n))
	bufs := sc.floats(len(ts) * bufLen) // kept from job to job, sized to the tensor
	for i, t := range ts {
		s, err := e.openWhole(t, bufs[i*bufLen:(i+1)*bufLen:(i+1)*bufLen])
		if err != nil {
			return err
		}
		srcs[i] = s
	}
	vals := make([][]float32, len(ts))
	for done := int64(0); done < n; {
		want := int(min(updateBufElems, n-done))
		for i, s := range srcs {
			v, err := s.next(want)
			if err != nil {
				return err
			}
			if len(v) != want {
				return fmt.Errorf("%s: %w", ts[i].Path, errShort)
			}
			vals[i] = v
		}
		addUpdates(sums, done, vals)
		done += int64(want)
	}
	return nil
}

// readUpdate64 is readUpdate32 for tensors of which some are float64: every
// side is read as float64, so that updates below float32's resolution are
// measured, not rounded away.
func readUpdate64(ts []*loaders.Tensor, n int64, sums *updateSums) error {
	rs := make([]*loaders.Reader, len(ts))
	defer func() {
		for _, r := range rs {
			if r != nil {
				r.Close()
			}
		}
	}()
	for i, t := range ts {
		r, err := t.Open()
		if err != nil {
			return err
		}
		rs[i] = r
	}
	bufLen := int(min(updateBufElems, n))
	bufs := make([]float64, len(ts)*bufLen)
	vals := make([][]float64, len(ts))
	for done := int64(0); done < n; {
		want := int(min(updateBufElems, n-done))
		for i, r := range rs {
			v := bufs[i*bufLen : i*bufLen+want]
			for got := 0; got < want; {
				k, err := r.Read(v[got:])
				got += k
				if errors.Is(err, io.EOF) && got < want {
					return fmt.Errorf("%s: %w", ts[i].Path, errShort)
				}
				if err != nil && !errors.Is(err, io.EOF) {
					return err
				}
			}
			vals[i] = v
		}
		addUpdates(sums, done, vals)
		done += int64(want)
	}
	return nil
}

// updateSums are an Update's sums while its elements are added: by the
// gradient's float32 biased exponent e (bin 0: no gradient, or one that is
// zero, subnormal, ±Inf or NaN), and the elements of largest update
// difference.
type updateSums struct {
	t     *updateTable // allocated on first use
	worst worstElems
	u     *Update
	eps   float64 // UpdateJob.Epsilon
	// noKernels are the kernels addUpdates may not run (tests set them to
	// run each set): it runs those of updateKernels less these.
	noKernels kernels
	blk       *updateBlock // the assembly's buffers, allocated on first use
}

// updateTable holds the sums of updateSums by bin e: the 256 float32
// biased exponents and the assembly's row.
type updateTable struct {
	// sums[e] holds bin e's UU, DU, DD and PU, in that order; 32-byte
	// aligned (the assembly adds a row with one 256-bit add). Row skipBin
	// and row updateRows−1 are the assembly's own (see update_amd64.s);
	// no bin's sums are there.
	sums [updateRows][4]float64
	// counts[j][e] counts elements of bin e in eight tables whose sum is
	// the bin's N (the assembly counts element i in table i mod 8, the Go
	// loop in table 0).
	counts [8][256]int64
}

// updateRows is the number of rows of updateTable.sums: a bin for each
// float32 biased exponent, and one more the assembly reads (never writes).
const updateRows = 257

// skipBin is the bin no element is added to (a biased exponent of 0xff
// puts an element in bin 0): the assembly adds the elements whose update
// is NaN or ±Inf in either run there instead of leaving them out.
const skipBin = 0xff

// updateKernels are the kernels addUpdates runs: the machine's
// (machineKernels).
var updateKernels = machineKernels()

// init allocates the sums on first use.
func (s *updateSums) init() {
	if s.t == nil {
		s.t = newUpdateTable()
	}
}

// newUpdateTable returns a zeroed updateTable at a 64-byte boundary.
func newUpdateTable() *updateTable {
	return (*updateTable)(alignedFloats(int(unsafe.Sizeof(updateTable{}) / 8)))
}

// alignedFloats returns the first of n zeroed float64 starting at a
// 64-byte boundary.
func alignedFloats(n int) unsafe.Pointer {
	buf := make([]float64, n+8)
	skip := (-uintptr(unsafe.Pointer(&buf[0]))) % 64 / 8
	return unsafe.Pointer(&buf[skip])
}

// addUpdates adds the elements at done.. of vals (prev and current
// parameter of run A, then of run B, then the gradient when there is a
// fifth) to s: what moved in each run, and u = cur − prev of each run in
// float64, binned by the gradient's exponent. Stenciled for float32 and
// float64, the arithmetic is the same. For float32 values with the
// kernUpdate512 kernel, whole groups of sixteen go through the assembly
// (addUpdates512), with the same results bit for bit, and the rest through
// addUpdatesGo.
func addUpdates[F float32 | float64](s *updateSums, done int64, vals [][]F) {
	s.init()
	if v, ok := any(vals).([][]float32); ok && updateKernels&^s.noKernels&kernUpdate512 != 0 {
		k := s.addUpdates512(done, v)
		if k == len(v[1]) {
			return
		}
		var rest [5][]float32
		for i := range v {
			rest[i] = v[i][k:]
		}
		addUpdatesGo(s, done+int64(k), rest[:len(v)])
		return
	}
	addUpdatesGo(s, done, vals)
}

// addUpdatesGo is addUpdates, one element at a time.
func addUpdatesGo[F float32 | float64](s *updateSums, done int64, vals [][]F) {
	pa, ca, pb, cb := vals[0], vals[1], vals[2], vals[3]
	n := len(ca)
	pa, pb, cb = pa[:n], pb[:n], cb[:n] // one bounds check, not one per element
	var g []F
	if len(vals) == 5 {
		g = vals[4][:n]
	}
	worst := &s.worst
	var movedA, movedB, ulpA, ulpB int64
	floor := worst.floor
	for k := range n {
		a0, a1, b0, b1 := pa[k], ca[k], pb[k], cb[k]
		mA, mB := a1 != a0 || a1 != a1, b1 != b0 || b1 != b1
		ua := float64(a1) - float64(a0)
		ub := float64(b1) - float64(b0)
		if mA != mB { // one run moved it and the other did not: by one ulp?
			if mA {
				movedA++
				if math.Abs(ua) <= s.eps*math.Abs(float64(a0)) {
					ulpA++
				}
			} else {
				movedB++
				if math.Abs(ub) <= s.eps*math.Abs(float64(b0)) {
					ulpB++
				}
			}
		} else if mA {
			movedA++
			movedB++
		}
		if ua-ua != 0 || ub-ub != 0 { // NaN or ±Inf: x − x is 0 for every finite x
			continue
		}
		e := 0
		if g != nil {
			if b := int(math.Float32bits(float32(g[k]))>>23) & 0xff; b != 0 && b != 0xff {
				e = b
			}
		}
		d := ub - ua
		if math.Abs(d) > floor {
			worst.add(done+int64(k), e, d)
			floor = worst.floor
		}
		// float64(·) rounds each product before it is added: no fused
		// multiply-add on any GOAMD64 level, as in the assembly
		s.t.counts[0][e]++
		bin := &s.t.sums[e]
		bin[0] += float64(ua * ua)
		bin[1] += float64(d * ua)
		bin[2] += float64(d * d)
		bin[3] += float64(math.Abs(float64(a0) * ua))
	}
	s.u.MovedA += movedA
	s.u.MovedB += movedB
	s.u.UlpMovedA += ulpA
	s.u.UlpMovedB += ulpB
}

// bin returns the sums of bin e (0..254), with Exp left 0.
func (s *updateSums) bin(e int) UpdateBin {
	if s.t == nil {
		return UpdateBin{}
	}
	var n int64
	for j := range s.t.counts {
		n += s.t.counts[j][e]
	}
	r := &s.t.sums[e]
	return UpdateBin{N: n, UU: r[0], DU: r[1], DD: r[2], PU: r[3]}
}

// finish returns the Update of job j from its sums: the bins that hold
// elements, by exponent, and the worst elements with their indexes.
func (s *updateSums) finish(j UpdateJob) *Update {
	u := s.u
	for e := range skipBin {
		b := s.bin(e)
		if b.N == 0 {
			continue
		}
		b.Exp = NoGrad
		if e != 0 {
			b.Exp = e - binOffset
		}
		u.Bins = append(u.Bins, b)
	}
	slices.SortFunc(u.Bins, func(x, y UpdateBin) int { return x.Exp - y.Exp })
	for _, w := range s.worst.elems[:s.worst.n] {
		exp := NoGrad
		if w.e != 0 {
			exp = w.e - binOffset
		}
		u.Worst = append(u.Worst, UpdateElem{Index: j.CurA.Index(w.pos), Exp: exp, D: w.d})
	}
	return u
}

// worstElems keeps the WorstElems elements of largest |d| seen so far,
// largest first; an element replaces one only when strictly larger, so
// ties keep the earlier element.
type worstElems struct {
	n int
	// floor is the |d| an element must exceed to be kept: 0 until
	// WorstElems are kept, then the smallest kept |d| (add's callers test
	// it first, so that most elements cost one comparison).
	floor float64
	elems [WorstElems]struct {
		pos int64
		e   int
		d   float64
	}
}

func (w *worstElems) add(pos int64, e int, d float64) {
	a := math.Abs(d)
	if a == 0 || (w.n == WorstElems && a <= math.Abs(w.elems[w.n-1].d)) {
		return
	}
	i := min(w.n, WorstElems-1)
	for i > 0 && math.Abs(w.elems[i-1].d) < a {
		w.elems[i] = w.elems[i-1]
		i--
	}
	w.elems[i].pos, w.elems[i].e, w.elems[i].d = pos, e, d
	w.n = min(w.n+1, WorstElems)
	if w.n == WorstElems {
		w.floor = math.Abs(w.elems[w.n-1].d)
	}
}

var errShort = errors.New("fewer values than its shape holds")
