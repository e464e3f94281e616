package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
)

// CompareJSON is the JSON form of a comparison, the contract that scripts
// and CI read:
//
//	verdict            "pass", "fail" or "error" (some pair could not be checked)
//	a, b               the reference and the compared run, as given
//	first_divergence   {"step", "tensor", "kind", "reasons"} of the first pair
//	                   whose numbers differ, or null
//	causes             likely causes {"id", "confidence", "evidence", "fix"},
//	                   highest confidence first; on a pass at most
//	                   precision_noise (the differences are rounding)
//	warnings           structured differences inside the thresholds (same
//	                   fields as causes); they fail the verdict only with --strict
//	summary            counts of pairs by status, which add up:
//	                   pairs = match + mismatch + shape_mismatch +
//	                   dtype_mismatch + missing + extra + errors + ignored +
//	                   not_compared, and discovered = pairs +
//	                   unreadable_inputs; compared counts the pairs whose
//	                   values were compared (some dtype mismatches are)
//	tensors            every pair but the ignored, in step, kind, name order
//	ignored            pairs a policy excluded, {"name", "step"}
//	errors             inputs that could not be read, {"path", "member", "message"}
//	stopped_after_step set when --fail-fast stopped early, else null
//	curve              the loss-curve analysis (see CurveJSON) when both runs
//	                   hold a loss curve; it does not change the verdict
//	compute_dtype      the compute dtype assumed (--compute-dtype or the
//	                   manifests), absent when none
//	shard              {"index", "count", "strict", "model_dtype", "rules"} for
//	                   one shard of a sharded comparison (--shard I/N), else
//	                   absent; only shard 1 reports discovery errors and the
//	                   curve, and its pairs carry "partial" sums for merge
//	steps              the facts each step was judged with (see StepJSON)
//	baseline_identical true when --baseline equals the reference bit for bit
//	                   on every tensor (it measured nothing), else absent
//	baseline           how --baseline served (see BaselineJSON), absent
//	                   without one
//	model_dtype_from_values true when float32 files held bfloat16 values and
//	                   the run was judged as a bfloat16 model, else absent
//	renames            tensors the runs seem to hold under two names, each
//	                   {"reference", "other", "kind", "shape", "dtype",
//	                   "steps", "rename", "hint"}: their pairs stay missing
//	                   and extra, and no cause is diagnosed from them;
//	                   absent when none
//	first_module       where in the model the runs part at the first
//	                   divergent step, from tapped activations (see
//	                   FirstModuleJSON); absent without taps there
//	taps               the tapped modules in forward order, each {"name",
//	                   "type"}, as the reference run's manifest (else the
//	                   other's) gives them; absent without taps
//	renamed            the --rename values (OLD=NEW) the reference run's
//	                   names were mapped by before pairing, in the order
//	                   given; absent when none. merge refuses shards
//	                   compared with others, and applies them when it
//	                   reads the runs again
//
// Each tensor has name, step (null outside any step), kind, status
// (match, mismatch, missing, extra, shape_mismatch, dtype_mismatch, error),
// dtype and shape (the first run's, or the second's for an extra tensor),
// dtype_b and shape_b when they differ, files, limits, judged_by (the
// rule that decided a compared pair, see JudgedJSON), metrics (see
// MetricsJSON; null when not compared), noise (with --baseline), reasons
// and error.
//
// Numbers are JSON numbers, except that a metric that does not exist is
// null (the cosine of a zero vector with a non-zero one) and an infinite
// one is the string "inf" or "-inf" (max_rel where the reference is 0).
type CompareJSON struct {
	Verdict         string          `json:"verdict"`
	A               string          `json:"a"`
	B               string          `json:"b"`
	FirstDivergence *DivergenceJSON `json:"first_divergence"`
	Causes          []CauseJSON     `json:"causes"`
	Warnings        []CauseJSON     `json:"warnings"`
	// Unexplained is set on a failing comparison no cause was named for
	// (diagnose.Unexplained).
	Unexplained      *UnexplainedJSON `json:"unexplained,omitempty"`
	Summary          SummaryJSON      `json:"summary"`
	Tensors          []TensorJSON     `json:"tensors"`
	Ignored          []NameStepJSON   `json:"ignored"`
	Errors           []ErrorJSON      `json:"errors"`
	StoppedAfterStep *int             `json:"stopped_after_step"`
	// NothingCompared says what was empty when no pair was compared (the
	// verdict is then "error").
	NothingCompared string     `json:"nothing_compared,omitempty"`
	Curve           *CurveJSON `json:"curve,omitempty"`
	ComputeDType    string     `json:"compute_dtype,omitempty"`
	Shard           *ShardJSON `json:"shard,omitempty"`
	Steps           []StepJSON `json:"steps"`
	// BaselineIdentical is true when a baseline was given and equals the
	// reference bit for bit on every tensor: it measured nothing.
	BaselineIdentical bool          `json:"baseline_identical,omitempty"`
	Baseline          *BaselineJSON `json:"baseline,omitempty"`
	// ModelDTypeFromValues is true when the gradients and parameters are
	// float32 files holding bfloat16 values (their low 16 bits zero) and
	// the run was judged as a bfloat16 model
	// (tolerances.Precision.ModelFromValues).
	ModelDTypeFromValues bool `json:"model_dtype_from_values,omitempty"`
	// ComputeDTypeFromValues is true when no flag or manifest gave the
	// compute dtype and the dumps showed autocast (outputs in a 16-bit
	// dtype, or float32 gradients holding bfloat16 values, beside float32
	// parameters): the run was judged in compute_dtype
	// (tolerances.Precision.ComputeFromValues).
	ComputeDTypeFromValues bool `json:"compute_dtype_from_values,omitempty"`

	// Renames are the tensors the runs seem to hold under two names
	// (see RenameJSON), absent when none.
	Renames []RenameJSON `json:"renames,omitempty"`
	// Renamed are the --rename values the comparison was made with
	// (judge.Result.Renamed), as OLD=NEW, absent when none.
	Renamed []string `json:"renamed,omitempty"`
	// FirstModule is where in the model the runs part (see
	// FirstModuleJSON), absent without tapped activations at the first
	// divergent step.
	FirstModule *FirstModuleJSON `json:"first_module,omitempty"`
	// Taps are the tapped modules in forward order (judge.Result.Taps).
	Taps []loaders.TapModule `json:"taps,omitempty"`
}

// FirstModuleJSON is judge.FirstModule's answer: at step, the first
// tapped module in forward order whose output departs while its input's
// agrees (module, its type, index in forward order, input: the tapped
// module before it, "" for the first), or, with backward, the first in
// backward order whose gradient departs; with agree true instead, every
// one of the modules tapped at the step agrees (the runs part after the
// passes the taps saw).
type FirstModuleJSON struct {
	Step     int    `json:"step"`
	Module   string `json:"module,omitempty"`
	Type     string `json:"type,omitempty"`
	Index    int    `json:"index"`
	Backward bool   `json:"backward,omitempty"`
	Input    string `json:"input,omitempty"`
	Tensor   string `json:"tensor,omitempty"`
	// BelowLimit: no tapped output or gradient is beyond its limit at the
	// step; module is the first whose output differs at all after one
	// that agrees bit for bit (judge.ModuleDeparture.BelowLimit).
	BelowLimit bool `json:"below_limit,omitempty"`
	Agree      bool `json:"agree,omitempty"`
	Modules    int  `json:"modules,omitempty"`
}

// BaselineJSON is how the baseline run served a comparison
// (judge.BaselineUse): its path, how many of the compared pairs it held
// (paired of compared), whether it equals the reference bit for bit, and
// the steps at which it was farther from the reference than 3× the
// compared run (farther_steps: its noise was not used there), with the
// RMS relative L2 errors of the baseline and of the compared run at the
// first of them.
type BaselineJSON struct {
	Path         string `json:"path"`
	Paired       int    `json:"paired"`
	Compared     int    `json:"compared"`
	Identical    bool   `json:"identical"`
	FartherSteps []int  `json:"farther_steps"`
	FartherRel   Float  `json:"farther_rel"`
	RunRel       Float  `json:"run_rel"`
}

// StepJSON is the facts the run-level rules judged one step with (see
// judge.Step): the working epsilon and the limits it sets, the gradient
// scale and the worst gradient against it (worst_grad_ratio: RMS(Δg) over
// max(RMS(g), grad_scale)), the largest such ratio of the steps before
// (prior_drift), the update ratio β over
// elements with gradients at or above healthy_floor, and the parameters
// whose differences pass as drift the gradients and the optimizer
// explain. update_ratio is null when no update was measured (a first
// step, or no parameters dumped). A step that dumped no gradients but
// the optimizer's moments that carry them has moments (their number) and
// moment_scale (their RMS), and its healthy_floor is in the moments'
// units; both are absent otherwise.
type StepJSON struct {
	Step           *int        `json:"step"`
	Status         string      `json:"status"`
	Epsilon        Float       `json:"epsilon"`
	GradScale      Float       `json:"grad_scale"`
	Grads          int         `json:"grads"`
	WorstGrad      string      `json:"worst_grad,omitempty"`
	WorstGradRatio Float       `json:"worst_grad_ratio"`
	PriorDrift     Float       `json:"prior_drift"`
	GradRel        Float       `json:"grad_rel"`
	UpdateFloor    Float       `json:"update_floor"`
	RectShift      Float       `json:"rect_shift,omitempty"`
	LossRel        Float       `json:"loss_rel"`
	OutputRel      Float       `json:"output_rel"`
	Resolution     Float       `json:"update_resolution"`
	GradLimit      Float       `json:"grad_limit"`
	HealthyFloor   Float       `json:"healthy_floor"`
	Moments        int         `json:"moments,omitempty"`
	MomentScale    Float       `json:"moment_scale,omitempty"`
	UpdateRatio    Float       `json:"update_ratio"`
	UpdateElements int64       `json:"update_elements"`
	UpdateLimit    Float       `json:"update_limit"`
	LossLimit      Float       `json:"loss_limit"`
	OutputLimit    Float       `json:"output_limit"`
	Drift          []DriftJSON `json:"drift"`
	// State lists the state tensors failed for updates that are the
	// reference run's times a factor (judge.StateFit); absent when none.
	State []StateFitJSON `json:"state,omitempty"`
	// Flips lists the decoding rows whose greedy tokens differ
	// (judge.FlipFact); absent when none.
	Flips []FlipJSON `json:"flips,omitempty"`
	// BaselinePairs, BaselineRel, RunRel and BaselineUnused are the
	// baseline's facts (judge.StepFacts), absent without a baseline pair.
	BaselinePairs  int      `json:"baseline_pairs,omitempty"`
	BaselineRel    *Float   `json:"baseline_rel,omitempty"`
	RunRel         *Float   `json:"run_rel,omitempty"`
	BaselineUnused bool     `json:"baseline_unused,omitempty"`
	Reasons        []string `json:"reasons"`
}

// DriftJSON is a parameter whose difference passed as drift (judge.Drift).
type DriftJSON struct {
	Name          string `json:"name"`
	RelL2         Float  `json:"rel_l2"`
	NoisyElements int64  `json:"noisy_elements"`
	Count         int64  `json:"count"`
	NoisyShare    Float  `json:"noisy_share"`
	GradRatio     Float  `json:"grad_ratio"`
	UpdateRMS     Float  `json:"update_rms"`
	// Elements are the noisy elements of largest update difference.
	Elements []UpdateElemJSON `json:"elements"`
	// Unmeasured is true for a parameter without a measured update (no
	// previous step dumped alike) that passed because every gradient of
	// its step agrees (judge.Drift.Unmeasured).
	Unmeasured bool `json:"unmeasured,omitempty"`
	// State is true for derived state (a buffer, EMA weights, optimizer
	// state) that passed because every gradient of its step agrees and
	// its updates fit no factor (judge.Drift.State).
	State bool `json:"state,omitempty"`
}

// StateFitJSON is a state tensor whose updates fit a factor
// (judge.StateFit): beta = factor − 1, explained the share of the update
// difference it explains, chance that share's probability from noise,
// limit the |beta| rounding and the gradients explain.
type StateFitJSON struct {
	Name      string `json:"name"`
	Count     int64  `json:"count"`
	Beta      Float  `json:"beta"`
	Explained Float  `json:"explained"`
	Chance    Float  `json:"chance"`
	Limit     Float  `json:"limit"`
}

// UnexplainedJSON is diagnose.Unexplained: where the runs part (step,
// the pair first departing, and where: "first dumped step", "first
// replay" or "later"), the causes that part runs there in ways the dumps
// cannot test, and the dumps that would tell.
type UnexplainedJSON struct {
	Step        int      `json:"step"`
	Name        string   `json:"name"`
	Where       string   `json:"where"`
	Candidates  []string `json:"candidates"`
	WouldDecide []string `json:"would_decide"`
}

// FlipJSON is a row of a decoding step whose tokens differ
// (judge.FlipFact): gap_a = ℓ_A[token_a] − ℓ_A[token_b], gap_b likewise in
// run B, limit the gap a near tie may have; near_tie whether both are
// within it (the row is then compared no further).
type FlipJSON struct {
	Name    string `json:"name"`
	Row     int    `json:"row"`
	TokenA  int64  `json:"token_a"`
	TokenB  int64  `json:"token_b"`
	GapA    Float  `json:"gap_a"`
	GapB    Float  `json:"gap_b"`
	Limit   Float  `json:"limit"`
	NearTie bool   `json:"near_tie"`
}

// UpdateElemJSON is one element of a parameter's update
// (compare.UpdateElem): its index, the octave of its reference gradient
// (exp: |g| in [2^(exp−1), 2^exp); -2147483648 for none) and its update
// difference u_B − u_A.
type UpdateElemJSON struct {
	Index   []int `json:"index"`
	GradExp int   `json:"grad_exp"`
	Diff    Float `json:"diff"`
}

func updateElemsJSON(es []compare.UpdateElem) []UpdateElemJSON {
	out := make([]UpdateElemJSON, 0, len(es))
	for _, e := range es {
		out = append(out, UpdateElemJSON{Index: e.Index, GradExp: e.Exp, Diff: Float(e.D)})
	}
	return out
}

// PartialJSON carries, in a shard's report only, what merge needs to
// judge the shard's pairs together with the other shards' (judge.Step):
// the norms behind the metrics and a parameter's update sums.
//
// Masked and Decode carry what the shard measured with the pair's whole
// step in hand: the masks left out of its metrics (judge.Pair.Masked), and
// on a decoding step's token and logits pairs the decoding measured
// (judge.Pair.Decode), which the step's verdict reads again.
type PartialJSON struct {
	NormA    Float       `json:"norm_a"`
	NormDiff Float       `json:"norm_diff"`
	Update   *UpdateJSON `json:"update,omitempty"`
	Masked   int64       `json:"masked,omitempty"`
	Decode   *DecodeJSON `json:"decode,omitempty"`
}

// DecodeJSON is a decoding step as a shard measured it (compare.Decode):
// its rows (sequences), vocabulary, the rows left out because their
// sequence had parted at an earlier step, each row whose tokens differ
// (flips: the two tokens, each run's gap between them and the logits'
// scale), the logits compared and the masks left out of them, and whether
// every logit is a bfloat16 value.
type DecodeJSON struct {
	Rows        int              `json:"rows"`
	Vocab       int              `json:"vocab"`
	Parted      int              `json:"parted"`
	Flips       []DecodeFlipJSON `json:"flips"`
	LogitsCount int64            `json:"logits_count"`
	Masked      int64            `json:"masked"`
	BFloat16    bool             `json:"bfloat16"`
	// TokensA, TokensB: every row's token in each run; LogitsA, LogitsB:
	// every row's logits' fingerprint (compare.RowPrint), in hexadecimal.
	TokensA []int64  `json:"tokens_a"`
	TokensB []int64  `json:"tokens_b"`
	LogitsA []string `json:"logits_a"`
	LogitsB []string `json:"logits_b"`
}

// DecodeFlipJSON is one compare.Flip.
type DecodeFlipJSON struct {
	Row    int   `json:"row"`
	TokenA int64 `json:"token_a"`
	TokenB int64 `json:"token_b"`
	GapA   Float `json:"gap_a"`
	GapB   Float `json:"gap_b"`
	Scale  Float `json:"scale"`
}

// UpdateJSON is a parameter's update sums (compare.Update); exp is
// -2147483648 for the bin of elements without a usable gradient.
type UpdateJSON struct {
	Count  int64 `json:"count"`
	MovedA int64 `json:"moved_a"`
	MovedB int64 `json:"moved_b"`
	// UlpMovedA and UlpMovedB are compare.Update's: elements moved in one
	// run only, by at most one unit in the last place.
	UlpMovedA int64            `json:"ulp_moved_a,omitempty"`
	UlpMovedB int64            `json:"ulp_moved_b,omitempty"`
	Bins      []UpdateBinJSON  `json:"bins"`
	Worst     []UpdateElemJSON `json:"worst"`
}

// UpdateBinJSON is one octave of an UpdateJSON (compare.UpdateBin).
type UpdateBinJSON struct {
	Exp int   `json:"exp"`
	N   int64 `json:"n"`
	UU  Float `json:"uu"`
	DU  Float `json:"du"`
	DD  Float `json:"dd"`
	PU  Float `json:"pu"`
}

// ShardJSON says which shard of a sharded comparison a report holds, and
// whether it was made with --strict (so that merge applies the same rule).
type ShardJSON struct {
	Index  int  `json:"index"`
	Count  int  `json:"count"`
	Strict bool `json:"strict"`
	// ModelDType and Rules are what the shard's steps were judged with,
	// so that merge judges the whole run the same way.
	ModelDType string       `json:"model_dtype,omitempty"`
	Rules      RunRulesJSON `json:"rules"`
}

// RunRulesJSON are the run-level rules (tolerances.RunRules).
type RunRulesJSON struct {
	Grad       float64 `json:"grad"`
	GradGrowth float64 `json:"grad_growth"`
	Update     float64 `json:"update"`
	Loss       float64 `json:"loss"`
	Output     float64 `json:"output"`
}

// DivergenceJSON locates the first divergence.
type DivergenceJSON struct {
	Step    *int     `json:"step"`
	Tensor  string   `json:"tensor"`
	Kind    string   `json:"kind"`
	Reasons []string `json:"reasons"`
}

// CauseJSON is a likely cause of a failure.
type CauseJSON struct {
	ID         string   `json:"id"`
	Confidence float64  `json:"confidence"`
	Evidence   []string `json:"evidence"`
	Fix        string   `json:"fix"`
	// Fit is how much of the graphed run's difference from the
	// reference the cause's prediction removes (diagnose.Cause.Fit), over
	// FitSteps steps; both absent where the prediction was not tested on
	// numbers.
	Fit      *float64 `json:"fit,omitempty"`
	FitSteps int      `json:"fit_steps,omitempty"`
}

// SummaryJSON counts pairs by outcome.
type SummaryJSON struct {
	Pairs         int `json:"pairs"`
	Compared      int `json:"compared"`
	Match         int `json:"match"`
	Mismatch      int `json:"mismatch"`
	ShapeMismatch int `json:"shape_mismatch"`
	DTypeMismatch int `json:"dtype_mismatch"`
	Missing       int `json:"missing"`
	Extra         int `json:"extra"`
	Errors        int `json:"errors"`
	Ignored       int `json:"ignored"`
	NotCompared   int `json:"not_compared"`
	// UnreadableInputs are files (or containers) that could not be read
	// and name no tensor, so belong to no pair; Discovered is Pairs plus
	// UnreadableInputs: everything the runs held.
	UnreadableInputs int `json:"unreadable_inputs"`
	Discovered       int `json:"discovered"`
	// DTypeChanged counts the compared pairs whose sides are stored in
	// different dtypes (compared in the coarser; not a status: they are
	// also counted by their outcome).
	DTypeChanged int `json:"dtype_changed"`
}

// NameStepJSON names a pair.
type NameStepJSON struct {
	Name string `json:"name"`
	Step *int   `json:"step"`
	Kind string `json:"kind"`
}

// TensorJSON is one pair.
type TensorJSON struct {
	Name    string       `json:"name"`
	Step    *int         `json:"step"`
	Kind    string       `json:"kind"`
	Status  string       `json:"status"`
	DType   string       `json:"dtype"`
	DTypeB  string       `json:"dtype_b,omitempty"`
	Shape   []int        `json:"shape"`
	ShapeB  []int        `json:"shape_b,omitempty"`
	FileA   string       `json:"file_a,omitempty"`
	FileB   string       `json:"file_b,omitempty"`
	Moment  *MomentJSON  `json:"moment,omitempty"`
	Limits  *LimitsJSON  `json:"limits,omitempty"`
	Judged  *JudgedJSON  `json:"judged_by,omitempty"`
	Metrics *MetricsJSON `json:"metrics"`
	Noise   *NoiseJSON   `json:"noise,omitempty"`
	Reasons []string     `json:"reasons,omitempty"`
	Error   string       `json:"error,omitempty"`
	Partial *PartialJSON `json:"partial,omitempty"`
}

// MomentJSON is what a tensor of an optimizer's state is, in both runs
// alike (loaders.Moment): its member of the state (exp_avg, exp_avg_sq,
// ...), how it carries the gradient where the rule is known (m_k =
// decay·m_{k−1} + gain·g_k; 0 and 0 where not), and the pair of the
// parameter it belongs to (param, "" where the file did not tell): where
// a step dumped no gradients, such moments stand in for them in the
// verdict (judge.StepFacts.MomentScale).
type MomentJSON struct {
	State string `json:"state"`
	Decay Float  `json:"decay"`
	Gain  Float  `json:"gain"`
	Param string `json:"param"`
}

// momentJSON returns m as a report says it, nil for a tensor that is no
// optimizer state (no member).
func momentJSON(m loaders.Moment) *MomentJSON {
	if m.State == "" {
		return nil
	}
	return &MomentJSON{State: m.State, Decay: Float(m.Decay), Gain: Float(m.Gain), Param: m.Param}
}

// LimitsJSON are the tolerance and thresholds a pair was judged by.
type LimitsJSON struct {
	CompareDType        string `json:"compare_dtype"`
	RTol                Float  `json:"rtol"`
	ATol                Float  `json:"atol"`
	MaxRelL2            Float  `json:"max_rel_l2"`
	MaxMismatchFraction Float  `json:"max_mismatch_fraction"`
	// PerTensor is true when a policy rule or an override set the
	// thresholds: the pair was judged alone by them.
	PerTensor bool `json:"per_tensor,omitempty"`
	// FailOnDTypeChange is true when a dtype change fails the pair.
	FailOnDTypeChange bool `json:"fail_on_dtype_change,omitempty"`
}

// JudgedJSON is what decided a compared pair (judge.Decision): the rule
// (judge.Rule: "gradient RMS ratio", "update ratio", "relative L2", ...),
// the measure it compared, the limit it compared it with, and ratio =
// measure/limit (judge.Decision.Ratio), the error over its limit that the
// HTML, Markdown and JUnit reports show: at most 1 for a pair that passed,
// 1 or more for one that failed by its numbers.
type JudgedJSON struct {
	Rule    string `json:"rule"`
	Measure Float  `json:"measure"`
	Limit   Float  `json:"limit"`
	Ratio   Float  `json:"ratio"`
}

// NoiseJSON is the first run against the baseline run.
type NoiseJSON struct {
	RelL2            Float `json:"rel_l2"`
	Count            int64 `json:"count"`
	Mismatched       int64 `json:"mismatched"`
	MismatchFraction Float `json:"mismatch_fraction"`
	MaxAbs           Float `json:"max_abs"`
}

// Float is a float64 that JSON-encodes NaN as null and ±Inf as "inf" and
// "-inf".
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) { return appendFloat(nil, f), nil }

// NewCompareJSON builds the JSON form of a comparison.
func NewCompareJSON(r *outcome.Comparison) CompareJSON {
	out := compareJSONHead(r)
	for _, t := range r.Tensors {
		out.Tensors = append(out.Tensors, tensorJSON(t, r.Shard.Count > 0))
	}
	return out
}

// compareJSONHead is NewCompareJSON without the tensors.
func compareJSONHead(r *outcome.Comparison) CompareJSON {
	out := CompareJSON{
		Verdict: string(r.Verdict), A: r.A, B: r.B,
		Causes: causesJSON(r.Causes), Warnings: causesJSON(r.Warnings),
		Tensors: []TensorJSON{}, Ignored: []NameStepJSON{}, Errors: errorsJSON(r.AllErrors()),
		StoppedAfterStep: r.StoppedAfterStep,
		NothingCompared:  r.NothingCompared,
	}
	out.Renames = renamesJSON(r.Renames)
	for _, rn := range r.Renamed {
		out.Renamed = append(out.Renamed, rn.String())
	}
	out.Taps = r.Taps
	if m := r.FirstModule; m != nil {
		out.FirstModule = &FirstModuleJSON{Step: m.Step, Module: m.Module.Name, Type: m.Module.Type, Index: m.Index,
			Backward: m.Backward, Input: m.Input, Tensor: m.Pair.Name, BelowLimit: m.BelowLimit}
	} else if a := r.ModulesAgree; a != nil {
		out.FirstModule = &FirstModuleJSON{Step: a.Step, Agree: true, Modules: a.Modules, Index: -1}
	}
	if u := r.Unexplained; u != nil {
		out.Unexplained = &UnexplainedJSON{Step: u.Step, Name: u.Name, Where: u.Where,
			Candidates: append([]string{}, u.Candidates...), WouldDecide: append([]string{}, u.Dumps...)}
	}
	if d := r.FirstDivergence; d != nil {
		out.FirstDivergence = &DivergenceJSON{Step: stepPtr(d.Step), Tensor: d.Name, Kind: string(d.Kind), Reasons: d.Reasons}
	}
	out.Summary = summarize(r.Result)
	if r.Precision.Compute != loaders.Invalid {
		out.ComputeDType = r.Precision.Compute.String()
	}
	if s := r.Shard; s.Count > 0 {
		out.Shard = &ShardJSON{Index: s.Index, Count: s.Count, Strict: r.Strict,
			Rules: RunRulesJSON{Grad: r.Rules.Grad, GradGrowth: r.Rules.GradGrowth, Update: r.Rules.Update, Loss: r.Rules.Loss, Output: r.Rules.Output}}
		if r.Precision.Model != loaders.Invalid {
			out.Shard.ModelDType = r.Precision.Model.String()
		}
	}
	out.ModelDTypeFromValues = r.Precision.ModelFromValues
	out.ComputeDTypeFromValues = r.Precision.ComputeFromValues
	if u := r.Baseline; u != nil {
		out.BaselineIdentical = u.Identical
		out.Baseline = &BaselineJSON{Path: u.Path, Paired: u.Paired, Compared: u.Compared, Identical: u.Identical,
			FartherSteps: append([]int{}, u.Farther...), FartherRel: Float(u.FartherRel), RunRel: Float(u.RunRel)}
	}
	out.Steps = []StepJSON{}
	for _, f := range r.Steps {
		out.Steps = append(out.Steps, stepJSON(f))
	}
	if r.Curve != nil {
		c := NewCurveJSON(r.Curve)
		out.Curve = &c
	}
	for _, t := range r.Ignored {
		out.Ignored = append(out.Ignored, NameStepJSON{Name: t.Name, Step: stepPtr(t.Step), Kind: string(t.Kind)})
	}
	return out
}

func causesJSON(cs []diagnose.Cause) []CauseJSON {
	out := []CauseJSON{}
	for _, c := range cs {
		cj := CauseJSON{ID: c.ID, Confidence: c.Confidence, Evidence: c.Evidence, Fix: c.Fix}
		if c.FitSteps > 0 {
			fit := math.Round(1000*c.Fit) / 1000
			cj.Fit, cj.FitSteps = &fit, c.FitSteps
		}
		out = append(out, cj)
	}
	return out
}

// dtypeChanged reports whether a compared pair's sides are stored in
// different dtypes (their effective dtypes, manifests' original ones
// where given).
func dtypeChanged(t *judge.TensorResult) bool {
	return t.A != nil && t.B != nil && t.A.Effective() != t.B.Effective()
}

func summarize(r *judge.Result) SummaryJSON {
	s := SummaryJSON{Ignored: len(r.Ignored), NotCompared: r.NotCompared}
	for _, t := range r.Tensors {
		if t.Metrics != nil {
			s.Compared++
			if dtypeChanged(t) {
				s.DTypeChanged++
			}
		}
		switch t.Status {
		case judge.StatusMatch:
			s.Match++
		case judge.StatusMismatch:
			s.Mismatch++
		case judge.StatusShapeMismatch:
			s.ShapeMismatch++
		case judge.StatusDTypeMismatch:
			s.DTypeMismatch++
		case judge.StatusMissing:
			s.Missing++
		case judge.StatusExtra:
			s.Extra++
		case judge.StatusError:
			s.Errors++
		}
	}
	s.Pairs = len(r.Tensors) + s.Ignored + s.NotCompared
	s.UnreadableInputs = len(r.Errors)
	s.Discovered = s.Pairs + s.UnreadableInputs
	return s
}

func stepJSON(f judge.StepFacts) StepJSON {
	s := StepJSON{Step: stepPtr(f.Step), Status: "pass", Epsilon: Float(f.Epsilon), GradScale: Float(f.GradScale),
		Grads: f.Grads, WorstGrad: f.WorstGrad, WorstGradRatio: Float(f.WorstGradRatio), PriorDrift: Float(f.PriorDrift), GradRel: Float(f.GradRel), UpdateFloor: Float(f.UpdateFloor), RectShift: Float(f.RectShift), LossRel: Float(f.LossRel), OutputRel: Float(f.OutputRel), Resolution: Float(f.Resolution), GradLimit: Float(f.GradLimit),
		HealthyFloor: Float(f.HealthyFloor), Moments: f.Moments, MomentScale: Float(f.MomentScale), UpdateRatio: Float(f.UpdateRatio), UpdateElements: f.UpdateElems,
		UpdateLimit: Float(f.UpdateLimit), LossLimit: Float(f.LossLimit), OutputLimit: Float(f.OutputLimit),
		Drift: []DriftJSON{}, Reasons: f.Reasons, BaselinePairs: f.BaselinePairs, BaselineUnused: f.BaselineUnused}
	if f.BaselinePairs > 0 {
		b, r := Float(f.BaselineRel), Float(f.RunRel)
		s.BaselineRel, s.RunRel = &b, &r
	}
	if len(f.Reasons) > 0 {
		s.Status = "fail"
	} else {
		s.Reasons = []string{}
	}
	for _, d := range f.Drift {
		s.Drift = append(s.Drift, DriftJSON{Name: d.Name, RelL2: Float(d.RelL2), NoisyElements: d.NoisyElems, Count: d.Count,
			NoisyShare: Float(d.NoisyShare), GradRatio: Float(d.GradRatio), UpdateRMS: Float(d.UpdateRMS), Elements: updateElemsJSON(d.Elements),
			Unmeasured: d.Unmeasured, State: d.State})
	}
	for _, x := range f.Flips {
		s.Flips = append(s.Flips, FlipJSON{Name: x.Name, Row: x.Row, TokenA: x.TokenA, TokenB: x.TokenB, GapA: Float(x.GapA),
			GapB: Float(x.GapB), Limit: Float(x.Limit), NearTie: x.NearTie})
	}
	for _, x := range f.State {
		s.State = append(s.State, StateFitJSON{Name: x.Name, Count: x.N, Beta: Float(x.Beta), Explained: Float(x.Explained),
			Chance: Float(x.Chance), Limit: Float(x.Limit)})
	}
	return s
}

// tensorJSON is the JSON form of pair t; partial adds the sums a shard's
// report carries for merge.
func tensorJSON(t *judge.TensorResult, partial bool) TensorJSON {
	return (*pairScratch)(nil).tensorJSON(t, partial)
}

// pairScratch is what a pair's JSON form points to (its step, shape and
// limits; its metrics are the pair's own) while an encoder lays pairs out one after another
// (marshalPairs): each form is written and dropped before the next is
// made, so one scratch serves every pair, which then allocates nothing:
// forms allocated pair by pair were most of the report's garbage
// (bench/README.md).
type pairScratch struct {
	step   int
	shape  []int
	limits LimitsJSON
	judged JudgedJSON
}

// tensorJSON is tensorJSON made in s, valid until s makes the next one; a
// nil s allocates.
func (s *pairScratch) tensorJSON(t *judge.TensorResult, partial bool) TensorJSON {
	out := TensorJSON{Name: t.Name, Kind: string(t.Kind), Status: string(t.Status), Reasons: t.Reasons}
	first, second := t.A, t.B
	if first == nil {
		first, second = t.B, nil
	}
	out.DType = first.DType.String()
	if s == nil {
		out.Step, out.Shape = stepPtr(t.Step), append([]int{}, first.Shape...)
	} else {
		if t.Step != loaders.NoStep {
			s.step, out.Step = t.Step, &s.step
		}
		s.shape = append(s.shape[:0], first.Shape...)
		out.Shape = s.shape
		if out.Shape == nil { // a scalar's first: [], not null
			out.Shape = []int{}
		}
	}
	if t.A != nil {
		out.FileA = entryFile(t.A)
	}
	if t.B != nil {
		out.FileB = entryFile(t.B)
	}
	if t.A != nil && t.B != nil && t.A.Moment == t.B.Moment {
		out.Moment = momentJSON(t.A.Moment)
	}
	if second != nil {
		if second.DType != first.DType {
			out.DTypeB = second.DType.String()
		}
		if !slices.Equal(second.Shape, first.Shape) {
			out.ShapeB = append([]int{}, second.Shape...)
		}
	}
	if t.Err != nil {
		out.Error = t.Err.Error()
	}
	if t.Metrics != nil {
		set := t.Settings
		limits := LimitsJSON{CompareDType: set.DType.String(), RTol: Float(set.RTol), ATol: Float(set.ATol),
			MaxRelL2: Float(t.MaxRelL2), MaxMismatchFraction: Float(t.MaxMismatchFraction), PerTensor: set.PerTensor,
			FailOnDTypeChange: set.FailOnDTypeChange}
		if s == nil {
			l := limits // not limits itself, which would then be on the heap for s too
			out.Limits = &l
		} else {
			s.limits = limits
			out.Limits = &s.limits
		}
		out.Metrics = (*MetricsJSON)(t.Metrics)
		if t.Rule != "" {
			j := JudgedJSON{Rule: string(t.Rule), Measure: Float(t.Measure), Limit: Float(t.Limit), Ratio: Float(t.Ratio())}
			if s == nil {
				out.Judged = &j
			} else {
				s.judged = j
				out.Judged = &s.judged
			}
		}
	}
	if partial && t.Metrics != nil {
		out.Partial = &PartialJSON{NormA: Float(t.Metrics.NormA), NormDiff: Float(t.Metrics.NormDiff)}
		if u := t.Update; u != nil {
			uj := &UpdateJSON{Count: u.Count, MovedA: u.MovedA, MovedB: u.MovedB, UlpMovedA: u.UlpMovedA, UlpMovedB: u.UlpMovedB,
				Bins: []UpdateBinJSON{}, Worst: updateElemsJSON(u.Worst)}
			for _, b := range u.Bins {
				uj.Bins = append(uj.Bins, UpdateBinJSON{Exp: b.Exp, N: b.N, UU: Float(b.UU), DU: Float(b.DU), DD: Float(b.DD), PU: Float(b.PU)})
			}
			out.Partial.Update = uj
		}
		out.Partial.Masked = t.Masked
		if d := t.Decode; d != nil {
			dj := &DecodeJSON{Rows: d.Rows, Vocab: d.Vocab, Parted: d.Parted, Flips: []DecodeFlipJSON{},
				LogitsCount: d.LogitsCount, Masked: d.Masked, BFloat16: d.BFloat16,
				TokensA: d.TokensA, TokensB: d.TokensB, LogitsA: prints(d.LogitsA), LogitsB: prints(d.LogitsB)}
			for _, f := range d.Flips {
				dj.Flips = append(dj.Flips, DecodeFlipJSON{Row: f.Row, TokenA: f.TokenA, TokenB: f.TokenB,
					GapA: Float(f.GapA), GapB: Float(f.GapB), Scale: Float(f.Scale)})
			}
			out.Partial.Decode = dj
		}
	}
	if n := t.Noise; n != nil {
		out.Noise = &NoiseJSON{RelL2: Float(n.RelL2), Count: n.Count, Mismatched: n.Mismatched,
			MismatchFraction: Float(n.MismatchFraction()), MaxAbs: Float(n.MaxAbs.Value)}
	}
	return out
}

func entryFile(e *loaders.Meta) string {
	if e.Member != "" {
		return e.File + ":" + e.Member
	}
	return e.File
}

// compareJSON writes the JSON form of r as json.Encoder with a two-space
// indent would, but streams the tensors one at a time: encoding them all
// at once would hold the whole document in memory on top of the result
// (bench/README.md).
func compareJSON(w io.Writer, r *outcome.Comparison) error {
	partial := r.Shard.Count > 0
	doc := compareJSONHead(r)
	head, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	const empty = "\n  \"tensors\": [],\n"
	i := bytes.Index(head, []byte(empty))
	if i < 0 || len(r.Tensors) == 0 {
		_, err := w.Write(append(head, '\n'))
		return err
	}
	bw := bufio.NewWriterSize(w, writeBuffer)
	bw.Write(head[:i])
	bw.WriteString("\n  \"tensors\": [\n    ")
	marshalPairs(r.Tensors, partial, func(k int, b []byte) {
		if k > 0 {
			bw.WriteString(",\n    ")
		}
		bw.Write(b)
	})
	bw.WriteString("\n  ],\n")
	bw.Write(head[i+len(empty):])
	bw.WriteByte('\n')
	return bw.Flush()
}

// writeBuffer is the size of the buffer the pairs are written through: a
// write per 256 KiB, not per 4 KiB as bufio's default would, for reports
// of many pairs are large (bench/README.md).
const writeBuffer = 256 << 10

// pairBatch is how many pairs one goroutine of marshalPairs encodes at a
// time.
const pairBatch = 256

// marshalPairs encodes each pair as indented JSON and hands the encodings
// to write in order; write must not keep the slice it is given. Batches
// are encoded on all processors, at most a few per processor ahead of the
// writer, so memory stays bounded whatever the number of pairs, and a
// written batch's buffers encode a later one, so that what is left to
// collect does not grow with the report (bench/README.md).
func marshalPairs(ts []*judge.TensorResult, partial bool, write func(k int, b []byte)) {
	type batch struct {
		out  []byte // the batch's pairs, indented, one after another
		ends []int  // where each pair ends in out
	}
	var batches inOrder[batch]
	batches.run((len(ts)+pairBatch-1)/pairBatch, func(k int, b *batch) {
		b.out, b.ends = b.out[:0], b.ends[:0]
		var s pairScratch
		var limits limitsCache
		pairs := ts[k*pairBatch : min((k+1)*pairBatch, len(ts))]
		for i, t := range pairs {
			tj := s.tensorJSON(t, partial)
			b.out = appendPairJSONCached(b.out, &tj, &limits)
			b.ends = append(b.ends, len(b.out))
			if i == 0 && cap(b.out) < len(b.out)*len(pairs) {
				// a new batch: room for the rest at the first pair's
				// size and a quarter more, not grown by doubling
				b.out = slices.Grow(b.out, len(b.out)*(len(pairs)-1)*5/4)
			}
		}
	}, func(k int, b *batch) {
		start := 0
		for i, end := range b.ends {
			write(k*pairBatch+i, b.out[start:end])
			start = end
		}
	})
}

// prints writes row fingerprints in hexadecimal (JSON numbers lose
// integers past 2^53).
func prints(ps []uint64) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strconv.FormatUint(p, 16)
	}
	return out
}
