package judge

import (
	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// Status is the outcome for one tensor pair.
type Status string

// The statuses. Every status but StatusMatch counts against the verdict.
const (
	StatusMatch         Status = "match"
	StatusMismatch      Status = "mismatch"       // compared, and beyond the thresholds
	StatusMissing       Status = "missing"        // only in the first run
	StatusExtra         Status = "extra"          // only in the second run
	StatusShapeMismatch Status = "shape_mismatch" // shapes differ: not compared
	StatusDTypeMismatch Status = "dtype_mismatch" // dtypes differ (compared when both are real or both complex)
	StatusError         Status = "error"          // could not be read; see Err
)

// Verdict is the outcome of a whole comparison.
type Verdict string

// The verdicts: error when some pair could not be checked (the others are
// still reported), else fail when some pair did not match, else pass.
const (
	Pass  Verdict = "pass"
	Fail  Verdict = "fail"
	Error Verdict = "error"
)

// Pair is one tensor pair as the comparison measured it: what the rules
// judge (Tensor, Step). A value, holding no file handle.
type Pair struct {
	Name string
	Step int
	Kind loaders.Kind
	// A and B describe the two runs' tensors; nil for a missing (B) or
	// extra (A) tensor.
	A, B     *loaders.Meta
	Settings tolerances.Settings
	// Metrics are nil when the pair was not compared.
	Metrics *compare.Metrics
	// Noise compares the first run with the baseline run, when one was
	// given and holds this tensor.
	Noise *compare.Metrics
	// Update is how far each run moved a parameter since its previous
	// dumped step (nil for other kinds, and for a parameter without a
	// previous step in both runs); Step judges parameters by it.
	Update *compare.Update
	// Decode is set on the token pair of a decoding step (integers)
	// and on its logits, measured together (compare.MeasureDecode): Step
	// judges the tokens by the near-tie rule (decideTokens); the logits'
	// Metrics are then those over the rows that had not parted, masks left
	// out (compare.Decode.LogitsMetrics).
	Decode *compare.Decode
	// Masked counts the masks left out of Metrics (compare.Unmasked):
	// elements equal in both runs at half their dtype's largest finite
	// value or more; 0 when none were.
	Masked int64
}

// TensorResult is the result of one tensor pair: the pair as measured and
// the decision on it, made once (by the rules for a compared pair, by
// what could be read for the others) and not changed after.
type TensorResult struct {
	Pair
	// Decision holds the status, the thresholds applied and, for a pair
	// that did not match, why.
	Decision
	// Err is set for StatusError.
	Err error
}

// Failed reports whether the pair counts against the verdict.
func (t *TensorResult) Failed() bool { return t.Status != StatusMatch }

// Diverged reports whether the pair's numbers differ (as opposed to a
// tensor missing from one run or unreadable).
func (t *TensorResult) Diverged() bool {
	switch t.Status {
	case StatusMismatch, StatusShapeMismatch, StatusDTypeMismatch:
		return true
	}
	return false
}

// Result is a finished comparison of two runs.
type Result struct {
	// A and B are the paths of the reference and the compared run;
	// BaselineRun the baseline run's, "" without one.
	A, B        string
	BaselineRun string
	// Renamed are the renames the reference run's (and the baseline's)
	// tensor names were mapped by before pairing (compare --rename), in
	// the order given; nil for none. The pairs carry the names after them.
	Renamed []loaders.Rename
	Verdict Verdict
	// FirstDivergence is the first pair whose numbers differ, or that only
	// one run holds: the earliest
	// step, and within it the first tensor in kind order (loss, grads,
	// params, inputs, outputs, others); tensors outside any step come after
	// all steps. Nil when none differs.
	FirstDivergence *TensorResult
	// FirstModule is where in the model the runs part at the first
	// divergent step, from tapped activations (FirstModule); ModulesAgree
	// says instead that every tapped module agrees there. Both nil
	// without taps at that step.
	FirstModule  *ModuleDeparture
	ModulesAgree *ModulesAgree
	// Taps are the tapped modules in forward order, as the reference run's
	// manifest (else the compared run's) gives them; nil without taps.
	Taps []loaders.TapModule
	// Tensors are all compared, missing, extra and unreadable pairs, in
	// step, kind and name order.
	Tensors []*TensorResult
	// Ignored are the pairs a policy told to ignore.
	Ignored []*TensorResult
	// Errors are the inputs that could not be read and belong to no pair
	// (a directory, a container that cannot be opened, a file only one run
	// has); an unreadable pair's error is its Err. AllErrors lists both.
	Errors []error
	// StoppedAfterStep is set when --fail-fast stopped the comparison after
	// a failing step; NotCompared pairs of later steps were not looked at.
	StoppedAfterStep *int
	NotCompared      int
	// Precision is the arithmetic the comparison assumed: the compute
	// dtype given (options or manifests), the model's dtype and the
	// working epsilon the run-level rules are in units of.
	Precision tolerances.Precision
	// Rules are the run-level rules the steps were judged by.
	Rules tolerances.RunRules
	// Steps are the facts each step was judged with (Step), in step order,
	// step-less pairs last.
	Steps []StepFacts
	// Shard is the part of the pairs compared (see loaders.Shard); zero
	// for all.
	Shard loaders.Shard
	// NothingCompared, when set, says what was empty: no pair of the
	// comparison had its numbers compared, so its verdict is Error, never
	// Pass (a broken dump script must not turn a gate green).
	NothingCompared string
}

// NothingCompared reports whether a comparison whose verdict is v, over
// the pairs tensors, compared no pair's numbers while passing: its verdict
// is then Error, never Pass (a broken dump script must not turn a gate
// green). Shards are left alone: a shard may hold no pair; the merge of
// all of them may not.
func NothingCompared(v Verdict, tensors []*TensorResult, shard loaders.Shard) bool {
	if v != Pass || shard.Count > 0 {
		return false
	}
	for _, t := range tensors {
		if t.Metrics != nil {
			return false
		}
	}
	return true
}

// AllErrors returns every input that could not be read: Errors, then the
// errors of the unreadable pairs in pair order.
func (r *Result) AllErrors() []error {
	all := append([]error(nil), r.Errors...)
	for _, t := range r.Tensors {
		if t.Status == StatusError && t.Err != nil {
			all = append(all, t.Err)
		}
	}
	return all
}
