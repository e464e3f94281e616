package compare

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// Job is one pair of tensors to compare: a, the reference, and b.
type Job struct {
	A, B *loaders.Tensor
	// Tolerance decides which elements are beyond it (tolerances.Beyond).
	Tolerance tolerances.Tolerance
	// DType is the comparison dtype, the coarser of the pair's (see
	// tolerances.Settings): it sets the unit of MaxULP and which float32
	// kernel reads the pair.
	DType loaders.DType
	// Heads is how many leading values of each side, in storage order, to
	// keep in the Outcome (0 keeps none). They are kept where the pair is
	// read as float32 from its first element in one piece of at least Heads
	// values; elsewhere the Outcome's heads stay nil and whoever wanted
	// them reads them from the files.
	Heads int
}

// Outcome is what comparing one Job gave: its metrics, or the error that
// stopped it, and the leading values the Job asked to keep.
type Outcome struct {
	// Metrics are nil when Err is set.
	Metrics *Metrics
	Err     error
	// HeadA and HeadB are the first Job.Heads values of each side, or nil
	// (see Job.Heads). They are kept only where the pair is read as
	// float32, whose values they hold exactly in half the memory of
	// float64: a run of many pairs keeps many heads.
	HeadA, HeadB []float32
}

// Pairs compares every job on up to workers goroutines (all CPUs when
// workers ≤ 0), splitting large pairs that can be read at any offset into
// chunks; the outcomes, in job order, do not depend on workers. progress,
// when set, is called with the bytes each finished piece of work read,
// from several goroutines.
func Pairs(jobs []Job, workers int, progress func(bytes int64)) []Outcome {
	return newEngine().pairs(jobs, workers, progress)
}

// engine is how Pairs, Updates and Summarize go about their work: the
// sizes from which they split tensors into chunks and map them, and the
// assembly kernels they run. newEngine makes the one they use; tests make
// their own, to split and map small tensors and to run every kernel set.
type engine struct {
	// chunkElems is how many elements one task compares or summarizes: a
	// tensor of more, readable at any offset, is split into chunks of
	// this many, spread across workers.
	chunkElems int64
	// mapMinElems is the smallest read that is memory-mapped.
	mapMinElems int64
	kernels     kernels
	// mapped, when set, is called with each tensor a source has just
	// mapped, before any of it is read: how a test changes the file
	// under a map. Nil outside tests.
	mapped func(*loaders.Tensor)
}

const (
	// chunkElems is how many elements one task of Pairs or Summarize
	// takes: a tensor of more, readable at any offset, is split across
	// workers.
	chunkElems = 1 << 22
	// mapMinElems is the smallest read that is memory-mapped (1 MiB of
	// float32).
	mapMinElems = 1 << 18
)

// newEngine returns the engine of Pairs, Updates and Summarize: chunks of
// chunkElems, maps from mapMinElems, the machine's kernels.
func newEngine() *engine {
	return &engine{chunkElems: chunkElems, mapMinElems: mapMinElems, kernels: machineKernels()}
}

// justMapped calls e.mapped, if set, with t.
func (e *engine) justMapped(t *loaders.Tensor) {
	if e.mapped != nil {
		e.mapped(t)
	}
}

// pairs is Pairs, run by e.
func (e *engine) pairs(jobs []Job, workers int, progress func(bytes int64)) []Outcome {
	out := make([]Outcome, len(jobs))
	js, all := make([]*job, len(jobs)), make([]job, len(jobs)) // one allocation for all jobs
	heads := 0
	for i := range jobs {
		heads += 2 * max(jobs[i].Heads, 0)
	}
	space := make([]float32, heads) // every job's kept values, one allocation
	for i := range jobs {
		all[i] = job{Job: jobs[i], engine: e, out: &out[i]}
		js[i] = &all[i]
		if h := max(jobs[i].Heads, 0); h > 0 {
			js[i].headSpace, space = space[:2*h:2*h], space[2*h:]
		}
	}
	e.runJobs(js, workers, progress)
	return out
}

// job is a Job being compared.
type job struct {
	Job
	engine *engine
	out    *Outcome

	mu    sync.Mutex
	parts []*acc
	hist  *errorHistogram // for pairs split into chunks
	err   error
	// left is how many of the job's tasks have not finished; the last one
	// closes the mappers.
	left int
	// headSpace is room for the values kept (Heads of each side).
	headSpace []float32

	// mappers are each side's file opened for mapping (A, B), opened by
	// the first task that maps and shared by the job's chunks, so that a
	// large file is opened once however many chunks read it.
	mapOnce sync.Once
	mappers [2]*loaders.Mapper
	mapErrs [2]error
}

// mapper returns side's Mapper (0 for A, 1 for B). The first call opens
// both sides' at once, so that data brought into the page cache as a
// Mapper opens (loaders.Tensor.NewMapper) is read from both files
// together.
func (j *job) mapper(side int) (*loaders.Mapper, error) {
	j.mapOnce.Do(func() {
		var wg sync.WaitGroup
		for i, t := range [2]*loaders.Tensor{j.A, j.B} {
			if t == nil || !t.Mappable() {
				j.mapErrs[i] = errors.New("not mappable")
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				j.mappers[i], j.mapErrs[i] = t.NewMapper()
			}()
		}
		wg.Wait()
	})
	return j.mappers[side], j.mapErrs[side]
}

// taskDone counts a finished task; the job's last closes its mappers.
// Called with j.mu held.
func (j *job) taskDone() {
	j.left--
	if j.left > 0 {
		return
	}
	for i, m := range j.mappers {
		if m != nil {
			_ = m.Close()
			j.mappers[i] = nil
		}
	}
}

type chunkTask struct {
	job          *job
	chunk        int
	first, count int64
	whole        bool
}

// smallReadersPerWorker is how many goroutines per worker compare pairs:
// pieces of at least engine.mapMinElems elements (mapped, bound by memory)
// are compared by at most workers at a time, while small tensors, whose
// reading (an open, a pread and a close each) waits on the file system
// more than on the processor, also use the other goroutines; two is where
// more stopped helping (bench/README.md).
const smallReadersPerWorker = 2

// runJobs compares every job, splitting large pairs that can be read at
// any offset into chunks of e.chunkElems: pieces of at least
// e.mapMinElems elements on at most workers goroutines at a time, smaller
// ones on up to smallReadersPerWorker × workers.
func (e *engine) runJobs(jobs []*job, workers int, progress func(int64)) {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	tasks := make([]chunkTask, 0, len(jobs)) // more only where pairs are chunked
	for _, j := range jobs {
		n := j.A.Len()
		if j.A.FortranOrder != j.B.FortranOrder || !j.A.RandomAccess() || !j.B.RandomAccess() || n <= e.chunkElems {
			j.left = 1
			tasks = append(tasks, chunkTask{job: j, whole: true})
			continue
		}
		chunks := int((n + e.chunkElems - 1) / e.chunkElems)
		j.parts = make([]*acc, chunks)
		j.left = chunks
		j.hist = &errorHistogram{}
		for c := range chunks {
			first := int64(c) * e.chunkElems
			tasks = append(tasks, chunkTask{job: j, chunk: c, first: first, count: min(e.chunkElems, n-first)})
		}
	}
	// workers slots for pieces that are mapped (memory-bound work); small
	// tensors, read with pread, go without one. Each goroutine takes the
	// next task by an atomic counter: handing thousands of small tasks
	// over a channel kept one of two processors idle half the time.
	slots := make(chan struct{}, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(smallReadersPerWorker*workers, max(len(tasks), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorker()
			defer workerPool.Put(w)
			for i := next.Add(1) - 1; i < int64(len(tasks)); i = next.Add(1) - 1 {
				tk := tasks[i]
				if _, count := tk.span(); count >= e.mapMinElems {
					slots <- struct{}{}
					w.run(tk)
					<-slots
				} else {
					w.run(tk)
				}
				if progress != nil {
					_, count := tk.span()
					progress(int64(tk.job.A.DType.Size()+tk.job.B.DType.Size()) * count)
				}
			}
		}()
	}
	wg.Wait()
	for _, j := range jobs {
		j.finish()
	}
}

// span returns the task's first element and element count.
func (tk chunkTask) span() (first, count int64) {
	if tk.whole {
		return 0, tk.job.A.Len()
	}
	return tk.first, tk.count
}

// pairBufElems is how many elements a worker decodes from each side at a
// time: small enough that a Reader of any dtype returns exactly this many.
const pairBufElems = 1 << 16

type worker struct {
	bufA, bufB     []float64
	buf32A, buf32B []float32
	hist           errorHistogram
	// whole is the accumulator of a whole-tensor task, made again for
	// each: its metrics are taken before the task ends, and 100,000 small
	// pairs would otherwise leave 40 MB of accumulators to collect.
	whole acc
	// srcA and srcB are the sources compare32 reads its two sides from,
	// made again for each task
	srcA, srcB float32Source
}

// newAcc returns an accumulator for task tk: the worker's own for a whole
// tensor (see worker.whole), a new one for a chunk, which the job merges
// once all its chunks are done.
func (w *worker) newAcc(tk chunkTask, tol tolerances.Tolerance, key ulpKey, complex, useULP bool, hist *errorHistogram) *acc {
	if tk.whole {
		w.whole.init(tk.job.engine.kernels, tol, key, complex, useULP, hist, tk.first)
		return &w.whole
	}
	return newAcc(tk.job.engine.kernels, tol, key, complex, useULP, hist, tk.first)
}

// workerPool keeps workers and their buffers (5 MiB each) from one runJobs
// call to the next: a run of thousands of steps calls it once per step.
var workerPool = sync.Pool{New: func() any {
	return &worker{bufA: make([]float64, 2*pairBufElems), bufB: make([]float64, 2*pairBufElems),
		buf32A: make([]float32, pairBufElems), buf32B: make([]float32, pairBufElems)}
}}

func newWorker() *worker { return workerPool.Get().(*worker) }

func (w *worker) run(tk chunkTask) {
	j := tk.job
	hist := &w.hist
	hist.reset()
	c, err := w.compare(tk, hist)
	j.mu.Lock()
	defer j.mu.Unlock()
	defer j.taskDone()
	if err != nil {
		if j.err == nil {
			j.err = err
		}
		return
	}
	if tk.whole { // c may be the worker's: its metrics are taken now
		m := c.metrics(hist, j.index())
		j.store(&m)
		return
	}
	j.parts[tk.chunk] = c
	j.hist.merge(hist)
}

// compare reads the task's elements from both sides in lock-step.
func (w *worker) compare(tk chunkTask, hist *errorHistogram) (*acc, error) {
	j := tk.job
	key := ulpKeyFor(j.DType)
	complex := j.A.DType.IsComplex()
	useULP := true
	if j.A.FortranOrder != j.B.FortranOrder {
		return compareInMemory(j, key, complex, hist)
	}
	if j.A.DType.Float32Exact() && j.B.DType.Float32Exact() {
		return w.compare32(tk, hist, key)
	}
	var ra, rb *loaders.Reader
	var err error
	if tk.whole {
		ra, err = j.A.Open()
	} else {
		ra, err = j.A.OpenRange(tk.first, tk.count)
	}
	if err != nil {
		return nil, err
	}
	defer ra.Close()
	if tk.whole {
		rb, err = j.B.Open()
	} else {
		rb, err = j.B.OpenRange(tk.first, tk.count)
	}
	if err != nil {
		return nil, err
	}
	defer rb.Close()
	c := w.newAcc(tk, j.Tolerance, key, complex, useULP, hist)
	if sides, ok := exactInts(j); ok {
		if err := addIntsOf(c, ra, rb, j, sides); err != nil {
			return nil, err
		}
		return c, nil
	}
	comps := j.A.DType.Components()
	bufA, bufB := w.bufA[:pairBufElems*comps], w.bufB[:pairBufElems*comps]
	for {
		na, errA := ra.Read(bufA)
		nb, errB := rb.Read(bufB)
		if errA != nil && !errors.Is(errA, io.EOF) {
			return nil, errA
		}
		if errB != nil && !errors.Is(errB, io.EOF) {
			return nil, errB
		}
		if na != nb {
			return nil, fmt.Errorf("%s: internal error: read %d and %d values", j.A.Path, na, nb)
		}
		if na == 0 {
			return c, nil
		}
		if complex {
			c.addComplex(bufA[:na], bufB[:nb])
		} else {
			c.addReal(bufA[:na], bufB[:nb])
		}
	}
}

// intSides says how each side of a pair of integers is held as 64 bits
// (acc.addInts): unsigned for uint64, two's complement for every other
// integer dtype and bool.
type intSides struct{ unsignedA, unsignedB bool }

// exactInts says how the pair j is compared as integers, exactly, and
// false when it is not: both sides hold integers (bool included), one of
// them 64-bit ones, which float64 cannot all hold. Two integer dtypes are
// compared as integers whatever they are (an int64 hash against a uint64
// one: float64 is coarser than either); narrower pairs are exact in
// float64.
func exactInts(j *job) (intSides, bool) {
	integer := func(d loaders.DType) bool { return d.IsInteger() || d == loaders.Bool }
	wide := func(d loaders.DType) bool { return d == loaders.Int64 || d == loaders.Uint64 }
	a, b := j.A.DType, j.B.DType
	if !integer(a) || !integer(b) || !wide(a) && !wide(b) {
		return intSides{}, false
	}
	return intSides{unsignedA: a == loaders.Uint64, unsignedB: b == loaders.Uint64}, true
}

// intReader returns how to read the next values of a tensor of integer
// dtype d as 64 bits (intSides): Reader.ReadBits64 for int64 and uint64;
// for narrower integers and bool, Reader.Read, exact in float64, then
// their two's complement.
func intReader(d loaders.DType) func(*loaders.Reader, []uint64) (int, error) {
	if d == loaders.Int64 || d == loaders.Uint64 {
		return (*loaders.Reader).ReadBits64
	}
	var vals []float64
	return func(r *loaders.Reader, dst []uint64) (int, error) {
		if len(vals) < len(dst) {
			vals = make([]float64, len(dst))
		}
		n, err := r.Read(vals[:len(dst)])
		for i, v := range vals[:n] {
			dst[i] = uint64(int64(v))
		}
		return n, err
	}
}

// intBufElems is how many integers of each side addIntsOf reads at a
// time.
const intBufElems = 1 << 12

// addIntsOf folds every element of the readers ra and rb, integers held
// as sides says, into c exactly (acc.addInts).
func addIntsOf(c *acc, ra, rb *loaders.Reader, j *job, sides intSides) error {
	var bufA, bufB [intBufElems]uint64
	readA, readB := intReader(j.A.DType), intReader(j.B.DType)
	for {
		na, errA := readA(ra, bufA[:])
		nb, errB := readB(rb, bufB[:])
		if errA != nil && !errors.Is(errA, io.EOF) {
			return errA
		}
		if errB != nil && !errors.Is(errB, io.EOF) {
			return errB
		}
		if na != nb {
			return fmt.Errorf("%s: internal error: read %d and %d values", j.A.Path, na, nb)
		}
		if na == 0 {
			return nil
		}
		c.addInts(bufA[:na], bufB[:nb], sides)
	}
}

// float32Source hands out a tensor's elements as float32, in pieces: from a
// memory map of the file where the data is float32 in place, else decoded
// through a Reader into a buffer.
type float32Source struct {
	t       *loaders.Tensor
	view    []float32 // float32 in place
	raw     []byte    // other dtypes in place, decoded into buf
	es      int
	release func()
	r       *loaders.Reader
	buf     []float32
	pos     int
	done    *job // a job of its own to finish on close (openWhole), or nil
}

// openFloat32 opens side's tensor (0 for A, 1 for B) of the task's job as
// dst, which it returns.
func openFloat32(dst *float32Source, tk chunkTask, side int, buf []float32) (*float32Source, error) {
	t := tk.job.A
	if side == 1 {
		t = tk.job.B
	}
	first, count := tk.span()
	// A file held in memory is read in place, like a map.
	if view, ok := t.HeldFloat32(first, count); ok {
		*dst = float32Source{view: view}
		return dst, nil
	}
	if raw, ok := t.HeldBytes(first, count); ok {
		*dst = float32Source{t: t, raw: raw, es: t.DType.Size(), buf: buf}
		return dst, nil
	}
	// Mapping costs two system calls and a fault per page: worth it for
	// large reads only; small tensors are read in one go.
	if t.Mappable() && count >= tk.job.engine.mapMinElems {
		if m, err := tk.job.mapper(side); err == nil {
			if t.Float32Native() {
				if view, release, err := m.Float32(first, count); err == nil {
					*dst = float32Source{view: view, release: release}
					tk.job.engine.justMapped(t)
					return dst, nil
				}
			}
			if raw, release, err := m.Bytes(first, count); err == nil {
				*dst = float32Source{t: t, raw: raw, es: t.DType.Size(), release: release, buf: buf}
				tk.job.engine.justMapped(t)
				return dst, nil
			}
		}
	}
	var r *loaders.Reader
	var err error
	if tk.whole {
		r, err = t.Open()
	} else {
		r, err = t.OpenRange(first, count)
	}
	if err != nil {
		return nil, err
	}
	*dst = float32Source{r: r, buf: buf}
	return dst, nil
}

// next returns the next n elements (fewer at the end).
func (s *float32Source) next(n int) ([]float32, error) {
	if s.raw != nil {
		raw := s.nextRaw(n)
		m := len(raw) / s.es
		s.t.DecodeFloat32(s.buf[:m], raw)
		return s.buf[:m], nil
	}
	if s.r == nil {
		m := min(n, len(s.view)-s.pos)
		out := s.view[s.pos : s.pos+m]
		s.pos += m
		return out, nil
	}
	k, err := s.r.ReadFloat32(s.buf[:n])
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return s.buf[:k], err
}

// nextRaw is next for a source of bytes in place, without decoding.
func (s *float32Source) nextRaw(n int) []byte {
	m := min(n, len(s.raw)/s.es-s.pos)
	out := s.raw[s.pos*s.es : (s.pos+m)*s.es]
	s.pos += m
	return out
}

// mixedSides returns the float32 side and the bfloat16 side of a pair that
// addMixed can compare with the bfloat16 side in place: one side float32
// in place, the other little-endian bfloat16 in place, and bfloat16 ULP
// distances. ok is false for any other pair.
func mixedSides(sa, sb *float32Source, mode ulpMode) (s32, s16 *float32Source, ok bool) {
	bf16 := func(s *float32Source) bool {
		return s.raw != nil && s.t.DType == loaders.BFloat16 && !s.t.BigEndian
	}
	switch {
	case mode == ulpBFloat16|ulpRoundA && sa.view != nil && bf16(sb):
		return sa, sb, true
	case mode == ulpBFloat16|ulpRoundB && bf16(sa) && sb.view != nil:
		return sb, sa, true
	}
	return nil, nil, false
}

// openWhole opens all of tensor t as a source of its own, which closes the
// file it maps when it is closed.
func (e *engine) openWhole(t *loaders.Tensor, buf []float32) (*float32Source, error) {
	j := &job{Job: Job{A: t}, engine: e, left: 1}
	s, err := openFloat32(new(float32Source), chunkTask{job: j, whole: true}, 0, buf)
	if err != nil {
		j.taskDone()
		return nil, err
	}
	s.done = j
	return s, nil
}

func (s *float32Source) close() {
	if s.release != nil {
		s.release()
	}
	if s.done != nil {
		s.done.taskDone()
	}
	if s.r != nil {
		s.r.Close()
	}
}

// compare32 compares a pair whose values are all float32 with the float32
// kernel, reading mapped files in place. A file truncated while mapped
// faults on access; the fault becomes an error naming the file.
func (w *worker) compare32(tk chunkTask, hist *errorHistogram, key ulpKey) (c *acc, err error) {
	j := tk.job
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if err != nil {
			c = nil
		}
	}()
	defer loaders.RecoverFault(&err, j.A, j.B)
	mode := ulpKeyFunc
	switch {
	case j.DType == loaders.Float32 && j.A.DType == loaders.Float32 && j.B.DType == loaders.Float32:
		mode = ulpFloat32
	case j.DType == loaders.BFloat16 && (j.A.DType == loaders.BFloat16 || j.A.DType == loaders.Float32) &&
		(j.B.DType == loaders.BFloat16 || j.B.DType == loaders.Float32):
		mode = ulpBFloat16 // bfloat16, or float32 rounded to it
		if j.A.DType == loaders.Float32 {
			mode |= ulpRoundA
		}
		if j.B.DType == loaders.Float32 {
			mode |= ulpRoundB
		}
	}
	if c, ok, err := compareMapped16(tk, hist, key, mode); ok {
		return c, err
	}
	sa, err := openFloat32(&w.srcA, tk, 0, w.buf32A)
	if err != nil {
		return nil, err
	}
	defer sa.close()
	sb, err := openFloat32(&w.srcB, tk, 1, w.buf32B)
	if err != nil {
		return nil, err
	}
	defer sb.close()
	c = w.newAcc(tk, j.Tolerance, key, false, true, hist)
	if s32, s16, ok := mixedSides(sa, sb, mode); ok {
		w.compareMixed(tk, c, s32, s16, mode)
		return c, nil
	}
	for {
		va, errA := sa.next(pairBufElems)
		if errA != nil {
			return nil, errA
		}
		vb, errB := sb.next(len(va))
		if errB != nil {
			return nil, errB
		}
		if len(va) != len(vb) {
			return nil, fmt.Errorf("%s: internal error: read %d and %d values", j.A.Path, len(va), len(vb))
		}
		if len(va) == 0 {
			return c, nil
		}
		if c.n == 0 && tk.first == 0 {
			j.keepHeads(va, vb)
		}
		c.addF32(va, vb, mode)
	}
}

// compareMixed folds a pair that mixedSides accepted with addMixed, the
// bfloat16 side read in place.
func (w *worker) compareMixed(tk chunkTask, c *acc, s32, s16 *float32Source, mode ulpMode) {
	j := tk.job
	for {
		v, _ := s32.next(pairBufElems) // in place: no error
		if len(v) == 0 {
			return
		}
		raw := s16.nextRaw(len(v))
		if c.n == 0 && tk.first == 0 {
			h := w.buf32B[:len(v)]
			s16.t.DecodeFloat32(h, raw)
			j.keepHeads(mode.mixedSides(v, h))
		}
		c.addMixed(v, raw, s16.t, mode, w.buf32B)
	}
}

// keepHeads keeps the pair's leading values as the job asks (Job.Heads),
// given the first piece of each side.
func (j *job) keepHeads(va, vb []float32) {
	if j.Heads == 0 || int64(len(va)) < min(int64(j.Heads), j.A.Len()) {
		return
	}
	n := min(j.Heads, len(va))
	j.out.HeadA = append(j.headSpace[:0:n], va[:n]...)
	j.out.HeadB = append(j.headSpace[n:n:2*n], vb[:n]...)
}

// compareMapped16 compares a pair of large bfloat16 or float16 tensors of
// one dtype, little-endian in place in their files, with add16 over memory
// maps. ok is false when the pair is not such a pair or cannot be mapped;
// the caller then decodes through float32.
func compareMapped16(tk chunkTask, hist *errorHistogram, key ulpKey, mode ulpMode) (c *acc, ok bool, err error) {
	j := tk.job
	a, b := j.A, j.B
	first, count := tk.span()
	if a.DType != b.DType || (a.DType != loaders.BFloat16 && a.DType != loaders.Float16) ||
		a.BigEndian || b.BigEndian || !a.Mappable() || !b.Mappable() || count < j.engine.mapMinElems {
		return nil, false, nil
	}
	ma, err := j.mapper(0)
	if err != nil {
		return nil, false, nil
	}
	mb, err := j.mapper(1)
	if err != nil {
		return nil, false, nil
	}
	ra, releaseA, err := ma.Bytes(first, count)
	if err != nil {
		return nil, false, nil
	}
	defer releaseA()
	rb, releaseB, err := mb.Bytes(first, count)
	if err != nil {
		return nil, false, nil
	}
	defer releaseB()
	c = newAcc(j.engine.kernels, j.Tolerance, key, false, true, hist, first)
	const piece = 2 * pairBufElems // bytes per call: the progress granularity of the other paths
	for off := 0; off < len(ra); off += piece {
		end := min(off+piece, len(ra))
		c.add16(ra[off:end], rb[off:end], a, mode) // b: same dtype and byte order
	}
	return c, true, nil
}

// compareInMemory handles a pair stored in different orders (one C, one
// Fortran): both are read whole into memory in C order. This is the one
// case whose memory grows with the tensor. Integers are compared exactly
// (exactInts), as in storage order.
func compareInMemory(j *job, key ulpKey, complex bool, hist *errorHistogram) (*acc, error) {
	c := newAcc(j.engine.kernels, j.Tolerance, key, complex, true, hist, 0)
	if sides, ok := exactInts(j); ok {
		ia, err := readC(j.A, 1, intReader(j.A.DType))
		if err != nil {
			return nil, err
		}
		ib, err := readC(j.B, 1, intReader(j.B.DType))
		if err != nil {
			return nil, err
		}
		c.addInts(ia, ib, sides)
		return c, nil
	}
	comps := j.A.DType.Components()
	va, err := readC(j.A, comps, (*loaders.Reader).Read)
	if err != nil {
		return nil, err
	}
	vb, err := readC(j.B, comps, (*loaders.Reader).Read)
	if err != nil {
		return nil, err
	}
	if complex {
		c.addComplex(va, vb)
	} else {
		c.addReal(va, vb)
	}
	return c, nil
}

// readC reads a whole tensor into memory in C order through read
// (Reader.Read, or intReader's), comps values an element.
func readC[T any](t *loaders.Tensor, comps int, read func(*loaders.Reader, []T) (int, error)) ([]T, error) {
	r, err := t.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := make([]T, t.Len()*int64(comps))
	buf := make([]T, pairBufElems*comps)
	var pos int64
	for {
		n, err := read(r, buf)
		for i := 0; i < n; i += comps {
			c := t.CPosition(t.Index(pos))
			copy(out[c*int64(comps):], buf[i:i+comps])
			pos++
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// index maps a storage position of the compared stream to a C-order index.
func (j *job) index() func(int64) []int {
	if j.A.FortranOrder != j.B.FortranOrder {
		c := &loaders.Tensor{Shape: j.A.Shape} // compared in C order
		return c.Index
	}
	return j.A.Index
}

func (j *job) store(m *Metrics) { j.out.Metrics = m }

// finish merges a chunked pair's parts in order, or records its error.
func (j *job) finish() {
	if j.err != nil {
		j.out.Err = j.err
		return
	}
	if j.hist == nil {
		return // a whole-tensor task stored its metrics already
	}
	total := j.parts[0]
	for _, p := range j.parts[1:] {
		total.merge(p)
	}
	m := total.metrics(j.hist, j.index())
	j.store(&m)
}
