package compare

import (
	"encoding/binary"
	"io"
	"math"
	"path/filepath"
	"sort"
	"testing"

	"github.com/graphdiff/graphdiff/internal/npyfile"
	"github.com/graphdiff/graphdiff/loaders"
)

// values reads a whole tensor as float64.
func values(tb testing.TB, t *loaders.Tensor) []float64 {
	tb.Helper()
	r, err := t.Open()
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	out := make([]float64, t.Len())
	n, err := r.Read(out)
	if err != nil && err != io.EOF || int64(n) != t.Len() {
		tb.Fatalf("%s: read %d of %d: %v", t.Path, n, t.Len(), err)
	}
	return out
}

// TestUpdatesOnRealRuns measures every parameter's update between steps 1
// and 2 of a real bf16 AdamW run pair (safetensors, bfloat16 in place) and
// checks each bin against the same sums computed here, element by element
// in float64, with the bin read from math.Frexp of the gradient.
func TestUpdatesOnRealRuns(t *testing.T) {
	t.Parallel()
	dir := fixture("corpus", "gpt2", "gpt2_bf16_adamw_ok")
	a, b := loadRun(t, filepath.Join(dir, "eager")), loadRun(t, filepath.Join(dir, "graph"))
	find := func(r *loaders.Run, step int, name string) *loaders.Tensor {
		for _, e := range r.Entries {
			if e.Step == step && e.Name == name {
				return e.Tensor
			}
		}
		return nil
	}
	var jobs []UpdateJob
	for _, e := range a.Entries {
		if e.Step != 2 || e.Kind != loaders.KindParam {
			continue
		}
		jobs = append(jobs, UpdateJob{Grad: find(a, 2, "grads/"+loaders.Subject(e.Name)),
			PrevA: find(a, 1, e.Name), CurA: e.Tensor, PrevB: find(b, 1, e.Name), CurB: find(b, 2, e.Name)})
	}
	if len(jobs) < 5 {
		t.Fatalf("%d parameters", len(jobs))
	}
	for i, o := range Updates(jobs, 3) {
		j := jobs[i]
		if o.Err != nil {
			t.Fatalf("%s: %v", j.CurA.Path, o.Err)
		}
		pa, ca, pb, cb := values(t, j.PrevA), values(t, j.CurA), values(t, j.PrevB), values(t, j.CurB)
		var g []float64
		if j.Grad != nil {
			g = values(t, j.Grad)
		}
		want := map[int]*UpdateBin{}
		var worst []UpdateElem // every element with a difference, flat index in Index[0]
		var movedA, movedB int64
		for k := range ca {
			if ca[k] != pa[k] {
				movedA++
			}
			if cb[k] != pb[k] {
				movedB++
			}
			exp := NoGrad
			if g != nil && g[k] != 0 && math.Abs(g[k]) >= 0x1p-126 {
				_, exp = math.Frexp(g[k])
			}
			bin := want[exp]
			if bin == nil {
				bin = &UpdateBin{Exp: exp}
				want[exp] = bin
			}
			ua, ub := ca[k]-pa[k], cb[k]-pb[k]
			bin.N++
			bin.UU += ua * ua
			bin.DU += (ub - ua) * ua
			bin.DD += (ub - ua) * (ub - ua)
			bin.PU += math.Abs(pa[k] * ua)
			if ub != ua {
				worst = append(worst, UpdateElem{Index: []int{k}, Exp: exp, D: ub - ua})
			}
		}
		sort.SliceStable(worst, func(x, y int) bool { return math.Abs(worst[x].D) > math.Abs(worst[y].D) })
		worst = worst[:min(len(worst), WorstElems)]
		u := o.Update
		if u.Count != int64(len(ca)) || u.MovedA != movedA || u.MovedB != movedB || len(u.Bins) != len(want) {
			t.Fatalf("%s: count %d moved %d/%d, %d bins; want %d, %d/%d, %d bins", j.CurA.Path, u.Count, u.MovedA, u.MovedB,
				len(u.Bins), len(ca), movedA, movedB, len(want))
		}
		for _, got := range u.Bins {
			w := want[got.Exp]
			if w == nil || w.N != got.N || !near(got.UU, w.UU) || !near(got.DU, w.DU) || !near(got.DD, w.DD) || !near(got.PU, w.PU) {
				t.Errorf("%s bin %d: got %+v, want %+v", j.CurA.Path, got.Exp, got, w)
			}
		}
		if len(u.Worst) != len(worst) {
			t.Fatalf("%s: %d worst elements, want %d", j.CurA.Path, len(u.Worst), len(worst))
		}
		for i, w := range worst {
			got := u.Worst[i]
			if pos := j.CurA.CPosition(got.Index); pos != int64(w.Index[0]) || got.Exp != w.Exp || got.D != w.D {
				t.Errorf("%s worst %d: element %v (position %d), exp %d, d %g; want position %d, exp %d, d %g",
					j.CurA.Path, i, got.Index, pos, got.Exp, got.D, w.Index[0], w.Exp, w.D)
			}
		}
	}
}

// near: equal to 1e-12 relative (the sums add in a different order).
func near(x, y float64) bool { return math.Abs(x-y) <= 1e-12*math.Max(math.Abs(x), math.Abs(y)) }

// TestUpdatesRefusesMismatchedTensors: a gradient of another size is an
// error, not a silent misreading.
func TestUpdatesRefusesMismatchedTensors(t *testing.T) {
	t.Parallel()
	dir := fixture("corpus", "gpt2", "gpt2_bf16_adamw_ok")
	a := loadRun(t, filepath.Join(dir, "eager"))
	var w, bias *loaders.Tensor
	for _, e := range a.Entries {
		if e.Step == 1 && e.Kind == loaders.KindParam && len(e.Shape) == 2 && w == nil {
			w = e.Tensor
		}
		if e.Step == 1 && e.Kind == loaders.KindParam && len(e.Shape) == 1 && bias == nil {
			bias = e.Tensor
		}
	}
	out := Updates([]UpdateJob{{Grad: bias, PrevA: w, CurA: w, PrevB: w, CurB: w}}, 1)
	if out[0].Err == nil {
		t.Error("a gradient of another size was accepted")
	}
}

// TestUpdatesCountOneUnitMoves: elements moved in one run only are counted
// as rounding (UlpMoved) where the move is at most one unit in the last
// place at the job's epsilon, |u| ≤ ε·|p|, and not where it is more or
// where the other run moved too; epsilon 0 counts none.
func TestUpdatesCountOneUnitMoves(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, v ...float32) *loaders.Tensor {
		data := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
		}
		path := filepath.Join(dir, name+".npy")
		if err := npyfile.Write(path, npyfile.Array{Descr: "<f4", Shape: []int{len(v)}, Data: data}); err != nil {
			t.Fatal(err)
		}
		return openOne(t, path)
	}
	const eps = 0x1p-7 // bfloat16's: one unit at 1.0 is 2^-7
	prev := write("prev", 1, 1, 1, 1, 1)
	// element 0: B moves one unit, A not; 1: B moves two units; 2: A moves
	// one unit; 3: both move; 4: neither
	curA := write("cura", 1, 1, 1+eps, 1+eps, 1)
	curB := write("curb", 1+eps, 1+2*eps, 1, 1+eps, 1)
	for _, tc := range []struct {
		eps          float64
		ulpA, ulpB   int64
		movedA, movB int64
	}{{eps, 1, 1, 2, 3}, {0, 0, 0, 2, 3}} {
		out := Updates([]UpdateJob{{PrevA: prev, CurA: curA, PrevB: prev, CurB: curB, Epsilon: tc.eps}}, 1)
		u := out[0].Update
		if out[0].Err != nil || u.MovedA != tc.movedA || u.MovedB != tc.movB || u.UlpMovedA != tc.ulpA || u.UlpMovedB != tc.ulpB {
			t.Errorf("epsilon %g: %v, moved %d and %d, by one unit %d and %d; want %d, %d, %d, %d",
				tc.eps, out[0].Err, u.MovedA, u.MovedB, u.UlpMovedA, u.UlpMovedB, tc.movedA, tc.movB, tc.ulpA, tc.ulpB)
		}
	}
}
