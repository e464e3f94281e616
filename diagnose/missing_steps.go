package diagnose

import (
	"fmt"
	"sort"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// MissingSteps is the ID of the cause "one run has steps the other lacks".
const MissingSteps = "missing_steps"

// missingStepsCause is what `graphdiff explain missing_steps` prints.
var missingStepsCause = Explanation{
	ID:    MissingSteps,
	Title: "one run has steps the other lacks (a run cut short, or a dump that stopped)",
	What: `Whole steps are dumped by one run and not the other: the graphed run stopped
early (a crash, a time limit, a shorter loop), its dump stopped, or the two
runs dumped at different steps. This is no difference in the numbers; the
steps both runs have are judged as usual.`,
	Signature: `Every tensor of some steps is missing from one run; a loss curve stored as
one array is shorter by as many values.`,
	Confirm: `Count the step directories of each run, and read the graphed run's log for
an early exit.`,
	Fix: `Run both for the same number of steps and dump the same steps, or compare
the common steps only (remove the extra steps from the longer run's dump).`,
}

// missingSteps: steps at which every pair is missing from one run (or
// extra in it). 0.9 when every other failing pair is a step-less one whose
// shapes differ only in their first dimension (a loss curve of another
// length); 0.7 when other pairs fail too, which the other detectors then
// explain.
//
// Prediction: one run stopped (or was cut) early: whole steps exist in one
// run only, and what both hold agrees.
func missingSteps(f *facts) *Cause {
	type tally struct{ pairs, missing, extra int }
	bySteps := map[int]*tally{}
	for _, t := range f.r.Tensors {
		if t.Step == loaders.NoStep {
			continue
		}
		tl := bySteps[t.Step]
		if tl == nil {
			tl = &tally{}
			bySteps[t.Step] = tl
		}
		tl.pairs++
		switch t.Status {
		case judge.StatusMissing:
			tl.missing++
		case judge.StatusExtra:
			tl.extra++
		}
	}
	var onlyA, onlyB []int
	for k, tl := range bySteps {
		switch {
		case tl.missing == tl.pairs:
			onlyA = append(onlyA, k)
		case tl.extra == tl.pairs:
			onlyB = append(onlyB, k)
		}
	}
	if len(onlyA) == 0 && len(onlyB) == 0 {
		return nil
	}
	sort.Ints(onlyA)
	sort.Ints(onlyB)
	gone := map[int]bool{}
	for _, k := range append(append([]int{}, onlyA...), onlyB...) {
		gone[k] = true
	}
	others := 0
	for _, t := range f.r.Tensors {
		if !t.Failed() || gone[t.Step] || (t.Step == loaders.NoStep && curveLength(t)) {
			continue
		}
		others++
	}
	var ev evidence
	if len(onlyA) > 0 {
		ev.add("%s: every tensor of %s is only in the reference run", stepRange(onlyA), plural(len(onlyA), "this step", "these steps"))
	}
	if len(onlyB) > 0 {
		ev.add("%s: every tensor of %s is only in the compared run", stepRange(onlyB), plural(len(onlyB), "this step", "these steps"))
	}
	conf := 0.9
	if others > 0 {
		conf = 0.7
		ev.add("%d other pairs fail as well: see the other causes", others)
	} else {
		ev.add("the steps both runs have agree")
	}
	return &Cause{ID: MissingSteps, Confidence: conf, Evidence: ev}
}

// curveLength reports whether a step-less pair's shapes differ only in
// their first dimension (a curve stored as one array, of another length).
func curveLength(t *judge.TensorResult) bool {
	if t.Status != judge.StatusShapeMismatch || t.A == nil || t.B == nil || len(t.A.Shape) != len(t.B.Shape) || len(t.A.Shape) == 0 {
		return false
	}
	for i := 1; i < len(t.A.Shape); i++ {
		if t.A.Shape[i] != t.B.Shape[i] {
			return false
		}
	}
	return true
}

// stepRange names a sorted list of steps: "step 7", "steps 7 to 9",
// "steps 3, 5, 8".
func stepRange(ks []int) string {
	switch {
	case len(ks) == 1:
		return fmt.Sprintf("step %d", ks[0])
	case ks[len(ks)-1]-ks[0] == len(ks)-1:
		return fmt.Sprintf("steps %d to %d", ks[0], ks[len(ks)-1])
	}
	return "steps " + steps(ks)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
