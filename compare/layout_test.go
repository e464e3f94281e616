package compare

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/x448/float16"

	"github.com/graphdiff/graphdiff/internal/npyfile"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// genArray is an array the tests of this file write: its descr, shape and
// storage order, and its elements in C order, little-endian.
type genArray struct {
	descr   string // little-endian ("<f4", "|V1")
	shape   []int
	fortran bool
	big     bool // stored big-endian
	forge   bool // written by npyfile.Forge even where npyio could
	c       []byte
}

func (a genArray) size() int { return npyfile.Size(a.descr) }

func (a genArray) len() int {
	n := 1
	for _, d := range a.shape {
		n *= d
	}
	return n
}

// storage returns the elements in storage order, little-endian.
func (a genArray) storage() []byte {
	if a.fortran {
		return npyfile.FortranOrder(a.shape, a.size(), a.c)
	}
	return a.c
}

// values returns the elements' values in storage order, by the reference
// decoder, two per complex element.
func (a genArray) values() []float64 {
	var out []float64
	s, es := a.storage(), a.size()
	for i := 0; i+es <= len(s); i += es {
		re, im := npyfile.Value(a.descr, s[i:i+es])
		out = append(out, re)
		if a.descr == "<c8" || a.descr == "<c16" {
			out = append(out, im)
		}
	}
	return out
}

// write writes a to path and opens it with opts.
func (a genArray) write(tb testing.TB, path string, opts loaders.Options) *loaders.Tensor {
	tb.Helper()
	data, descr := a.storage(), a.descr
	if a.big && a.size() > 1 {
		part := a.size()
		if descr == "<c8" || descr == "<c16" {
			part /= 2
		}
		data, descr = npyfile.Swap(data, part), ">"+descr[1:]
	}
	write := npyfile.Write
	if a.forge {
		write = npyfile.Forge
	}
	if err := write(path, npyfile.Array{Descr: descr, Shape: a.shape, Fortran: a.fortran, Data: data}); err != nil {
		tb.Fatal(err)
	}
	ts, errs, err := loaders.OpenFile(path, opts)
	if err != nil || len(errs) > 0 || len(ts) != 1 {
		tb.Fatalf("%s: %v %v", path, err, errs)
	}
	return ts[0]
}

// encodeFloat returns v in the float dtype descr, little-endian: rounded
// to nearest for float16, float32 and float64, the top bits of the
// float32 (float16) for bfloat16 (float8_e5m2).
func encodeFloat(descr string, v float64) []byte {
	switch descr {
	case "<f2":
		return binary.LittleEndian.AppendUint16(nil, float16.Fromfloat32(float32(v)).Bits())
	case "<V2":
		return binary.LittleEndian.AppendUint16(nil, uint16(math.Float32bits(float32(v))>>16))
	case "<f1":
		return []byte{byte(float16.Fromfloat32(float32(v)).Bits() >> 8)}
	case "<f4":
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v)))
	}
	return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))
}

// updateDescrs are the float dtypes a parameter is dumped in.
var updateDescrs = []string{"<f2", "<V2", "<f4", "<f8", "<f1"}

// TestUpdatesAgreeWithDirectSums measures parameters' updates (Updates)
// of every float dtype a parameter is dumped in (float16, bfloat16,
// float32, float64, float8_e5m2), with gradients of each float dtype or
// none, in every shape class (0-d, empty, 1 to 3 dimensions), C or
// Fortran order, little- or big-endian, written by either writer, with
// NaN, ±Inf, ±0 and subnormals among the values; and checks each Update
// against its documented sums computed here element by element in float64
// from the reference decoder's values: the counts, every bin's N, UU, DU,
// DD and PU bit for bit (both add in storage order), and the worst
// elements. The bin is the exponent of the gradient rounded to float32,
// NoGrad where that is 0, subnormal, infinite or NaN (update.go's
// updateSums): a float64 gradient beyond float32's range has none.
func TestUpdatesAgreeWithDirectSums(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	shapes := [][]int{{}, {0}, {0, 5}, {3, 0}, {1}, {9}, {3, 4}, {2, 3, 5}}
	var jobs []UpdateJob
	var want []*Update
	files := 0
	for _, param := range updateDescrs {
		for _, grad := range append([]string{""}, updateDescrs...) {
			for _, shape := range shapes {
				fortran, big, forge := rng.IntN(2) == 0, rng.IntN(2) == 0, rng.IntN(2) == 0
				arrays := updateArrays(rng, param, grad, shape)
				var ts [5]*loaders.Tensor
				for i := range arrays {
					arrays[i].fortran, arrays[i].big, arrays[i].forge = fortran, big, forge
					files++
					ts[i] = arrays[i].write(t, filepath.Join(dir, fmt.Sprintf("%d.npy", files)), loaders.Options{})
				}
				j := UpdateJob{PrevA: ts[0], CurA: ts[1], PrevB: ts[2], CurB: ts[3], Grad: ts[4]}
				jobs, want = append(jobs, j), append(want, directUpdate(j, arrays))
			}
		}
	}
	for i, o := range Updates(jobs, 2) {
		j := jobs[i]
		name := fmt.Sprintf("%s %v (fortran %v, big-endian %v), gradient %v", j.CurA.DType, j.CurA.Shape, j.CurA.FortranOrder,
			j.CurA.BigEndian, j.Grad != nil && j.Grad.DType != loaders.Invalid)
		if o.Err != nil {
			t.Errorf("%s: %v", name, o.Err)
			continue
		}
		checkUpdate(t, name, o.Update, want[i])
	}
}

// updateArrays makes the previous and current parameter of two runs and
// the reference run's gradient (descr grad, or none for ""): the
// reference's parameter takes steps of about 1e-3 of its size, the other
// run's its own steps (half the elements the same as the reference's),
// with specials among them.
func updateArrays(rng *rand.Rand, param, grad string, shape []int) []genArray {
	n := genArray{shape: shape}.len()
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 0x1p-149, 0x1p-1074, 1e300}
	value := func() float64 {
		if rng.IntN(10) == 0 {
			return specials[rng.IntN(len(specials))]
		}
		return rng.NormFloat64() * math.Ldexp(1, rng.IntN(20)-10)
	}
	var pa, ca, pb, cb, g []byte
	for range n {
		p := value()
		step := p * 1e-3 * rng.NormFloat64()
		other := step
		if rng.IntN(2) == 0 {
			other *= 1 + rng.NormFloat64()
		}
		pa, ca = append(pa, encodeFloat(param, p)...), append(ca, encodeFloat(param, p+step)...)
		pb, cb = append(pb, encodeFloat(param, p)...), append(cb, encodeFloat(param, p+other)...)
		if grad != "" {
			g = append(g, encodeFloat(grad, value())...)
		}
	}
	out := []genArray{{descr: param, c: pa}, {descr: param, c: ca}, {descr: param, c: pb}, {descr: param, c: cb}}
	for i := range out {
		out[i].shape = shape
	}
	if grad != "" {
		out = append(out, genArray{descr: grad, shape: shape, c: g})
	}
	return out
}

// directUpdate is the Update of j by its documentation (UpdateBin,
// Update), computed element by element from arrays' values.
func directUpdate(j UpdateJob, arrays []genArray) *Update {
	vals := make([][]float64, len(arrays))
	for i, a := range arrays {
		vals[i] = a.values()
	}
	pa, ca, pb, cb := vals[0], vals[1], vals[2], vals[3]
	u := &Update{Count: int64(len(ca))}
	bins := map[int]*UpdateBin{}
	type elem struct {
		pos int
		exp int
		d   float64
	}
	var diffs []elem
	for k := range ca {
		if ca[k] != pa[k] || math.IsNaN(ca[k]) {
			u.MovedA++
		}
		if cb[k] != pb[k] || math.IsNaN(cb[k]) {
			u.MovedB++
		}
		ua, ub := ca[k]-pa[k], cb[k]-pb[k]
		if math.IsNaN(ua) || math.IsInf(ua, 0) || math.IsNaN(ub) || math.IsInf(ub, 0) {
			continue
		}
		exp := NoGrad
		if len(vals) == 5 {
			g := float64(float32(vals[4][k]))
			if g != 0 && math.Abs(g) >= 0x1p-126 && !math.IsInf(g, 0) && !math.IsNaN(g) {
				_, exp = math.Frexp(g)
			}
		}
		b := bins[exp]
		if b == nil {
			b = &UpdateBin{Exp: exp}
			bins[exp] = b
		}
		d := ub - ua
		b.N++
		b.UU += ua * ua
		b.DU += d * ua
		b.DD += d * d
		b.PU += math.Abs(pa[k] * ua)
		if d != 0 {
			diffs = append(diffs, elem{k, exp, d})
		}
	}
	for _, b := range bins {
		u.Bins = append(u.Bins, *b)
	}
	slices.SortFunc(u.Bins, func(x, y UpdateBin) int { return x.Exp - y.Exp })
	sort.SliceStable(diffs, func(x, y int) bool { return math.Abs(diffs[x].d) > math.Abs(diffs[y].d) })
	for _, e := range diffs[:min(len(diffs), WorstElems)] {
		u.Worst = append(u.Worst, UpdateElem{Index: j.CurA.Index(int64(e.pos)), Exp: e.exp, D: e.d})
	}
	return u
}

// checkUpdate compares an Update with the one directUpdate computed: the
// same bits in every sum.
func checkUpdate(t *testing.T, name string, got, want *Update) {
	t.Helper()
	if got.Count != want.Count || got.MovedA != want.MovedA || got.MovedB != want.MovedB || len(got.Bins) != len(want.Bins) {
		t.Errorf("%s: count %d moved %d/%d, %d bins; want %d, %d/%d, %d bins", name, got.Count, got.MovedA, got.MovedB,
			len(got.Bins), want.Count, want.MovedA, want.MovedB, len(want.Bins))
		return
	}
	for i, b := range got.Bins {
		w := want.Bins[i]
		if b.Exp != w.Exp || b.N != w.N || !sameBits(b.UU, w.UU) || !sameBits(b.DU, w.DU) || !sameBits(b.DD, w.DD) || !sameBits(b.PU, w.PU) {
			t.Errorf("%s: bin %+v, want %+v", name, b, w)
		}
	}
	if len(got.Worst) != len(want.Worst) {
		t.Errorf("%s: %d worst elements, want %d", name, len(got.Worst), len(want.Worst))
		return
	}
	for i, e := range got.Worst {
		w := want.Worst[i]
		if !slices.Equal(e.Index, w.Index) || e.Exp != w.Exp || !sameBits(e.D, w.D) {
			t.Errorf("%s: worst %d %+v, want %+v", name, i, e, w)
		}
	}
}

func sameBits(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }

// layoutDescrs are the dtypes an .npy file holds, as numpy (ml_dtypes for
// bfloat16 and float8) spells them on a little-endian machine.
var layoutDescrs = []string{"|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8",
	"<f2", "<V2", "<f4", "<f8", "<c8", "<c16", "|V1", "<f1"}

// TestPairsOfLayoutsAgree compares an array of every dtype and shape
// class, as npyio writes it (C order, little-endian, often unaligned),
// with the same values stored each other way (big-endian, Fortran order,
// aligned by the forger, and held in memory by a deferred run's Resolve),
// through the engine's every path: whole, in chunks of 5, memory-mapped
// from one element on. Every pair agrees: no element beyond the
// tolerance, no special mismatch, no difference (the largest is 0, NaN
// where no pair is finite, as for P50), and the NaN and Inf
// counts of both sides those of the values written (numpy's isnan and
// isinf; complex: either part).
func TestPairsOfLayoutsAgree(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	opts := loaders.Options{V1: loaders.Float8E4M3FN}
	shapes := [][]int{{}, {0}, {0, 5}, {3, 0}, {7}, {2, 3}, {3, 1, 4}, {40, 31}}
	engines := []*engine{newEngine(), {chunkElems: 5, mapMinElems: 1, kernels: machineKernels()},
		{chunkElems: 97, mapMinElems: 1, kernels: goKernels}}
	files := 0
	for _, descr := range layoutDescrs {
		for _, shape := range shapes {
			a := genArray{descr: descr, shape: shape}
			for range a.len() {
				a.c = append(a.c, randomElem(rng, descr)...)
			}
			files++
			ref := a.write(t, filepath.Join(dir, fmt.Sprintf("%d.npy", files)), opts)
			nan, inf := specialCounts(a)
			var others []*loaders.Tensor
			for _, l := range []struct{ big, fortran, forge bool }{{false, false, false}, {true, false, true}, {false, true, true}, {true, true, false}} {
				b := a
				b.big, b.fortran, b.forge = l.big, l.fortran, l.forge
				files++
				sub := filepath.Join(dir, fmt.Sprint(files))
				if err := os.Mkdir(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				others = append(others, b.write(t, filepath.Join(sub, "t.npy"), opts), heldTensor(t, sub, opts))
			}
			dt := ref.DType
			for _, e := range engines {
				var jobs []Job
				for _, o := range others {
					jobs = append(jobs, Job{A: ref, B: o, Tolerance: tolerances.For(dt), DType: dt})
				}
				for i, o := range e.pairs(jobs, 2, nil) {
					name := fmt.Sprintf("%s %v against big-endian %v fortran %v held %v (chunks %d)", descr, shape,
						others[i].BigEndian, others[i].FortranOrder, i%2 == 1, e.chunkElems)
					m := o.Metrics
					switch {
					case o.Err != nil:
						t.Errorf("%s: %v", name, o.Err)
					case m.Count != int64(a.len()) || m.Mismatched != 0 || m.SpecialMismatches != 0 || !noDifference(m.MaxAbs.Value, a.len()-int(nan+inf)) ||
						m.MaxULP != 0 || m.RelL2 != 0 || m.NaNA != nan || m.NaNB != nan || m.InfA != inf || m.InfB != inf:
						t.Errorf("%s: count %d, mismatched %d, specials %d, max abs %g, max ULP %d, rel L2 %g, NaN %d/%d, Inf %d/%d; "+
							"want %d elements, no difference, NaN %d, Inf %d", name, m.Count, m.Mismatched, m.SpecialMismatches,
							m.MaxAbs.Value, m.MaxULP, m.RelL2, m.NaNA, m.NaNB, m.InfA, m.InfB, a.len(), nan, inf)
					}
				}
			}
		}
	}
}

// noDifference reports whether maxAbs, the largest difference of finite
// pairs, says there is none: 0, or NaN where no pair is finite.
func noDifference(maxAbs float64, finite int) bool {
	if finite == 0 {
		return math.IsNaN(maxAbs)
	}
	return maxAbs == 0
}

// randomElem returns a random element of descr: any bit pattern (bool: 0
// or 1), so that NaN, ±Inf, subnormals and ±0 of the narrow formats turn
// up; for the wide floats one in eight is a special value.
func randomElem(rng *rand.Rand, descr string) []byte {
	size := npyfile.Size(descr)
	switch descr {
	case "|b1":
		return []byte{byte(rng.IntN(2))}
	case "<f4", "<f8", "<c8", "<c16":
		part := 4
		if descr == "<f8" || descr == "<c16" {
			part = 8
		}
		var out []byte
		for range size / part {
			v := rng.NormFloat64() * math.Ldexp(1, rng.IntN(40)-20)
			if rng.IntN(8) == 0 {
				v = []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0x1p-149, 1e300}[rng.IntN(6)]
			}
			out = append(out, encodeFloat("<f"+fmt.Sprint(part), v)...)
		}
		return out
	}
	return binary.LittleEndian.AppendUint64(nil, rng.Uint64())[:size]
}

// specialCounts returns how many elements of a are NaN, and how many are
// infinite and not NaN (numpy's isnan and isinf: a complex element is NaN
// when either part is, infinite when either part is).
func specialCounts(a genArray) (nan, inf int64) {
	vals, parts := a.values(), 1
	if a.descr == "<c8" || a.descr == "<c16" {
		parts = 2
	}
	for i := 0; i+parts <= len(vals); i += parts {
		isNaN, isInf := false, false
		for _, v := range vals[i : i+parts] {
			isNaN = isNaN || math.IsNaN(v)
			isInf = isInf || math.IsInf(v, 0)
		}
		switch {
		case isNaN:
			nan++
		case isInf:
			inf++
		}
	}
	return nan, inf
}

// heldTensor loads the directory dir, which holds one .npy file, deferred
// and resolves it: its data is then held in memory.
func heldTensor(t *testing.T, dir string, opts loaders.Options) *loaders.Tensor {
	t.Helper()
	run, err := loaders.LoadDeferred(dir, opts)
	if err != nil || len(run.Entries) != 1 {
		t.Fatalf("%s: %v", dir, err)
	}
	if errs := loaders.Resolve(run.Entries); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if !run.Entries[0].Held() {
		t.Fatalf("%s: not held", dir)
	}
	return run.Entries[0].Tensor
}
