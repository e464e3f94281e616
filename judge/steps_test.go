package judge

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// stepPair is a compared pair of step 3 with the norms the rules read: n
// elements, ‖a‖ = normA and ‖a−b‖ = normDiff.
func stepPair(name string, kind loaders.Kind, n int64, normA, normDiff float64) Pair {
	rel := 0.0
	if normA > 0 {
		rel = normDiff / normA
	}
	return Pair{Name: name, Step: 3, Kind: kind, A: f32(), B: f32(), Settings: settings(3e-4, 0.1),
		Metrics: &compare.Metrics{Count: n, NormA: normA, NormDiff: normDiff, RelL2: rel}}
}

// update is an Update of n elements whose gradients all sit in bin exp,
// with reference updates u (each element) and compared updates (1+beta)·u.
func update(n int64, exp int, u, beta float64) *compare.Update {
	fn := float64(n)
	return &compare.Update{Count: n, MovedA: n, MovedB: n,
		Bins: []compare.UpdateBin{{Exp: exp, N: n, UU: fn * u * u, DU: fn * beta * u * u, DD: fn * beta * beta * u * u}}}
}

var testRules = tolerances.RunRules{Grad: 10, GradGrowth: 5, Update: 20, Loss: 2, Output: 8}

// ctx is a float32 model's first step under testRules: ε = 2^-10 (TF32).
func ctx() Context {
	return NewContext(tolerances.NewPrecision(loaders.Invalid, loaders.Float32), testRules)
}

// TestStepGradients: a gradient fails when its difference passes Grad·ε
// of max(its own RMS, the step's scale), and the drift of the steps before
// raises the limit.
func TestStepGradients(t *testing.T) {
	eps := 0x1p-10
	// two gradients of 100 elements: RMS 1 and 0.01, so S ≈ 0.707
	big := stepPair("grads/w", loaders.KindGrad, 100, 10, 0)
	small := func(diffRMS float64) Pair {
		return stepPair("grads/b", loaders.KindGrad, 100, 0.1, diffRMS*10)
	}
	S := math.Sqrt((100 + 0.01) / 200)
	under, over := small(0.99*10*eps*S), small(1.01*10*eps*S)

	f, d := Step([]Pair{big, under}, ctx())
	if d[1].Status != StatusMatch || len(f.Reasons) != 0 {
		t.Errorf("under the limit: %s %v", d[1].Status, f.Reasons)
	}
	if math.Abs(f.GradScale-S) > 1e-12 || f.WorstGrad != "grads/b" {
		t.Errorf("scale %g (want %g), worst %s", f.GradScale, S, f.WorstGrad)
	}
	f, d = Step([]Pair{big, over}, ctx())
	if d[1].Status != StatusMismatch || !strings.Contains(d[1].Reasons[0], "gradient difference") || len(f.Reasons) != 1 {
		t.Errorf("over the limit: %s %v / %v", d[1].Status, d[1].Reasons, f.Reasons)
	}
	// the same difference after steps that drifted to a third of it passes
	c := ctx()
	c.PriorDrift = f.WorstGradRatio / 3
	if _, d = Step([]Pair{big, over}, c); d[1].Status != StatusMatch {
		t.Errorf("after drift: %s %v", d[1].Status, d[1].Reasons)
	}
	// a failed step does not add to the drift
	if n := ctx().Next(f); n.PriorDrift != 0 {
		t.Errorf("a failed step raised the prior drift to %g", n.PriorDrift)
	}
}

// TestStepUpdates: the graph's updates scaled by 1+β fail the step when |β|
// passes the limit, and the parameter carrying it is blamed; a parameter
// that only one run moved fails.
func TestStepUpdates(t *testing.T) {
	c := ctx()
	limit := testRules.Update * adamEpsilon // gradients equal (R = 0), parameters of float32 far above their update
	grad := stepPair("grads/w", loaders.KindGrad, 100, 1, 0)
	param := func(beta float64) Pair {
		p := stepPair("params/w", loaders.KindParam, 100, 10, 0.01)
		p.Update = update(100, -2, 1e-3, beta)
		return p
	}
	ok, bad := param(0.9*limit), param(1.1*limit)
	f, d := Step([]Pair{grad, ok}, c)
	if d[1].Status != StatusMatch || math.Abs(f.UpdateRatio-0.9*limit) > 1e-12 || f.UpdateElems != 100 {
		t.Errorf("inside: %s, β = %g, %d elements", d[1].Status, f.UpdateRatio, f.UpdateElems)
	}
	f, d = Step([]Pair{grad, bad}, c)
	if d[1].Status != StatusMismatch || len(f.Reasons) != 1 || !strings.Contains(f.Reasons[0], "update ratio") {
		t.Errorf("outside: %s, reasons %v", d[1].Status, f.Reasons)
	}
	// the same ratio with gradients that differ by 10% is what they explain
	noisy := stepPair("grads/w", loaders.KindGrad, 100, 1, 0.1)
	if _, d = Step([]Pair{noisy, bad}, c); d[1].Status != StatusMatch {
		t.Errorf("explained by the gradients: %s %v", d[1].Status, d[1].Reasons)
	}
	// bf16 parameters 50 times their update: storing p + u rounds the
	// update by up to ε_p·|p|/|u| = 2^-7·50 = 0.39, which explains the
	// same ratio
	bf := NewContext(tolerances.NewPrecision(loaders.Invalid, loaders.BFloat16), testRules)
	stored := param(1.1 * limit)
	for i := range stored.Update.Bins {
		stored.Update.Bins[i].PU = 50 * stored.Update.Bins[i].UU
	}
	f, d = Step([]Pair{grad, stored}, bf)
	if d[1].Status != StatusMatch || math.Abs(f.Resolution-50*0x1p-7) > 1e-12 {
		t.Errorf("storage rounding: %s, resolution %g", d[1].Status, f.Resolution)
	}
	// only the compared run moved it
	frozen := param(0)
	frozen.Update.MovedA = 0
	if _, d = Step([]Pair{grad, frozen}, c); d[1].Status != StatusMismatch ||
		!strings.Contains(d[1].Reasons[0], "left unchanged by the reference run") {
		t.Errorf("moved by one run only: %s %v", d[1].Status, d[1].Reasons)
	}
}

// TestStepDrift: a parameter far beyond its dtype's limit whose difference
// sits in elements with rounding-level gradients passes, and is listed.
func TestStepDrift(t *testing.T) {
	c := ctx()
	grad := stepPair("grads/qkv.bias", loaders.KindGrad, 96, 1, 0)
	p := stepPair("params/qkv.bias", loaders.KindParam, 96, 1, 0.2)
	// 64 healthy elements take the same step; 32 with gradients near 2^-40
	// take steps of random sign
	p.Update = &compare.Update{Count: 96, MovedA: 96, MovedB: 96, Bins: []compare.UpdateBin{
		{Exp: -40, N: 32, UU: 32e-6, DU: 0, DD: 4 * 32e-6},
		{Exp: 0, N: 64, UU: 64e-6},
	}, Worst: []compare.UpdateElem{{Index: []int{40}, Exp: -40, D: 4e-3}, {Index: []int{3}, Exp: 0, D: 1e-3}, {Index: []int{41}, Exp: -40, D: -1e-3}}}
	f, d := Step([]Pair{grad, p}, c)
	if d[1].Status != StatusMatch || len(f.Drift) != 1 {
		t.Fatalf("%s, drift %+v", d[1].Status, f.Drift)
	}
	if dr := f.Drift[0]; dr.NoisyElems != 32 || dr.NoisyShare != 1 || dr.Count != 96 {
		t.Errorf("drift %+v", dr)
	}
	// the elements it names are the noisy ones, worst first
	if e := f.Drift[0].Elements; len(e) != 2 || e[0].Index[0] != 40 || e[1].Index[0] != 41 {
		t.Errorf("drift elements %+v, want [40] and [41]", e)
	}
}

// TestStepLeavesToTensor: inputs, parameters without a previous step and
// pairs whose max_rel_l2 the user set are not judged by the run rules.
func TestStepLeavesToTensor(t *testing.T) {
	in := stepPair("inputs/x", loaders.KindInput, 10, 1, 0.5)
	first := stepPair("params/w", loaders.KindParam, 10, 1, 0.5)
	loss := stepPair("loss", loaders.KindLoss, 1, 1, 0.5)
	loss.Settings.PerTensor = true
	f, d := Step([]Pair{in, first, loss}, ctx())
	for i, p := range []Pair{in, first, loss} {
		if want := Tensor(&p); fmt.Sprint(d[i]) != fmt.Sprint(want) {
			t.Errorf("%s: %+v, judged alone %+v", p.Name, d[i], want)
		}
	}
	if d[0].Status != StatusMismatch || len(f.Reasons) != 0 {
		t.Errorf("the input failing alone made the step's reasons %v (status %s)", f.Reasons, d[0].Status)
	}
}

// TestStepLossAndOutput: Loss·ε and Output·ε, on each side.
func TestStepLossAndOutput(t *testing.T) {
	eps := 0x1p-10
	for _, tc := range []struct {
		kind  loaders.Kind
		k     float64
		fails bool
	}{{loaders.KindLoss, 0.99 * testRules.Loss, false}, {loaders.KindLoss, 1.01 * testRules.Loss, true},
		{loaders.KindOutput, 0.99 * testRules.Output, false}, {loaders.KindOutput, 1.01 * testRules.Output, true}} {
		p := stepPair("x", tc.kind, 1, 1, tc.k*eps)
		_, d := Step([]Pair{p}, ctx())
		if (d[0].Status == StatusMismatch) != tc.fails {
			t.Errorf("%s at %g·ε: %s", tc.kind, tc.k, d[0].Status)
		}
		// after passing steps that drifted to a fifth of it, it passes
		c := ctx()
		c.PriorLoss, c.PriorOutput = tc.k*eps/5, tc.k*eps/5
		if _, d = Step([]Pair{p}, c); d[0].Status != StatusMatch {
			t.Errorf("%s at %g·ε after drift: %s %v", tc.kind, tc.k, d[0].Status, d[0].Reasons)
		}
	}
}

func TestHealthyFloor(t *testing.T) {
	for _, tc := range []struct {
		x, floor float64
		exp      int
	}{{0.75, 1, 1}, {1, 1, 1}, {0x1p-10, 0x1p-10, -9}, {0x1.8p-10, 0x1p-9, -8}} {
		f, e := healthyFloor(tc.x)
		if f != tc.floor || e != tc.exp {
			t.Errorf("healthyFloor(%g) = %g, %d; want %g, %d", tc.x, f, e, tc.floor, tc.exp)
		}
		// an element of exactly the floor is in bin e: |g| in [2^(e-1), 2^e)
		if _, be := math.Frexp(f); be != e {
			t.Errorf("floor %g is in bin %d, not %d", f, be, e)
		}
	}
}

// TestStepUserThresholdGradient: a gradient whose max_rel_l2 the user set
// is judged alone, but still counts towards the step's gradient scale.
func TestStepUserThresholdGradient(t *testing.T) {
	g := stepPair("grads/w", loaders.KindGrad, 100, 10, 5)
	g.Settings.PerTensor = true
	f, d := Step([]Pair{g}, ctx())
	if want := Tensor(&g); fmt.Sprint(d[0]) != fmt.Sprint(want) || f.GradScale != 1 {
		t.Errorf("judged %+v, alone %+v, scale %g", d[0], want, f.GradScale)
	}
}

// TestStepBaselineServes: a loss of relative error 0.05 (beyond the
// step's limit) passes on a baseline within NoiseFactor of it and fails
// on one farther than that, or NaN or infinite; the step says so only
// where the baseline would have changed a decision.
func TestStepBaselineServes(t *testing.T) {
	loss := func(noise float64) Pair {
		p := stepPair("loss", loaders.KindLoss, 1, 1, 0.05)
		p.Noise = &compare.Metrics{Count: 1, RelL2: noise}
		return p
	}
	for _, tc := range []struct {
		noise  float64
		status Status
		unused bool
	}{
		{0.02, StatusMatch, false},               // 3×0.02 ≥ 0.05: the noise excuses it
		{0.05 * NoiseFactor, StatusMatch, false}, // as far as the rule allows
		{0.05 * NoiseFactor * 1.01, StatusMismatch, true},
		{3e38, StatusMismatch, true},
		{math.Inf(1), StatusMismatch, true},
		{math.NaN(), StatusMismatch, true},
		{0.01, StatusMismatch, false}, // serves, but 3×0.01 < 0.05
	} {
		p := loss(tc.noise)
		f, d := Step([]Pair{p}, ctx())
		if d[0].Status != tc.status || f.BaselineUnused != tc.unused || f.BaselinePairs != 1 {
			t.Errorf("noise %g: %s, unused %v, %d pairs; want %s, unused %v", tc.noise, d[0].Status, f.BaselineUnused, f.BaselinePairs, tc.status, tc.unused)
		}
		if p.Noise == nil {
			t.Errorf("noise %g: the pair lost its noise", tc.noise)
		}
	}
	// far, but the loss passes without it: nothing to say
	p := stepPair("loss", loaders.KindLoss, 1, 1, 0)
	p.Noise = &compare.Metrics{Count: 1, RelL2: 1}
	if f, d := Step([]Pair{p}, ctx()); d[0].Status != StatusMatch || f.BaselineUnused {
		t.Errorf("a bit-exact loss with a far baseline: %s, unused %v", d[0].Status, f.BaselineUnused)
	}
}

// TestStepUnmeasuredParameters: at a step with no update to measure (the
// first dumped step), a parameter beyond its limit passes as drift when
// every gradient of the step agrees and its own was dumped, and keeps its
// failure when a gradient differs or its own is missing.
func TestStepUnmeasuredParameters(t *testing.T) {
	param := stepPair("params/w", loaders.KindParam, 100, 1, 0.01) // rel 0.01, beyond 3e-4
	same := stepPair("grads/w", loaders.KindGrad, 100, 1, 0)
	other := stepPair("grads/v", loaders.KindGrad, 100, 1, 0)
	off := stepPair("grads/v", loaders.KindGrad, 100, 1, 0.5)
	for _, tc := range []struct {
		what   string
		pairs  []Pair
		status Status
	}{
		{"gradients agree", []Pair{same, other, param}, StatusMatch},
		{"a gradient differs", []Pair{same, off, param}, StatusMismatch},
		{"its gradient not dumped", []Pair{other, param}, StatusMismatch},
		{"no gradient at all", []Pair{param}, StatusMismatch},
	} {
		f, d := Step(tc.pairs, ctx())
		last := d[len(d)-1]
		if last.Status != tc.status {
			t.Errorf("%s: %s %v, want %s", tc.what, last.Status, last.Reasons, tc.status)
		}
		drift := len(f.Drift) == 1 && f.Drift[0].Unmeasured && f.Drift[0].Name == "params/w"
		if drift != (tc.status == StatusMatch) {
			t.Errorf("%s: drift %+v", tc.what, f.Drift)
		}
	}
}

// TestStepOneUnitMoves: a parameter the reference run left unchanged and
// the compared run moved fails only where some element moved by more than
// one unit in the last place (compare.Update.UlpMovedB).
func TestStepOneUnitMoves(t *testing.T) {
	grad := stepPair("grads/w", loaders.KindGrad, 4, 1, 0)
	for _, tc := range []struct {
		ulp    int64
		status Status
	}{{4, StatusMatch}, {3, StatusMismatch}} {
		param := stepPair("params/w", loaders.KindParam, 4, 1, 0)
		param.Update = &compare.Update{Count: 4, MovedA: 0, MovedB: 4, UlpMovedB: tc.ulp}
		_, d := Step([]Pair{grad, param}, ctx())
		if d[1].Status != tc.status {
			t.Errorf("%d of 4 moves by one unit: %s %v, want %s", tc.ulp, d[1].Status, d[1].Reasons, tc.status)
		}
	}
}

// TestStepRecordsItsMeasure: each pair a step judges carries the measure
// its rule compared and that rule's limit, so that the ratio the reports
// show is the verdict's: a gradient its RMS ratio against the step's
// limit, a loss its relative L2 error against the loss limit, a parameter
// far beyond its dtype's max_rel_l2 the update ratio it passes or fails
// by, a parameter without an update the step's gradients that pass it,
// and one that only one run moved the elements it moved.
func TestStepRecordsItsMeasure(t *testing.T) {
	eps := 0x1p-10
	limit := testRules.Update * adamEpsilon
	grad := stepPair("grads/w", loaders.KindGrad, 100, 1, 0)
	param := func(beta float64) Pair {
		p := stepPair("params/w", loaders.KindParam, 100, 10, 0.1) // rel 0.01, beyond 3e-4
		p.Update = update(100, -2, 1e-3, beta)
		return p
	}
	near := stepPair("grads/v", loaders.KindGrad, 100, 1, 0.5*testRules.Grad*eps) // half its limit
	moved := stepPair("params/w", loaders.KindParam, 4, 1, 0)
	moved.Update = &compare.Update{Count: 4, MovedA: 0, MovedB: 4, UlpMovedB: 1}
	for _, tc := range []struct {
		what  string
		pairs []Pair
		rule  Rule
		ratio func(f StepFacts) float64
	}{
		{"a gradient over its limit", []Pair{grad, stepPair("grads/b", loaders.KindGrad, 100, 1, 1.5*testRules.Grad*eps*10)},
			RuleGradRatio, func(f StepFacts) float64 { return f.WorstGradRatio / f.GradLimit }},
		{"a loss under its limit", []Pair{stepPair("loss", loaders.KindLoss, 1, 1, 0.5*testRules.Loss*eps)},
			RuleRelL2, func(f StepFacts) float64 { return f.LossRel / f.LossLimit }},
		{"a parameter the step's update ratio passes", []Pair{grad, param(0.9 * limit)},
			RuleUpdateRatio, func(f StepFacts) float64 { return math.Abs(f.UpdateRatio) / f.UpdateLimit }},
		{"a parameter the update ratio fails", []Pair{grad, param(1.1 * limit)},
			RuleUpdateRatio, func(f StepFacts) float64 { return math.Abs(f.UpdateRatio) / f.UpdateLimit }},
		{"a parameter without an update, gradients agreeing", []Pair{grad, near, stepPair("params/w", loaders.KindParam, 100, 1, 0.01)},
			RuleStepGradients, func(f StepFacts) float64 { return f.WorstGradRatio / f.GradLimit }},
		{"a parameter only one run moved", []Pair{grad, moved},
			RuleMovedOneRun, func(StepFacts) float64 { return 4 }},
	} {
		t.Run(tc.what, func(t *testing.T) {
			f, d := Step(tc.pairs, ctx())
			last := d[len(d)-1]
			want := tc.ratio(f)
			if r := last.Ratio(); last.Rule != tc.rule || math.Abs(r-want) > 1e-9*want {
				t.Errorf("%s: %s %g of %g (%g of it), want %s at %g of its limit", last.Status, last.Rule, last.Measure, last.Limit, r, tc.rule, want)
			}
			if (last.Status == StatusMatch) != (last.Ratio() < 1) {
				t.Errorf("%s at %g of its limit", last.Status, last.Ratio())
			}
		})
	}
}

// TestRAdamRectification: the capturable RAdam's update departs from the
// eager one's by what its float32 rectification predicts (radamRect), and
// a step at optimizer step t whose gradients agree passes with that
// departure; the same departure of the other sign (a learning rate held
// higher) or twice as large fails, as it does before rectification starts
// or beside a saved optimizer state that is no RAdam's.
// The predictions are held to what testdata/gen/optim_rounding.py measured
// on PyTorch 2.11 (optim_rounding.txt, its RAdam column): within pred ± e,
// plus the Adam term of the update limit under the calibrated rules.
func TestRAdamRectification(t *testing.T) {
	measured := readRounding(t, "RAdam/capturable")
	if len(measured) < 20 {
		t.Fatalf("%d RAdam rows in optim_rounding.txt", len(measured))
	}
	adam := tolerances.DefaultRunRules.Update * adamEpsilon
	for step, beta := range measured {
		pred, e := radamRect(step)
		if step <= 5 {
			if pred != 0 || e != 0 {
				t.Errorf("t = %d: rectification predicted (%g ± %g) before it starts", step, pred, e)
			}
		}
		lo, hi := min(0, pred-e), max(0, pred+e)
		if left := math.Abs(beta-min(max(beta, lo), hi)) - adam; left > 0 {
			t.Errorf("t = %d: measured β %+.3g, predicted %+.3g ± %.3g: %.3g beyond the rule's allowance", step, beta, pred, e, left)
		}
	}

	c := ctx()
	grad := stepPair("grads/w", loaders.KindGrad, 100, 1, 0)
	param := func(step int, beta float64) Pair {
		p := stepPair("params/w", loaders.KindParam, 100, 10, 0.01)
		p.Step = step
		p.Update = update(100, -2, 1e-3, beta)
		return p
	}
	at := func(step int) Context { // the step before was judged
		return c.Next(StepFacts{Step: step - 1})
	}
	g := grad
	g.Step = 5 // optimizer step t = 6, the first rectified one
	pred, _ := radamRect(6)
	for _, tc := range []struct {
		beta float64
		want Status
	}{
		{pred, StatusMatch},
		{-0.0057, StatusMatch}, // measured
		{-pred, StatusMismatch},
		{3 * pred, StatusMismatch},
	} {
		f, d := Step([]Pair{g, param(5, tc.beta)}, at(5))
		if d[1].Status != tc.want {
			t.Errorf("t = 6, β = %+.3g: %s (shift %+.3g, limit %.3g), want %s", tc.beta, d[1].Status, f.RectShift, f.UpdateLimit, tc.want)
		}
	}
	// the same departure where the step saved SGD's state: no RAdam, no allowance
	sgd := stepPair("optimizer/state/0/momentum_buffer", loaders.KindTensor, 100, 1, 0)
	sgd.Step = 5
	sgd.A = &loaders.Meta{DType: loaders.Float32, Moment: loaders.Moment{State: "momentum_buffer"}}
	if f, d := Step([]Pair{g, param(5, pred), sgd}, at(5)); d[1].Status != StatusMismatch || f.RectShift != 0 {
		t.Errorf("t = 6 beside SGD's momentum buffer, β = %+.3g: %s, shift %g", pred, d[1].Status, f.RectShift)
	}
	g.Step = 4 // t = 5: not rectified, the departure is a departure
	if f, d := Step([]Pair{g, param(4, pred)}, at(4)); d[1].Status != StatusMismatch || f.RectShift != 0 {
		t.Errorf("t = 5, β = %+.3g: %s, shift %g", pred, d[1].Status, f.RectShift)
	}
	// an update spanning optimizer steps 3 … 7 (dumps 2 and 6) takes in the
	// rectification of its first rectified step
	g.Step = 6
	if f, d := Step([]Pair{g, param(6, pred)}, c.Next(StepFacts{Step: 2})); d[1].Status != StatusMatch || f.RectShift != pred {
		t.Errorf("spanning t = 4 … 7: %s, shift %g, want %g", d[1].Status, f.RectShift, pred)
	}
}

// readRounding reads one column of testdata/gen/optim_rounding.txt: the
// measured β by optimizer step.
func readRounding(t *testing.T, column string) map[int]float64 {
	t.Helper()
	data, err := os.ReadFile("../testdata/gen/optim_rounding.txt")
	if err != nil {
		t.Fatal(err)
	}
	var col = -1
	out := map[int]float64{}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if fields[0] == "t" {
			col = slices.Index(fields, column)
			continue
		}
		step, err := strconv.Atoi(fields[0])
		if err != nil || col < 0 || col >= len(fields) {
			continue
		}
		beta, err := strconv.ParseFloat(fields[col], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		out[step] = beta
	}
	return out
}
