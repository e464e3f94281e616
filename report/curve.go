package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// curveRenderers are the output formats of `graphdiff curve`.
var curveRenderers = renderers[*curve.Result]{
	{Text, curveText},
	{JSON, plain(curveJSON)},
}

// CurveFormats are the formats of `graphdiff curve` output.
var CurveFormats = curveRenderers.formats()

// Curve writes a loss-curve analysis in format f.
func Curve(w io.Writer, f Format, r *curve.Result, o TextOptions) error {
	return curveRenderers.write(w, f, r, o, "curve")
}

// CurveJSON is the JSON form of a curve analysis:
//
//	verdict               "pass" or "fail"
//	first_divergent_step  the step where the curves part, or null
//	pattern               identical, within_noise, drift, sudden, shift, beyond_baseline or nan
//	a, b                  where each curve was read from
//	dtype                 the curves' dtype (sets the noise floor)
//	settings              rtol, atol, jump, window, allowed_failing_steps, max_drift
//	evidence              sentences with the numbers behind the pattern
//	max_rel, max_rel_step the largest relative difference and where
//	only_a, only_b        steps found in one curve only
//	spikes                steps beyond the band that were not breaks
//	notes_a, notes_b      what the readers skipped or resolved
//	steps, a_values, b_values, abs_diff, rel_diff, band, drift
//	                      per common step, as parallel arrays
//
// Non-finite numbers follow CompareJSON: NaN is null, ±Inf "inf"/"-inf".
// `graphdiff curve --format json` writes it indented by two spaces, each
// array of numbers on one line (curveJSON); in a comparison's report it
// is indented as the rest.
type CurveJSON struct {
	Verdict            string        `json:"verdict"`
	FirstDivergentStep *int64        `json:"first_divergent_step"`
	Pattern            string        `json:"pattern"`
	A                  string        `json:"a"`
	B                  string        `json:"b"`
	DType              string        `json:"dtype"`
	Settings           CurveSettings `json:"settings"`
	Evidence           []string      `json:"evidence"`
	MaxRel             Float         `json:"max_rel"`
	MaxRelStep         int64         `json:"max_rel_step"`
	OnlyA              []int64       `json:"only_a"`
	OnlyB              []int64       `json:"only_b"`
	Spikes             []int64       `json:"spikes"`
	NotesA             []string      `json:"notes_a"`
	NotesB             []string      `json:"notes_b"`
	Steps              []int64       `json:"steps"`
	AValues            []Float       `json:"a_values"`
	BValues            []Float       `json:"b_values"`
	AbsDiff            []Float       `json:"abs_diff"`
	RelDiff            []Float       `json:"rel_diff"`
	Band               []Float       `json:"band"`
	Drift              []Float       `json:"drift"`
	// Level is the level statistic T per step (curve.Result.Level), its
	// limit settings.level.
	Level []Float `json:"level"`
	// Baseline is what a baseline curve showed (curve.Baseline), absent
	// without one.
	Baseline *CurveBaselineJSON `json:"baseline,omitempty"`
}

// CurveBaselineJSON is curve.Baseline: the baseline's source, the steps
// it shares with both curves, its largest relative difference from the
// reference (max_rel, at max_rel_step), the limit the compared curve was
// held to (3×max_rel + one rounding unit) and whether it repeats the
// reference bit for bit (identical: not used).
type CurveBaselineJSON struct {
	Source     string `json:"source"`
	Steps      int    `json:"steps"`
	MaxRel     Float  `json:"max_rel"`
	MaxRelStep int64  `json:"max_rel_step"`
	Limit      Float  `json:"limit"`
	Identical  bool   `json:"identical"`
}

// CurveSettings are the analysis settings, defaults filled in.
type CurveSettings struct {
	RTol                float64 `json:"rtol"`
	ATol                float64 `json:"atol"`
	Jump                float64 `json:"jump"`
	Window              int     `json:"window"`
	AllowedFailingSteps int     `json:"allowed_failing_steps"`
	Level               float64 `json:"level"`
	MaxDrift            float64 `json:"max_drift"`
	// ComputeDType is the dtype the rounding unit rtol came from, "" when
	// the curves' own (dtype).
	ComputeDType string `json:"compute_dtype"`
}

// NewCurveJSON builds the JSON form of a curve analysis.
func NewCurveJSON(r *curve.Result) CurveJSON {
	o := r.Options
	var base *CurveBaselineJSON
	if b := r.Baseline; b != nil {
		base = &CurveBaselineJSON{Source: b.Source, Steps: b.Steps, MaxRel: Float(b.MaxRel), MaxRelStep: b.MaxRelStep,
			Limit: Float(b.Limit), Identical: b.Identical}
	}
	return CurveJSON{
		Baseline: base,
		Verdict:  string(r.Verdict), FirstDivergentStep: r.FirstDivergentStep, Pattern: r.Pattern,
		A: r.A, B: r.B, DType: o.DType.String(),
		Settings: CurveSettings{RTol: o.RTol, ATol: o.ATol, Jump: o.Jump, Window: o.Window,
			AllowedFailingSteps: o.AllowedFailingSteps, Level: o.Level, MaxDrift: o.MaxDrift, ComputeDType: computeName(o.ComputeDType)},
		Evidence: nonNil(r.Evidence), MaxRel: Float(r.MaxRel), MaxRelStep: r.MaxRelStep,
		OnlyA: nonNilInts(r.OnlyA), OnlyB: nonNilInts(r.OnlyB), Spikes: nonNilInts(r.Spikes),
		NotesA: nonNil(r.NotesA), NotesB: nonNil(r.NotesB),
		Steps: nonNilInts(r.Steps), AValues: floats(r.ValuesA), BValues: floats(r.ValuesB),
		AbsDiff: floats(r.AbsDiff), RelDiff: floats(r.RelDiff), Band: floats(r.Band), Drift: floats(r.Drift),
		Level: floats(r.Level),
	}
}

// bandAt formats the jump band at index i where it is the threshold the
// step was judged by: before the first divergent step, and at it when a
// jump broke it; "-" after (a failing step is never shown inside a band).
func bandAt(r *curve.Result, i int) string {
	if k := divergenceIndex(r); k >= 0 && (i > k || i == k && r.Pattern != curve.PatternSudden) {
		return "-"
	}
	return sci(r.Band[i])
}

// curveSettings says in one line what a curve analysis was run with.
func curveSettings(steps int, o curve.Options) string {
	line := fmt.Sprintf("%d common steps; dtype %s, rounding unit %.3g·|loss|; jump ×%g over %d steps (%d of 5 may stay under), level limit %g standard errors",
		steps, o.DType, o.RTol, o.Jump, o.Window, o.AllowedFailingSteps, o.Level)
	if o.MaxDrift > 0 {
		line += fmt.Sprintf(", max drift %.3g", o.MaxDrift)
	}
	return line
}

func computeName(d loaders.DType) string {
	if d == loaders.Invalid {
		return ""
	}
	return d.String()
}

func floats(vs []float64) []Float {
	out := make([]Float, len(vs))
	for i, v := range vs {
		out[i] = Float(v)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilInts(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}

// curveText writes the verdict, the pattern with its evidence, alignment
// problems, and the steps around the divergence.
func curveText(w io.Writer, r *curve.Result, o TextOptions) error {
	r = printableCurve(r)
	verdict := strings.ToUpper(string(r.Verdict))
	if r.Verdict == judge.Pass {
		verdict = o.paint(ansiGreen+ansiBold, verdict)
	} else {
		verdict = o.paint(ansiRed+ansiBold, verdict)
	}
	fmt.Fprintf(w, "%s  loss curves: %s\n", verdict, r.Pattern)
	fmt.Fprintf(w, "  reference: %s\n  compared:  %s\n", r.A, r.B)
	if r.FirstDivergentStep != nil {
		fmt.Fprintf(w, "first divergent step: %d\n", *r.FirstDivergentStep)
	}
	for _, e := range r.Evidence {
		fmt.Fprintf(w, "  - %s\n", e)
	}
	curveAlignment(w, r)
	if k := divergenceIndex(r); k >= 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  STEP\tREFERENCE\tCOMPARED\tREL_DIFF\tJUMP_BAND")
		for i := max(0, k-3); i < min(len(r.Steps), k+4); i++ {
			mark := "  "
			if i == k {
				mark = "> " // the divergence
			}
			fmt.Fprintf(tw, "%s%d\t%.7g\t%.7g\t%s\t%s\n", mark, r.Steps[i], r.ValuesA[i], r.ValuesB[i], sci(r.RelDiff[i]), bandAt(r, i))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	o2 := r.Options
	fmt.Fprintf(w, "\n%s\n", curveSettings(len(r.Steps), o2))
	return nil
}

// curveAlignment reports steps found in one curve only and the readers'
// notes.
func curveAlignment(w io.Writer, r *curve.Result) {
	for _, side := range []struct {
		name  string
		steps []int64
		notes []string
	}{{"reference", r.OnlyA, r.NotesA}, {"compared", r.OnlyB, r.NotesB}} {
		if len(side.steps) > 0 {
			fmt.Fprintf(w, "  %d steps only in the %s curve: %s\n", len(side.steps), side.name, stepRanges(side.steps))
		}
		for _, n := range side.notes {
			fmt.Fprintf(w, "  %s: %s\n", side.name, n)
		}
	}
}

// stepRanges formats sorted steps as ranges: "0-9, 15, 20-29".
func stepRanges(steps []int64) string {
	var parts []string
	for i := 0; i < len(steps); {
		j := i
		for j+1 < len(steps) && steps[j+1] == steps[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", steps[i], steps[j]))
		} else {
			parts = append(parts, fmt.Sprint(steps[i]))
		}
		if len(parts) == 8 && j+1 < len(steps) {
			parts = append(parts, "…")
			break
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// divergenceIndex returns the index of the first divergent step, -1.
func divergenceIndex(r *curve.Result) int {
	if r.FirstDivergentStep == nil {
		return -1
	}
	for i, s := range r.Steps {
		if s == *r.FirstDivergentStep {
			return i
		}
	}
	return -1
}
