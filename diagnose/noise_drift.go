package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/judge"
)

// NoiseDrift is the ID of the warning "parameters drifted where their
// gradients are rounding noise".
const NoiseDrift = "noise_drift"

// noiseDriftCause is what `graphdiff explain noise_drift` prints.
var noiseDriftCause = Explanation{
	ID:    NoiseDrift,
	Title: "not a bug: parameters drifted where their gradients are rounding noise",
	What: `Some parameters get a gradient that is zero in exact arithmetic: the key
bias of attention (softmax ignores a constant shift), a bias feeding a
normalization layer (BatchNorm and LayerNorm remove it), embedding rows a batch
does not touch. Their computed gradient is rounding noise, and Adam-family
optimizers normalise that noise into full-size steps of random sign, so the
eager and the graphed run take different steps there. State derived from such
a parameter (a BatchNorm running mean) drifts with it.`,
	Signature: `A parameter beyond its dtype's default max_rel_l2 while the step's gradients
agree and the update ratio over elements with healthy gradients is inside its
limit; the difference sits in elements whose eager gradient is below
sqrt(ε)·S, the step's gradient scale S.`,
	Confirm: `Look at the elements the warning names: their gradients are orders of
magnitude below the model's. A second eager run with the initial parameters
nudged by one ULP drifts the same way.`,
	Fix: `Nothing to fix: the verdict passes. To silence it, give the drifting
tensors a looser max_rel_l2 in a policy file.`,
}

// noiseDrift: on a passing comparison, the parameters whose differences
// passed as drift (judge.StepFacts.Drift), worst first.
func noiseDrift(f *facts) *Cause {
	if f.failed {
		return nil
	}
	type at struct {
		step    int
		d       judge.Drift
		moments bool // the step dumped no gradients; the optimizer's moments stood in
	}
	var all []at
	tensors := map[string]bool{}
	byMoments := 0
	for _, s := range f.r.Steps {
		for _, d := range s.Drift {
			mom := s.Grads == 0 && s.Moments > 0
			all = append(all, at{s.Step, d, mom})
			tensors[d.Name] = true
			if mom {
				byMoments++
			}
		}
	}
	if len(all) == 0 {
		return nil
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].d.RelL2 > all[j].d.RelL2 })
	var ev evidence
	what, healthy := "gradients", "gradients"
	if byMoments == len(all) {
		what, healthy = "optimizer moments (the gradients were not dumped; the moments average them over the last steps)", "moments"
	}
	ev.add("%d parameter tensors differ beyond their dtype's default limit at %d (step, tensor) pairs, and pass: the %s agree and the updates of elements with healthy %s match", len(tensors), len(all), what, healthy)
	seen := map[string]bool{}
	for _, a := range all {
		if seen[a.d.Name] || len(seen) == 3 {
			continue
		}
		seen[a.d.Name] = true
		d := a.d
		if d.State {
			ev.add("%s at %s: relative L2 %s; derived state (a buffer, EMA weights, optimizer state) that follows the parameters by its own rule: every gradient of the step agrees and its updates are no scale of the eager ones, so no momentum or decay differs; an output of the model in eval mode, dumped, would show whether the difference matters",
				d.Name, stepName(a.step), g(d.RelL2))
			continue
		}
		if d.Unmeasured && a.moments {
			ev.add("%s at %s: relative L2 %s, with no previous step dumped to measure its update from; every optimizer moment of the step agrees, so the gradients the optimizer saw do not see the difference",
				d.Name, stepName(a.step), g(d.RelL2))
			continue
		}
		if d.Unmeasured {
			ev.add("%s at %s: relative L2 %s, with no previous step dumped to measure its update from; every gradient of the step agrees (its own RMS is %s of the step's gradient scale), so the computation does not see the difference",
				d.Name, stepName(a.step), g(d.RelL2), g(d.GradRatio))
			continue
		}
		if a.moments {
			ev.add("%s at %s: relative L2 %s; %d of %d elements have rounding-level optimizer moments and carry %s of its update difference; its update RMS %s",
				d.Name, stepName(a.step), g(d.RelL2), d.NoisyElems, d.Count, pct(d.NoisyShare), g(d.UpdateRMS))
			if len(d.Elements) > 0 {
				ev.add("%s: its largest update differences with rounding-level moments are at %s", d.Name, elemList(d.Elements, 5, "m"))
			}
			continue
		}
		ev.add("%s at %s: relative L2 %s; %d of %d elements have rounding-level gradients and carry %s of its update difference; its gradient RMS is %s of the step's gradient scale, its update RMS %s",
			d.Name, stepName(a.step), g(d.RelL2), d.NoisyElems, d.Count, pct(d.NoisyShare), g(d.GradRatio), g(d.UpdateRMS))
		if len(d.Elements) > 0 {
			ev.add("%s: its largest update differences with rounding-level gradients are at %s", d.Name, elemList(d.Elements, 5, "g"))
		}
	}
	return &Cause{ID: NoiseDrift, Confidence: 0.9, Evidence: ev}
}

// elemList names up to n elements as "[13] (|g| < 2^-17, Δu 0.0039)",
// "no gradient" for the NoGrad bin; sym names what bins them (g, or m for
// an optimizer's moment standing in for the gradient).
func elemList(es []compare.UpdateElem, n int, sym string) string {
	var parts []string
	for _, e := range es[:min(n, len(es))] {
		grad := "no gradient"
		if e.Exp != compare.NoGrad {
			grad = fmt.Sprintf("|%s| < 2^%d", sym, e.Exp)
		}
		parts = append(parts, fmt.Sprintf("%s (%s, Δu %s)", strings.ReplaceAll(fmt.Sprint(e.Index), " ", ","), grad, g(e.D)))
	}
	return strings.Join(parts, ", ")
}

func pct(x float64) string { return g(100*x) + "%" }
