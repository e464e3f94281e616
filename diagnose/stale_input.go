package diagnose

import (
	"fmt"
	"math"

	"github.com/graphdiff/graphdiff/loaders"
	"gonum.org/v1/gonum/mathext"
)

// StaleInput is the ID of the cause "input tensor reassigned instead of copied".
const StaleInput = "stale_input"

// staleInputCause is what `graphdiff explain stale_input` prints.
var staleInputCause = Explanation{
	ID:    StaleInput,
	Title: "input tensor reassigned instead of copied",
	What: `The graph reads the static input tensor it was captured with. Assigning a new
tensor to the Python name (static_x = batch) changes nothing the graph sees,
so every replay computes on the capture-time batch.`,
	Signature: `The graph behaves as if fed one batch. Its gradients (and outputs) change
far less from step to step than the eager run's, which change with every
batch: only the parameters move them. A model fitting one batch, its loss
falls below the eager run's step after step. With ReLUs, its gradients' zero
pattern repeats. Inputs dumped as the graph read them never change.
`,
	Confirm: `Dump the graph's static input tensor after a few steps: it still holds the
first batch.`,
	Fix: `Copy new data into the static input in place: static_x.copy_(batch)
(and keep the static tensors alive for the graph's lifetime).`,
}

// staleInput: after the first divergence, the graphed run behaves as if
// fed one batch. The signals, each over the steps after the first
// divergent one (which may still see the capture batch legitimately):
//
//   - inputs: the graphed run's dumped inputs are identical at every step
//     while the eager run's change (the dump shows what the graph read);
//   - repeat(kind) = median over steps k of
//     relL2(x_B[k−1], x_B[k]) / relL2(x_A[k−1], x_A[k]), for gradients,
//     outputs and the tapped modules' outputs (activations): below
//     repeatRatio, the graph's values change much less than the eager
//     run's, which a new batch moves every step (outputs and activations
//     only where the eager ones change by more than 5%);
//   - loss below: the graphed loss is below the eager one at ≥ 80% of at
//     least 3 steps (a model fitting one batch);
//   - zeros: the gradients' zero pattern repeats in the graph and varies
//     in eager (ReLU models only);
//   - token repeats: in a decoding, the graph's greedy token repeats the
//     step before's beyond what the eager run's rate makes likely
//     (decodeRepeats): fed one token, a decoder repeats itself.
//
// Values that never change at all are output_aliasing (a kind it found is
// not read), and accumulated gradients change little too, so that signal
// is left out when grad_accumulation was found, or where the graph's
// gradients outgrow eager's (gradsOutgrowEager): one batch fitted over and
// over has a gradient that falls, while a sum of gradients grows. Gradients that change as much as eager's do not rule a
// stale input out: targets copied in place while the inputs are stale
// still move them.
//
// Prediction: the graph reads the static input it was captured with, so
// from the first replay it computes on one batch (one token, in
// decoding): its step-to-step changes come from its parameters (or its
// state) alone, not from new data.
func staleInput(f *facts) *Cause {
	if f.div == loaders.NoStep {
		return nil
	}
	var ev evidence
	if k, ok := f.inputsFrozen(); ok {
		ev.add("inputs: the graphed run's are identical at every step from %d on, while the eager run's change with every batch: the graph reads one batch", k)
		fs, of := f.staleFit()
		return fs.set(&Cause{ID: StaleInput, Confidence: 0.95, Evidence: ev}, "graph[k] − graph[k−1] = 0 (one batch)", of)
	}
	if c := otherBatches(f); c != nil {
		return c
	}
	gradRep, gradN := f.repeat(loaders.KindGrad, 0)
	if f.explained(GradAccumulation) >= 0.6 || f.gradsOutgrowEager() {
		gradN = 0
	}
	// the tapped modules' outputs are outputs too, each a function of
	// the batch: fed one, they repeat as the model's outputs do
	outRep, outN, outKind := math.NaN(), 0, loaders.KindOutput
	for _, kind := range f.batchKinds() {
		if r, n := f.repeat(kind, 0.05); n > outN {
			outRep, outN, outKind = r, n, kind
		}
	}
	grads := gradN >= 2 && gradRep < repeatRatio
	outs := outN >= 2 && outRep < repeatRatio
	repeats := ""
	if f.explained(OutputAliasing) < 0.6 {
		repeats = f.decodeRepeats()
	}
	below, belowN := f.lossBelow()
	lossFits := belowN >= 3 && below >= 0.8
	zeros := f.zeroRepeats(&ev)
	if grads {
		ev.add("gradients change from step to step %s as much in the graphed run as in the eager run (median over %d steps after step %d): only the parameters move them, not the batch", g(gradRep)+"×", gradN, f.div)
	}
	if outs {
		ev.add("%s change from step to step %s as much in the graphed run as in the eager run (median over %d steps)", batchWord(outKind), g(outRep)+"×", outN)
	}
	if repeats != "" {
		ev.add("%s", repeats)
	}
	if lossFits {
		ev.add("the graphed loss is below the eager one at %.0f%% of the %d steps after step %d: a model fitting one batch", 100*below, belowN, f.div)
	}
	conf := 0.0
	switch {
	case outs && repeats != "":
		conf = 0.9
	case grads && (outs || lossFits || zeros):
		conf = 0.9
	case grads:
		conf = 0.8
	case outs && (lossFits || zeros):
		conf = 0.85
	case outs, repeats != "":
		conf = 0.75
	case zeros:
		conf = 0.6
	case lossFits && (lossBelowChance(below, belowN) <= testSize || staleFits(f)):
		conf = 0.5
		if f.s.kinds[loaders.KindGrad] {
			ev.add("not dumped, and would decide it: the inputs as the graph read them (the static input tensor after the replay)")
		} else {
			ev.add("not dumped, and would decide it: gradients, or inputs as the graph read them (the static input tensor after the replay)")
		}
	}
	if conf == 0 {
		return nil
	}
	if f.inference() {
		ev.add("not dumped, and would decide it: the inputs as the graph read them (its static token or input tensor after each replay)")
	} else {
		ev.add("%s", f.missing(loaders.KindGrad, loaders.KindOutput))
	}
	fs, of := f.staleFit()
	return fs.set(&Cause{ID: StaleInput, Confidence: conf, Evidence: ev}, "graph[k] − graph[k−1] = 0 (one batch)", of)
}

// staleFit is stale_input's prediction tested on each step k after the
// first divergent one: fed one batch, the graph's values change from step
// to step only as its parameters move them, far less than eager's, which
// see a new batch each step. It is tested where the batch acts most
// directly, the first of: the outputs; the tapped modules' outputs; the
// gradients' zero pattern (a
// ReLU's mask is the input's); the gradients' values. On the step changes
// ΔX[k] = X[k] − X[k−1] the prediction is ΔB = 0 and the null ΔB = ΔA,
// fitOf(ΔA, ΔB, 0) = 1 − ‖ΔB‖ / ‖ΔB − ΔA‖; on a zero pattern, whose
// change is 1 − J (J the Jaccard index of a run's zeros at k−1 and k),
// 1 − (1 − J_B) / (1 − J_A).
func (f *facts) staleFit() (fitSet, string) {
	each := func(kind loaders.Kind, fit func(a, ap, b, bp vec) float64) fitSet {
		var fs fitSet
		if !f.aliased[kind] {
			for _, q := range f.afterBreak(kind) {
				fs.add(fit(q.a, q.ap, q.b, q.bp))
			}
		}
		return fs
	}
	values := func(a, ap, b, bp vec) float64 { return fitOf(sub(a, ap), sub(b, bp), make(vec, len(a))) }
	const of = "the difference between the runs' step-to-step changes of the %s"
	for _, kind := range f.batchKinds() {
		if fs := each(kind, values); len(fs) > 0 {
			return fs, fmt.Sprintf(of, kindWord(kind))
		}
	}
	if fs := each(loaders.KindGrad, func(a, ap, b, bp vec) float64 {
		jA, zA := zeroJaccard(a, ap)
		jB, zB := zeroJaccard(b, bp)
		if zA < 0.02 || zB < 0.02 || !(jA < 1) {
			return math.NaN() // no zero pattern, or one eager does not change
		}
		return 1 - (1-jB)/(1-jA)
	}); len(fs) > 0 {
		return fs, fmt.Sprintf(of, "gradients' zero patterns")
	}
	return each(loaders.KindGrad, values), fmt.Sprintf(of, "gradients")
}

// inputsFrozen reports whether the graphed run's dumped inputs are
// identical at every step from the first divergent one's predecessor on
// (at least 3 steps) while the eager run's change, and from which step.
func (f *facts) inputsFrozen() (int, bool) {
	var ks []int
	for _, k := range f.s.steps {
		if p, ok := f.s.prev(f.div); (ok && k >= p) || k >= f.div {
			if f.s.get(f.s.b, k, loaders.KindInput) != nil && f.s.get(f.s.a, k, loaders.KindInput) != nil {
				ks = append(ks, k)
			}
		}
	}
	if len(ks) < 3 {
		return 0, false
	}
	first := ks[0]
	b0, a0 := f.s.get(f.s.b, first, loaders.KindInput), f.s.get(f.s.a, first, loaders.KindInput)
	if _, special := maxAbs(b0); special {
		return 0, false
	}
	eagerChanges := 0
	for _, k := range ks[1:] {
		if relL2(b0, f.s.get(f.s.b, k, loaders.KindInput)) != 0 {
			return 0, false
		}
		if relL2(a0, f.s.get(f.s.a, k, loaders.KindInput)) > 0 {
			eagerChanges++
		}
	}
	return first, eagerChanges == len(ks)-1
}

// repeat returns the median over the steps after the first divergent one
// of relL2(x_B[k−1], x_B[k]) / relL2(x_A[k−1], x_A[k]) for a kind, over the
// steps where the eager change exceeds minEager and all four samples are
// finite (NaN repeats nothing), and how many steps. Each run's change is
// relative to its own values: a graph whose values are smaller than
// eager's (a mixing factor frozen near 0 or 1) changes less in absolute
// terms without repeating anything.
func (f *facts) repeat(kind loaders.Kind, minEager float64) (float64, int) {
	if f.aliased[kind] {
		return math.NaN(), 0
	}
	var rs []float64
	for _, q := range f.afterBreak(kind) {
		if allFinite(q.a, q.ap, q.b, q.bp) {
			sA, sB := relL2(q.ap, q.a), relL2(q.bp, q.b)
			if sA > minEager && finite(sA) && finite(sB) {
				rs = append(rs, sB/sA)
			}
		}
	}
	return median(rs)
}

// lossBelow returns the fraction of the steps after the first divergent
// one at which the graphed loss is below the eager one, and how many
// steps had both losses.
func (f *facts) lossBelow() (float64, int) {
	below, n := 0, 0
	for _, k := range f.s.steps {
		if k <= f.div {
			continue
		}
		a, b := f.s.get(f.s.a, k, loaders.KindLoss), f.s.get(f.s.b, k, loaders.KindLoss)
		if len(a) != 1 || len(b) != 1 || !finite(a[0]) || !finite(b[0]) {
			continue
		}
		n++
		if b[0] < a[0] {
			below++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(below) / float64(n), n
}

// zeroRepeats reports whether the gradients' zero pattern repeats from
// step to step in the graphed run and varies in the eager run, at two
// steps after the first divergent one at least, and says so in ev.
func (f *facts) zeroRepeats(ev *evidence) bool {
	if f.explained(GradAccumulation) >= 0.6 || f.aliased[loaders.KindGrad] {
		return false
	}
	hits := 0
	for _, q := range f.afterBreak(loaders.KindGrad) {
		jA, zA := zeroJaccard(q.a, q.ap)
		jB, zB := zeroJaccard(q.b, q.bp)
		if zA > 0.02 && zB > 0.02 && jB >= zeroRepeat && jA < zeroVary {
			hits++
			if hits <= 2 {
				ev.add("gradients' zero pattern (ReLU) at steps %d and %d: %.0f%% the same in the graphed run, %.0f%% in the eager run", q.p, q.k, 100*jB, 100*jA)
			}
		}
	}
	return hits >= 2
}

// otherBatches is stale_input from the batches an inference graph read
// (batchesRead): at two or more diverged steps the graph's outputs equal
// eager's of other steps, and not in the pattern of a copy after the
// replay (the batch before at every step from the break on, which
// inputLag names). The graph reads an input other than the one the loop
// put there: one batch held, or, where the batch it reads changes, or
// steps after the break read their own, the memory of the static input
// it was captured on, freed when the name was rebound (static_x = x) and
// handed by the caching allocator to batches made later. 0.9: equality to
// another step's outputs is no rounding's.
//
// Prediction: graph[k] = eager[j], j the batch read; its fit is taken
// over the diverged steps.
func otherBatches(f *facts) *Cause {
	kind, reads := f.reads.kind, f.reads.reads
	if len(reads) < 2 {
		return nil
	}
	if every, lagOnly := f.everyRead(reads); !every || lagOnly && len(f.reads.agreeing) == 0 {
		return nil
	}
	ev := evidence(readsEvidence(f.reads))
	one := len(f.reads.agreeing) == 0
	var fs fitSet
	for _, r := range reads {
		one = one && r.read == reads[0].read
		fs.add(fitOf(f.s.get(f.s.a, r.step, kind), f.s.get(f.s.b, r.step, kind), f.s.get(f.s.a, r.read, kind)))
	}
	if one {
		ev.add("one batch held: the graph reads the input of step %d at every diverged step, not the one the loop gives it", reads[0].read)
	} else {
		ev.add("the batch the graph reads changes, and is not always the one before: it reads the memory of the static input it was captured on, which later batches land in or not as the caching allocator hands out the block freed when the name was rebound (static_x = x, where static_x.copy_(x) was meant)")
	}
	ev.add("not dumped, and would confirm it: the inputs as the graph read them (its static input after each replay), or the static input's data_ptr() at capture and at the break")
	return fs.set(&Cause{ID: StaleInput, Confidence: 0.9, Evidence: ev}, "graph[k] = eager[j], the batch it read", "the outputs' difference from eager")
}

// gradsOutgrowEager reports whether, at every one of two or more diverged
// steps, the graph's gradient norm is above the largest of the eager
// run's at every dumped step: no one batch's gradient, which is what a
// stale input computes (and which falls as the batch is fitted over and
// over), but what a sum of gradients makes (gradients accumulated over
// steps the dumps skip, where grad_accumulation's own test needs every
// step).
func (f *facts) gradsOutgrowEager() bool {
	var most float64
	for _, j := range f.s.steps {
		if a := f.s.get(f.s.a, j, loaders.KindGrad); a != nil {
			most = max(most, norm(a))
		}
	}
	n := 0
	for _, k := range f.divergedSteps(loaders.KindGrad) {
		b := f.s.get(f.s.b, k, loaders.KindGrad)
		if b == nil {
			continue
		}
		if !(norm(b) > most) {
			return false
		}
		n++
	}
	return n >= 2 && most > 0
}

// staleFits reports whether stale_input's prediction (the graph's
// step-to-step changes are its parameters' alone, staleFit) removes at
// least minScaleFit of the difference, half of its square, where it
// could be tested.
func staleFits(f *facts) bool {
	fs, _ := f.staleFit()
	fit, n := fs.median()
	return n > 0 && fit >= minScaleFit
}

// lossBelowChance is the chance that a graph whose loss is no nearer one
// batch than eager's lies below eager's at the fraction below of n steps
// or more, each step's sign a fair coin: Pr[Binomial(n, ½) ≥ k] =
// I_½(k, n − k + 1), k = below·n. The loss alone names a stale batch only
// where that chance is at most testSize (seven steps of seven, say;
// three of three happen one time in eight), or where the stale
// prediction, tested on the gradients, fits (staleFits).
func lossBelowChance(below float64, n int) float64 {
	k := math.Round(below * float64(n))
	if k <= 0 {
		return 1
	}
	return mathext.RegIncBeta(k, float64(n)-k+1, 0.5)
}
