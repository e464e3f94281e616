package diagnose

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// Cause is a likely reason for what a comparison found.
type Cause struct {
	ID string
	// Confidence is in [0, 1]. A detector sets it to its strength, how
	// strongly the dumps show the cause's signature (see each detector);
	// on a failing comparison the causes found are then weighed against
	// each other (posterior), and it is the probability that this one,
	// of those named, made the difference.
	Confidence float64
	// Evidence quotes the numbers that point to the cause, and says what
	// was not dumped that would have made the diagnosis surer.
	Evidence []string
	// Fix is the remedy, in one paragraph.
	Fix string
	// Fit is how much of the graphed run's difference from the eager one
	// the cause's prediction P of the graphed values B removes, against
	// the null "the graph is eager plus rounding" (P = A): the median over
	// the steps it was tested at, from the first divergent one on, of
	// 1 − ‖B − P‖ / ‖B − A‖ (see fitOf). FitSteps is how many steps; 0
	// where the dumps gave no numbers to test the prediction on (a cause
	// named by a shape, by what is left, or by a pattern of equal bits),
	// and Fit is then 0.
	Fit      float64
	FitSteps int
}

// Report is what diagnosis found.
type Report struct {
	// Causes are the likely causes of a failing comparison, highest
	// confidence first. On a passing comparison only precision_noise can
	// appear, saying that the differences are rounding.
	Causes []Cause
	// Warnings are structured differences found in a passing comparison —
	// updates or gradients exactly proportional to the eager ones by a
	// factor other than 1, say — that stay inside the thresholds, or, on a
	// failing one, that its differences need a baseline to be judged
	// (needs_baseline). They do not change the verdict (see graphdiff
	// compare --strict).
	Warnings []Cause
	// Unexplained is set on a failing comparison for which no cause was
	// named: where the runs part, what could still explain it and the
	// dumps that would tell.
	Unexplained *Unexplained
}

// facts is what the detectors share.
type facts struct {
	r         *judge.Result
	s         *sampleSet
	failed    bool
	firstStep int // first sampled step of the runs
	div       int // first divergent step, loaders.NoStep when none
	// diverged lists, per kind, the steps at which a pair of that kind did
	// not match.
	diverged map[loaders.Kind][]int
	found    map[string]float64 // confidence of causes found so far
	// aliased are the kinds whose graphed values output_aliasing found
	// identical at every step: no other detector reads them.
	aliased map[loaders.Kind]bool
	// scales are the sampled steps' scale findings, the first scaled of
	// them made (scaleOf).
	scales []*scaleFinding
	scaled int
	// oneStep is set when dynamic_shape was named for a break at one
	// step only, without the shapes (oneStepShape).
	oneStep bool
	// fluctuates is captured_branch's evidence that the loss's difference
	// after the break fluctuates as random draws make it ("" when not).
	fluctuates string
	// pairHead returns the head of a pair, both runs' leading values as
	// read for the samples (nil when none was read).
	pairHead func(step int, kind loaders.Kind, name string) (a, b vec)
	// channels is moduleChannels' finding, nil for none.
	channels *channelFinding
	// reads is batchesRead's finding, taken once: inputLag and
	// staleInput read it.
	reads readsFinding
}

// Diagnose looks at a whole comparison — all steps, all tensors, and
// samples of both runs' raw values — and returns the likely causes of what
// it found, each with evidence and a fix. The samples are made of heads,
// the leading values of the pairs a plan of r.Tensors names (fewer or
// none where they could not be read), read as the plan they were made for
// asked (Plan.NewHeads). Diagnose reads no file and changes neither r nor
// heads.
func Diagnose(r *judge.Result, heads Heads) Report {
	return DiagnosePlanned(r, NewPlan(r.Tensors), heads)
}

// DiagnosePlanned is Diagnose with the samples' plan made already:
// NewPlan(r.Tensors), usually the plan the heads were read for. A nil
// plan, or one made over other pairs than r.Tensors (another slice), is
// made again; heads read for another plan are found by their pairs.
func DiagnosePlanned(r *judge.Result, p *Plan, heads Heads) Report {
	if p == nil || !p.of(r.Tensors) {
		p = NewPlan(r.Tensors)
	}
	f := &facts{r: r, s: takeSamples(p, heads), failed: numbersFailed(r), div: loaders.NoStep,
		diverged: map[loaders.Kind][]int{}, found: map[string]float64{}, aliased: map[loaders.Kind]bool{},
		pairHead: p.headOf(heads)}
	if len(f.s.steps) > 0 {
		f.firstStep = f.s.steps[0]
	}
	if r.FirstDivergence != nil {
		f.div = r.FirstDivergence.Step
	}
	// the detectors read numbers: where they first differ, when they do
	// (a pair only one run has is first divergence only when no numbers
	// differ)
	if k, ok := firstNumbersDiverge(r); ok {
		f.div = k
	}
	for _, t := range r.Tensors {
		if t.Status == judge.StatusMismatch && t.Step != loaders.NoStep {
			f.diverged[t.Kind] = appendUnique(f.diverged[t.Kind], t.Step)
		}
	}
	var rep Report
	if !f.failed {
		rep.Warnings = f.run(proportionalWarning, noiseDrift)
		rep.Causes = f.run(precisionNoise)
		return rep
	}
	if f.s.deriveGrads(); f.s.derived != "" {
		f.diverged[loaders.KindGrad] = f.derivedDiverged()
	}
	f.channels = f.moduleChannels()
	if f.channels == nil {
		f.channels = f.outputChannels()
	}
	f.reads = f.batchesRead()
	// Order matters: later detectors discount what earlier ones explain.
	rep.Causes = f.run(detectors()...)
	rep.Causes = posterior(f.locate(f.alternatives(rep.Causes)))
	f.s.noteDerived(rep.Causes)
	rep.Warnings = f.run(needsBaseline)
	if len(rep.Causes) == 0 {
		rep.Unexplained = f.unexplained()
	}
	return rep
}

// alternatives adds, after the causes found, those the dumps cannot rule
// out against them, with the dump that would decide: a break after
// several agreeing steps (captured_branch) is also what a batch of
// another size gives (dynamic_shape) when neither inputs nor outputs were
// dumped, whose shapes would show it, and what a weight on one term of
// the loss frozen at capture gives (captured_scalar, 0.15 below the
// branch); where only the loss broke, its gradients agreeing, such a
// weight is as likely as the branch (the loss's terms dumped apart would
// show which). A break at one step only is a batch of another size or a
// branch taken at that step alone. Random values frozen at capture
// (frozen_rng) are what a tensor made for every batch and rebound instead
// of copied gives (reassigned_tensor, 0.15 below): both hold the capture
// batch's values, and only that tensor dumped would tell them apart. A
// backward that accumulates (callables_accumulation) at the first step
// of dumps that begin mid-run is as likely gradients summed over the
// replays before them (grad_accumulation, at the same confidence).
func (f *facts) alternatives(cs []Cause) []Cause {
	alt := func(id string, conf float64, evidence ...string) Cause {
		return Cause{ID: id, Confidence: conf, Evidence: evidence, Fix: fixOf(id)}
	}
	// below is what the dumps cannot rule out beside a cause of
	// confidence c, but find less likely: 0.15 lower, at least 0.1
	below := func(c float64) float64 { return math.Round(100*max(0.1, c-0.15)) / 100 }
	// beside inserts, right after the cause named id where it was found
	// and the cause other was not, the alternative made from the found
	// cause's confidence
	beside := func(id, other string, mk func(conf float64) Cause) {
		if j := slices.IndexFunc(cs, func(c Cause) bool { return c.ID == id }); j >= 0 && f.found[other] == 0 {
			cs = slices.Insert(cs, j+1, mk(cs[j].Confidence))
		}
	}
	if f.oneStep && f.found[CapturedBranch] == 0 {
		// a branch eager took the other way at that step alone
		cs = append(cs, alt(CapturedBranch, 0.3, fmt.Sprintf("a Python if that eager took the other way at step %d alone breaks the runs there the same way; not dumped, and would tell them apart: inputs or outputs (their shapes), or the value the branch tests", f.div)))
	}
	if f.midRunStart(f.div) {
		// gradients summed over the replays before dumps that begin
		// mid-run (no zero_grad before capture) leave the loss equal and
		// the gradients apart at their first step, as a graphed
		// backward that accumulates does
		beside(CallablesAccumulation, GradAccumulation, func(conf float64) Cause {
			return alt(GradAccumulation, conf, fmt.Sprintf("gradients accumulated over the replays before step %d, the first dumped (no zero_grad(set_to_none=True) before capture), leave the loss equal and the gradients apart there as well; not dumped, and would tell them apart: the steps before %d, or consecutive steps after it (accumulated, each gradient is the one before plus eager's)", f.div, f.div))
		})
	}
	// a tensor that changes with every batch (or a state carried from
	// batch to batch), rebound instead of copied, is held from capture as
	// frozen draws are
	beside(FrozenRNG, ReassignedTensor, func(conf float64) Cause {
		return alt(ReassignedTensor, below(conf), fmt.Sprintf("a tensor made anew for every batch (a padding mask, position ids) or carried from one batch to the next (a recurrent state), rebound instead of copied into the one the graph reads, holds its value of capture at every replay from step %d on, as frozen random values do; not dumped, and would tell them apart: that tensor as the graph read it at two steps, or its data_ptr() at capture and at the break", f.div))
	})
	i := slices.IndexFunc(cs, func(c Cause) bool { return c.ID == CapturedBranch })
	if i < 0 {
		return cs
	}
	under := below(cs[i].Confidence) // what the dumps cannot rule out, below the branch
	termOnly := f.lossTermOnly()
	if termOnly {
		// a loss term switched by a branch, or weighted by a number
		// frozen at capture: the same losses and gradients
		beside(CapturedBranch, CapturedScalar, func(conf float64) Cause {
			return alt(CapturedScalar, conf, fmt.Sprintf("a loss weight frozen at capture changes the same term of the loss at step %d, its gradient as small; not dumped, and would tell them apart: the loss's terms apart, or the weight the graphed step read", f.div))
		})
	}
	if f.fluctuates != "" && f.found[FrozenRNG] == 0 {
		// random values drawn at capture act from the first replay; with
		// the warm-up steps dumped, that is a break after agreeing steps
		cs = append(cs, alt(FrozenRNG, 0.5, f.fluctuates, fmt.Sprintf("random values frozen at capture act from the first replay: if the graph was captured at the step before %d (the warm-up steps dumped), the break is there", f.div),
			"not dumped, and would confirm it: the random tensors (dropout masks, noise) or the numbers drawn in Python at two steps of the graphed run, or the step the graph was captured at"))
	}
	if f.found[CapturedScalar] == 0 && !termOnly {
		// a weight on one term of the loss frozen at capture changes the
		// graph's loss and gradients by that term, as a branch that adds
		// or drops it does
		cs = append(cs, alt(CapturedScalar, under, fmt.Sprintf("a Python number frozen at capture that weights one term of the loss (a KL or auxiliary weight annealed from Python) changes the graph's loss and gradients by that term from step %d on, as a branch does; not dumped, and would tell them apart: the loss's terms apart, or the weight the graphed step read", f.div)))
	}
	if f.found[DynamicShape] > 0 || f.s.kinds[loaders.KindInput] || f.s.kinds[loaders.KindOutput] || f.inference() {
		return cs
	}
	return append(cs, alt(DynamicShape, under, fmt.Sprintf("a batch of another size at step %d breaks the runs the same way as a branch; not dumped, and would show it as a shape difference: inputs or outputs", f.div)))
}

// firstNumbersDiverge returns the first step at which a compared pair's
// numbers (or shapes) differ, and whether there is one.
func firstNumbersDiverge(r *judge.Result) (int, bool) {
	k, ok := 0, false
	for _, t := range r.Tensors {
		if t.Diverged() && t.Step != loaders.NoStep && (!ok || t.Step < k) {
			k, ok = t.Step, true
		}
	}
	return k, ok
}

// numbersFailed reports whether some pair that was read failed: a verdict
// of error with every readable pair matching is diagnosed like a pass (the
// unreadable inputs are reported, not explained).
func numbersFailed(r *judge.Result) bool {
	for _, t := range r.Tensors {
		if t.Failed() && t.Status != judge.StatusError {
			return true
		}
	}
	return false
}

type detector func(f *facts) *Cause

// run applies detectors in order and returns what they found, highest
// confidence first (ranksAbove; ties of both keep detector order). A cause whose prediction
// was tested on numbers and removes none of the graphed run's difference
// from eager (Fit ≤ 0: no better than "eager plus rounding") is not
// named, however its signature looked.
func (f *facts) run(ds ...detector) []Cause {
	var out []Cause
	for _, d := range ds {
		c := d(f)
		if c == nil || c.Confidence <= 0 || c.FitSteps > 0 && c.Fit <= 0 {
			continue // not found, or its prediction explains nothing rounding does not
		}
		c.Confidence = math.Round(min(c.Confidence, 1)*100) / 100
		c.Fix = fixOf(c.ID)
		f.found[c.ID] = c.Confidence
		out = append(out, *c)
	}
	sort.SliceStable(out, func(i, j int) bool { return ranksAbove(out[i], out[j]) })
	return out
}

// stepFacts returns the facts the verdict judged step k with, nil where
// the step was not judged as a whole.
func (f *facts) stepFacts(k int) *judge.StepFacts {
	for i := range f.r.Steps {
		if f.r.Steps[i].Step == k {
			return &f.r.Steps[i]
		}
	}
	return nil
}

// explained returns the highest confidence among causes already found.
func (f *facts) explained(ids ...string) float64 {
	best := 0.0
	for _, id := range ids {
		best = max(best, f.found[id])
	}
	return best
}

// bugFound returns the highest confidence among the causes found so far
// that are bugs (every cause but precision_noise).
func (f *facts) bugFound() float64 {
	best := 0.0
	for id, c := range f.found {
		if id != PrecisionNoise {
			best = max(best, c)
		}
	}
	return best
}

// missing returns the evidence line naming kinds that were not dumped
// (in both runs) and would have helped.
func (f *facts) missing(kinds ...loaders.Kind) string {
	var names []string
	for _, k := range kinds {
		if !f.s.kinds[k] {
			names = append(names, kindWord(k))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "not dumped, and would make this surer: " + strings.Join(names, ", ")
}

func kindWord(k loaders.Kind) string {
	switch k {
	case loaders.KindGrad:
		return "gradients"
	case loaders.KindParam:
		return "parameters"
	case loaders.KindInput:
		return "inputs"
	case loaders.KindOutput:
		return "outputs"
	case loaders.KindLoss:
		return "per-step losses"
	case loaders.KindActivation:
		return "tapped modules' outputs"
	case loaders.KindActivationGrad:
		return "tapped modules' gradients"
	}
	return string(k)
}

func appendUnique(xs []int, x int) []int {
	for _, v := range xs {
		if v == x {
			return xs
		}
	}
	return append(xs, x)
}

// evidence collects evidence lines, skipping empty ones.
type evidence []string

func (e *evidence) add(format string, args ...any) {
	if line := fmt.Sprintf(format, args...); line != "" {
		*e = append(*e, line)
	}
}

// g formats a number compactly for evidence.
func g(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 1):
		return "inf"
	}
	return fmt.Sprintf("%.3g", v)
}

// oneLine folds a paragraph of explanation text into one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// steps formats a list of steps: "1, 2, 3".
func steps(ks []int) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprint(k)
	}
	return strings.Join(parts, ", ")
}

// compareDType returns the comparison dtype of the first compared pair of
// a kind, Invalid when none.
func (f *facts) compareDType(kind loaders.Kind) loaders.DType {
	for _, t := range f.r.Tensors {
		if t.Kind == kind && t.Metrics != nil {
			return t.Settings.DType
		}
	}
	return loaders.Invalid
}

// storedFloat returns the widest floating-point dtype stored for grads or
// params (the kinds autocast affects), Invalid when none.
func (f *facts) storedFloat() loaders.DType {
	d := loaders.Invalid
	for _, t := range f.r.Tensors {
		if t.A == nil || (t.Kind != loaders.KindGrad && t.Kind != loaders.KindParam) || !t.A.DType.IsFloat() {
			continue
		}
		if d == loaders.Invalid || tolerances.Epsilon(t.A.DType) < tolerances.Epsilon(d) {
			d = t.A.DType
		}
	}
	return d
}
