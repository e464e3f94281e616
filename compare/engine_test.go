package compare

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// comparedPair is one pair of two runs with its outcome.
type comparedPair struct {
	loaders.Pair
	Outcome
}

// compareRuns compares every pair that both runs hold with the default
// settings, as check does, with the engine e on workers goroutines; heads
// is how many leading values of the first pair to keep.
func compareRuns(tb testing.TB, e *engine, a, b *loaders.Run, workers, heads int) []comparedPair {
	tb.Helper()
	var pairs []loaders.Pair
	var jobs []Job
	for _, p := range loaders.PairRuns(a, b) {
		if p.A == nil || p.B == nil {
			continue
		}
		s := tolerances.Resolver{}.Resolve(p.Name, p.Kind, p.A.DType, p.B.DType, loaders.Invalid)
		j := Job{A: p.A.Tensor, B: p.B.Tensor, Tolerance: s.Tolerance, DType: s.DType}
		if len(jobs) == 0 {
			j.Heads = heads
		}
		pairs, jobs = append(pairs, p), append(jobs, j)
	}
	out := make([]comparedPair, len(pairs))
	for i, o := range e.pairs(jobs, workers, nil) {
		out[i] = comparedPair{pairs[i], o}
	}
	return out
}

// loadRun loads a run, failing the test on error.
func loadRun(tb testing.TB, path string) *loaders.Run {
	tb.Helper()
	r, err := loaders.Load(path, loaders.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// loadFiles loads two single-tensor files and pairs them, as the CLI does.
func loadFiles(tb testing.TB, pathA, pathB string) (*loaders.Run, *loaders.Run) {
	tb.Helper()
	ra, rb := loadRun(tb, pathA), loadRun(tb, pathB)
	loaders.PairSingleFiles(ra, rb)
	return ra, rb
}

// sameMetrics reports whether two metrics are identical, NaN equal to NaN.
func sameMetrics(x, y *Metrics) bool { return fmt.Sprintf("%#v", *x) == fmt.Sprintf("%#v", *y) }

// TestJobsGiveIdenticalResults compares real runs split into many chunks
// with 1 and with 4 workers: every metric must be identical, bit for bit.
func TestJobsGiveIdenticalResults(t *testing.T) {
	t.Parallel()
	e := newEngine()
	e.chunkElems = 97 // split even the small tensors into chunks
	a, b := loadRun(t, fixture("runs", "mlp_fp32", "eager")), loadRun(t, fixture("runs", "mlp_fp32", "graph"))
	one, four := compareRuns(t, e, a, b, 1, 0), compareRuns(t, e, a, b, 4, 0)
	if len(one) != 61 || len(four) != 61 {
		t.Fatalf("%d and %d pairs", len(one), len(four))
	}
	for i := range one {
		x, y := one[i], four[i]
		if x.Metrics == nil || !sameMetrics(x.Metrics, y.Metrics) {
			t.Errorf("%s step %d: 1 worker %+v\n4 workers %+v", x.Name, x.Step, x.Metrics, y.Metrics)
		}
	}
}

// TestMixedPairInPlace compares the float32 file f4_big.npy with its
// bfloat16 rounding bf16_big.npy, both ways round, memory-mapped whole and
// in chunks of every size class, with 1 and 4 workers and each kernel set:
// metrics and kept leading values are those of the Go kernels reading the
// whole files, bit for bit. The pair is one that addMixed reads with the
// bfloat16 side in place.
func TestMixedPairInPlace(t *testing.T) {
	t.Parallel()
	f32, bf16 := fixture("npy", "f4_big.npy"), fixture("npy", "bf16_big.npy")
	compare := func(t *testing.T, e *engine, pathA, pathB string, jobs int) comparedPair {
		ra, rb := loadFiles(t, pathA, pathB)
		r := compareRuns(t, e, ra, rb, jobs, 5)
		if len(r) != 1 || r[0].Metrics == nil {
			t.Fatalf("not compared: %+v", r)
		}
		return r[0]
	}
	for _, sides := range [][2]string{{f32, bf16}, {bf16, f32}} {
		want := compare(t, &engine{chunkElems: chunkElems, mapMinElems: mapMinElems, kernels: goKernels}, sides[0], sides[1], 1)
		if want.Metrics.MaxAbs.Value == 0 || want.Metrics.Mismatched != 0 || len(want.HeadA) != 5 {
			t.Fatalf("the pair should differ within the tolerance, with 5 leading values kept: %+v", want)
		}
		eachKernelSet(t, func(t *testing.T, k kernels) {
			for _, sizes := range [][2]int64{{chunkElems, mapMinElems}, {70001, 4096}, {4096, 4096}} {
				e := &engine{chunkElems: sizes[0], mapMinElems: sizes[1], kernels: k}
				for _, jobs := range []int{1, 4} {
					got := compare(t, e, sides[0], sides[1], jobs)
					if !sameMetrics(got.Metrics, want.Metrics) || fmt.Sprint(got.HeadA, got.HeadB) != fmt.Sprint(want.HeadA, want.HeadB) {
						t.Errorf("%s vs %s, chunks of %d, %d jobs:\n%+v\nwant %+v", filepath.Base(sides[0]), filepath.Base(sides[1]), sizes[0], jobs, got.Metrics, want.Metrics)
					}
				}
			}
		})
		ta, tb := openOne(t, sides[0]), openOne(t, sides[1])
		mode := ulpBFloat16 | ulpRoundA
		if ta.DType == loaders.BFloat16 {
			mode = ulpBFloat16 | ulpRoundB
		}
		tk := chunkTask{job: &job{Job: Job{A: ta, B: tb}, engine: newEngine(), left: 1}, whole: true}
		sa, errA := openFloat32(new(float32Source), tk, 0, make([]float32, pairBufElems))
		sb, errB := openFloat32(new(float32Source), tk, 1, make([]float32, pairBufElems))
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if _, _, ok := mixedSides(sa, sb, mode); !ok {
			t.Errorf("%s vs %s: not read in place", ta.Name, tb.Name)
		}
		sa.close()
		sb.close()
		tk.job.taskDone()
	}
}

// openOne opens the single tensor of an .npy file.
func openOne(t *testing.T, path string) *loaders.Tensor {
	t.Helper()
	ts, _, err := loaders.OpenFile(path, loaders.Options{})
	if err != nil || len(ts) != 1 {
		t.Fatal(path, err)
	}
	return ts[0]
}
