package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/internal/words"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
)

// TextOptions shape the text report.
type TextOptions struct {
	// Color adds ANSI colours (for a terminal; the caller honours NO_COLOR).
	Color bool
	// Top is how many pairs the worst-tensors table shows, worst first; 0
	// shows all.
	Top int
	// TableOnPass shows the worst-tensors table on a passing comparison
	// too (a pass is otherwise a few lines).
	TableOnPass bool
}

const (
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiBold  = "\x1b[1m"
	ansiReset = "\x1b[0m"
)

func (o TextOptions) paint(code, s string) string {
	if !o.Color {
		return s
	}
	return code + s + ansiReset
}

// compareText writes the report for people, the answer first: the
// verdict and the first divergence, the likely cause with its evidence;
// then the failing pairs of the first divergent step with why they fail,
// how many pairs fail at each step, and the worst tensors of the run (the
// model's tensors; state and buffers, parameters without a gradient and
// tensors of no kind each in a table of their own); then the counts
// and the loss curves. A pass is a few lines: the verdict, the counts, the
// curves, what the differences are, and warnings.
func compareText(w io.Writer, r *outcome.Comparison, o TextOptions) error {
	r = printable(r)
	verdict := strings.ToUpper(string(r.Verdict))
	switch r.Verdict {
	case judge.Pass:
		verdict = o.paint(ansiGreen+ansiBold, verdict)
	default:
		verdict = o.paint(ansiRed+ansiBold, verdict)
	}
	fmt.Fprintf(w, "%s  %s vs %s\n", verdict, r.A, r.B)
	if r.Shard.Count > 0 {
		fmt.Fprintf(w, "shard %s: this verdict covers only the shard's pairs; `graphdiff merge` the shards' JSON reports for the whole comparison\n", r.Shard)
	}
	if d := r.FirstDivergence; d != nil {
		fmt.Fprintf(w, "first divergence: %s (%s): %s\n", where(d.Step, d.Name), d.Kind, strings.Join(d.Reasons, "; "))
		if l := moduleLine(r.Result); l != "" {
			fmt.Fprintln(w, l)
		}
	}
	if r.StoppedAfterStep != nil {
		fmt.Fprintf(w, "stopped after %s (--fail-fast): %s of later steps not compared\n",
			stepWords(*r.StoppedAfterStep), plural(r.NotCompared, "pair"))
	}
	if r.NothingCompared != "" {
		fmt.Fprintf(w, "nothing was compared: %s\n", r.NothingCompared)
	}
	failed := r.Verdict != judge.Pass
	if failed {
		renamesText(w, r.Renames)
		if len(r.Causes) == 0 && r.FirstDivergence != nil && (r.Unexplained != nil || len(r.Renames) == 0) {
			fmt.Fprintf(w, "\nlikely cause: none of the known causes fits how the runs part at %s (graphdiff explain lists them)\n", where(r.FirstDivergence.Step, r.FirstDivergence.Name))
			for _, l := range unexplainedLines(r.Unexplained) {
				fmt.Fprintf(w, "  - %s\n", l)
			}
		}
		causesText(w, "likely cause", r.Causes, o)
		causesText(w, "warning", r.Warnings, o)
		firstStepText(w, r.Result, o)
		perStepText(w, r.Result)
	}
	if failed || o.TableOnPass {
		g := groupPairs(r.Tensors)
		tableText(w, "worst tensors", g.model, o)
		small := o
		if small.Top == 0 || small.Top > stateRows {
			small.Top = stateRows
		}
		if o.Top == 0 {
			small.Top = 0
		}
		tableText(w, "state and buffers", g.state, small)
		tableText(w, "parameters without a gradient (frozen, or buffers)", g.noGrad, small)
		other := "other tensors"
		if len(g.model)+len(g.state)+len(g.noGrad) == 0 {
			other = "tensors" // single files, or containers of no kind words: nothing else to tell them from
		}
		tableText(w, other, g.other, small)
	}
	if errs := r.AllErrors(); len(errs) > 0 {
		fmt.Fprintf(w, "\n%s could not be read:\n", plural(len(errs), "input"))
		for _, err := range errs {
			fmt.Fprintf(w, "  %v\n", err)
		}
	}
	s := summarize(r.Result)
	inputs := "inputs unreadable"
	if s.UnreadableInputs == 1 {
		inputs = "input unreadable"
	}
	fmt.Fprintf(w, "\n%s: %d match, %d mismatch", plural(s.Pairs, "pair"), s.Match, s.Mismatch)
	for _, c := range []struct {
		n    int
		what string
	}{{s.ShapeMismatch, "shape mismatch"}, {s.DTypeMismatch, "dtype mismatch"}, {s.Missing, "missing"},
		{s.Extra, "extra"}, {s.Errors, "unreadable"}, {s.Ignored, "ignored"}, {s.NotCompared, "not compared"},
		{s.UnreadableInputs, inputs}} {
		if c.n > 0 {
			fmt.Fprintf(w, ", %d %s", c.n, c.what)
		}
	}
	fmt.Fprintln(w)
	if s.DTypeChanged > 0 {
		fmt.Fprintf(w, "%s stored in two dtypes, compared in the coarser (%s): --fail-on-dtype-change fails them\n",
			plural(s.DTypeChanged, "pair"), firstDTypeChange(r.Result))
	}
	if c := r.Curve; c != nil {
		line := fmt.Sprintf("loss curves: %s (%s)", c.Pattern, c.Verdict)
		if c.FirstDivergentStep != nil {
			line += fmt.Sprintf(", diverging at step %d", *c.FirstDivergentStep)
		}
		fmt.Fprintln(w, line)
	}
	if r.Precision.ModelFromValues {
		fmt.Fprintln(w, fromValuesNote)
	}
	if r.Precision.ComputeFromValues {
		fmt.Fprintln(w, autocastNote)
	}
	if line := flipsLine(r.Steps); line != "" {
		fmt.Fprintln(w, line)
	}
	if line := baselineLine(r.Baseline); line != "" {
		fmt.Fprintln(w, line)
	}
	if !failed {
		for _, c := range r.Causes { // precision_noise: one line
			if len(c.Evidence) > 0 {
				fmt.Fprintf(w, "differences: %s (%s)\n", c.Evidence[0], c.ID)
			}
		}
	}
	if !failed {
		causesText(w, "warning", r.Warnings, o)
	}
	return nil
}

// firstStepText lists the failing pairs of the first divergent step, worst
// first, each with why it fails.
func firstStepText(w io.Writer, r *judge.Result, o TextOptions) {
	d := r.FirstDivergence
	if d == nil {
		unreadableText(w, r, o)
		return
	}
	var failing []*judge.TensorResult
	total := 0
	for _, t := range r.Tensors {
		if t.Step != d.Step {
			continue
		}
		total++
		if t.Failed() {
			failing = append(failing, t)
		}
	}
	if len(failing) == 0 {
		return
	}
	failing = worstFirst(failing)
	fmt.Fprintf(w, "\n%s: %d of %d pairs fail\n", firstWords(d.Step, total == len(r.Tensors)), len(failing), total)
	shown := failing
	if o.Top > 0 && len(shown) > o.Top {
		shown = shown[:o.Top]
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tKIND\tSTATUS\tDTYPE\tREL_L2\tMISMATCHED\tMAX_ABS\tAT\tCOSINE")
	for _, t := range shown {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", t.Name, t.Kind, t.Status, dtypeCell(t), metricCells(t.Metrics))
	}
	tw.Flush()
	if len(failing) > len(shown) {
		fmt.Fprintf(w, "  ... %d more (--top 0 shows all)\n", len(failing)-len(shown))
	}
	fmt.Fprintln(w, "  why:")
	for i, t := range shown {
		if i == whyLines {
			fmt.Fprintf(w, "    ... and %d more (--format json has every reason)\n", len(shown)-whyLines)
			break
		}
		fmt.Fprintf(w, "    %s: %s\n", o.paint(ansiRed, t.Name), strings.Join(t.Reasons, "; "))
	}
}

// unreadableText lists the pairs that fail with no first divergence (the
// pairs that could not be read), each with why.
func unreadableText(w io.Writer, r *judge.Result, o TextOptions) {
	n := 0
	for _, t := range r.Tensors {
		if !t.Failed() || len(t.Reasons) == 0 {
			continue
		}
		if n == 0 {
			fmt.Fprintln(w, "\nnot checked:")
		}
		if n++; n <= whyLines {
			fmt.Fprintf(w, "  %s: %s\n", o.paint(ansiRed, where(t.Step, t.Name)), strings.Join(t.Reasons, "; "))
		}
	}
	if n > whyLines {
		fmt.Fprintf(w, "  ... and %d more\n", n-whyLines)
	}
}

// perStepText says how many pairs fail at each step that has failures, in
// step order ("step 1: 12 of 40"), at most perStepLines steps.
func perStepText(w io.Writer, r *judge.Result) {
	type count struct{ failing, total int }
	by := map[int]*count{}
	var steps []int
	for _, t := range r.Tensors {
		if t.Step == loaders.NoStep {
			continue // step-less pairs (a loss curve) are no step
		}
		c := by[t.Step]
		if c == nil {
			c = &count{}
			by[t.Step] = c
			steps = append(steps, t.Step)
		}
		c.total++
		if t.Failed() {
			c.failing++
		}
	}
	sort.Ints(steps)
	var parts []string
	withFailures := 0
	for _, k := range steps {
		if c := by[k]; c.failing > 0 {
			withFailures++
			if len(parts) < perStepLines {
				parts = append(parts, fmt.Sprintf("%s: %d of %d", stepWords(k), c.failing, c.total))
			}
		}
	}
	if withFailures < 2 {
		return // the first divergent step says it all
	}
	line := strings.Join(parts, ", ")
	if withFailures > len(parts) {
		line += fmt.Sprintf(", and %d more steps", withFailures-len(parts))
	}
	fmt.Fprintf(w, "\nfailing pairs per step: %s\n", line)
}

// stateRows is how many rows of each table after the worst tensors (state
// and buffers, parameters without a gradient, other tensors) the text
// report shows unless --top 0 asks for all.
const stateRows = 5

// perStepLines is how many steps the per-step summary names.
const perStepLines = 12

// tableText writes a titled table of pairs, worst first, at most o.Top.
func tableText(w io.Writer, title string, ts []*judge.TensorResult, o TextOptions) {
	if len(ts) == 0 {
		return
	}
	rows := worstFirst(ts)
	shown := rows
	if o.Top > 0 && len(rows) > o.Top {
		shown = rows[:o.Top]
	}
	fmt.Fprintf(w, "\n%s:\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tNAME\tKIND\tSTATUS\tDTYPE\tREL_L2\tMISMATCHED\tMAX_ABS\tAT\tCOSINE")
	// Colour stays out of the table: escape codes would upset the
	// column widths.
	for _, t := range shown {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", stepCell(t.Step), t.Name, t.Kind, t.Status, dtypeCell(t), metricCells(t.Metrics))
	}
	tw.Flush()
	if len(rows) > len(shown) {
		fmt.Fprintf(w, "... %d more (--top 0 shows all)\n", len(rows)-len(shown))
	}
}

// pairGroups are a comparison's pairs as the text report tables them.
type pairGroups struct {
	// model: the loss, gradients, parameters (with their gradients, where
	// the step dumped gradients), inputs and outputs.
	model []*judge.TensorResult
	// state: optimizer state, EMA weights and buffers (a normalization
	// layer's running statistics), under a kind word or not.
	state []*judge.TensorResult
	// noGrad: parameters without a gradient at a step that dumped
	// gradients: frozen parameters, or buffers the dump put among the
	// parameters under names that do not say so (graphdiff_dump writes
	// every floating-point buffer under params/).
	noGrad []*judge.TensorResult
	// other: tensors whose names say no kind and no state: the tensor of a
	// pair of single files, a container's keys, extras.
	other []*judge.TensorResult
}

// groupPairs sorts pairs into the text report's tables.
func groupPairs(ts []*judge.TensorResult) pairGroups {
	type key struct {
		step int
		name string
	}
	grads, gradSteps := map[key]bool{}, map[int]bool{}
	for _, t := range ts {
		if t.Kind == loaders.KindGrad {
			grads[key{t.Step, loaders.Subject(t.Name)}] = true
			gradSteps[t.Step] = true
		}
	}
	var g pairGroups
	for _, t := range ts {
		subject := loaders.Subject(t.Name)
		switch {
		case t.Kind == loaders.KindTensor && stateName(t.Name):
			g.state = append(g.state, t)
		case t.Kind == loaders.KindTensor:
			g.other = append(g.other, t)
		case t.Kind != loaders.KindParam || !gradSteps[t.Step] || grads[key{t.Step, subject}]:
			g.model = append(g.model, t)
		case stateName(subject):
			g.state = append(g.state, t)
		default:
			g.noGrad = append(g.noGrad, t)
		}
	}
	return g
}

// stateName reports whether a name of no kind word names state:
// optimizer state, EMA weights or a buffer. loaders.KindOf holds those
// words: under a state_dict's component ("model/") a name becomes a
// parameter unless it names such state, which stays of no kind.
func stateName(name string) bool {
	return loaders.KindOf("model/"+name) == loaders.KindTensor
}

// firstWords heads the pairs of the first divergent step: "Step 3, the
// first divergent one", or, for pairs without a step (single files,
// containers, step-less tensors of a run), "The first divergence", saying
// that its count is of the pairs without a step where the run has others.
func firstWords(step int, all bool) string {
	switch {
	case step != loaders.NoStep:
		return fmt.Sprintf("Step %d, the first divergent one", step)
	case all:
		return "The first divergence"
	}
	return "The first divergence, among the pairs without a step"
}

// baselineNote says that a baseline equal to the reference bit for bit
// raised no limit.
const baselineNote = "baseline: equal to the reference bit for bit on every tensor, so it measures no noise and raised no limit " +
	"(a second eager run often repeats the first; nudge its initial parameters by one ULP, or reduce the batch in another order)"

// fromValuesNote says that the run was judged as a bfloat16 model because
// its float32 files hold bfloat16 values.
const fromValuesNote = "precision: the parameters (the outputs, where no parameter or gradient was dumped) are float32 files holding bfloat16 values " +
	"(their low 16 bits are zero: saved with .float()), so the run was judged as a bfloat16 model"

// flipsLine says, in one line, where greedy decoding parted by near ties
// (judge.FlipFact): the sequences whose tokens flipped where their two
// best logits were a rounding apart, compared no further. "" when none.
func flipsLine(steps []judge.StepFacts) string {
	var parts []string
	n := 0
	for _, s := range steps {
		for _, f := range s.Flips {
			if !f.NearTie {
				continue
			}
			n++
			if len(parts) < 3 {
				parts = append(parts, fmt.Sprintf("step %d %s row %d (token %d vs %d, gaps %.3g and %.3g ≤ %.3g)",
					s.Step, f.Name, f.Row, f.TokenA, f.TokenB, f.GapA, f.GapB, f.Limit))
			}
		}
	}
	if n == 0 {
		return ""
	}
	more, verb := "", "are"
	if n > len(parts) {
		more = fmt.Sprintf(" and %d more", n-len(parts))
	}
	if n == 1 {
		verb = "is"
	}
	return fmt.Sprintf("decoding: %s parted by a near tie, where the two best logits were a rounding apart, and %s compared no further: %s%s",
		plural(n, "sequence"), verb, strings.Join(parts, "; "), more)
}

// autocastNote says that the run was judged in a 16-bit compute dtype
// because its dumps show autocast (tolerances.Precision.ComputeFromValues).
const autocastNote = "precision: the parameters are float32 while the outputs are stored in a 16-bit dtype, or most gradients hold bfloat16 values " +
	"(their low 16 bits are zero): autocast, so the run was judged in the 16-bit dtype (--compute-dtype overrides)"

// baselineLine says, in one line, where the baseline u could not serve:
// it held none of the compared pairs, it repeats the reference bit for
// bit, it was too far from the reference at some steps, or it held only
// some pairs. "" when it served every pair, or without one.
func baselineLine(u *judge.BaselineUse) string {
	switch {
	case u == nil:
		return ""
	case u.Paired == 0:
		return fmt.Sprintf("baseline %s: holds none of the %s compared (same step, name and shape), so it cannot serve: every pair was judged without it",
			u.Path, plural(u.Compared, "pair"))
	case u.Identical:
		return baselineNote
	case len(u.Farther) > 0:
		return fmt.Sprintf("baseline %s: cannot serve at %s %s: farther from the reference (RMS relative L2 error %.3g) than %d× the compared run (%.3g), "+
			"so it is no sample of the same noise (another seed, another model, a broken dump?) and those steps were judged without it",
			u.Path, words.Noun(len(u.Farther), "step"), stepList(u.Farther), u.FartherRel, judge.NoiseFactor, u.RunRel)
	case u.Paired < u.Compared:
		return fmt.Sprintf("baseline %s: holds %d of the %s compared; the others were judged without it", u.Path, u.Paired, plural(u.Compared, "pair"))
	}
	return ""
}

// stepList lists steps as "1, 2, 3", the first 10 and how many more.
func stepList(steps []int) string {
	const show = 10
	var b strings.Builder
	for i, s := range steps[:min(len(steps), show)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(loaders.StepString(s))
	}
	if len(steps) > show {
		fmt.Fprintf(&b, " and %d more", len(steps)-show)
	}
	return b.String()
}

// whyLines is how many failing pairs of the first divergent step the text
// report explains.
const whyLines = 10

// causesText writes the top cause in full (evidence, fix, where to read
// more) and names the others.
func causesText(w io.Writer, label string, cs []diagnose.Cause, o TextOptions) {
	for i, c := range cs {
		title := ""
		if e, ok := diagnose.Explain(c.ID); ok {
			title = " — " + e.Title
		}
		if i > 0 {
			fmt.Fprintf(w, "also possible: %s (confidence %.2f)%s\n", c.ID, c.Confidence, title)
			if len(c.Evidence) > 0 {
				fmt.Fprintf(w, "  - %s\n", c.Evidence[len(c.Evidence)-1])
			}
			continue
		}
		fmt.Fprintf(w, "\n%s: %s (confidence %.2f)%s\n", label, o.paint(ansiBold, c.ID), c.Confidence, title)
		for _, e := range c.Evidence {
			fmt.Fprintf(w, "  - %s\n", e)
		}
		fmt.Fprintf(w, "  fix: %s\n", c.Fix)
		fmt.Fprintf(w, "  more: graphdiff explain %s\n", c.ID)
	}
}

// failingFirst sorts out, stably: failing pairs before the others, and
// within each the larger key first. It returns out.
func failingFirst(out []*judge.TensorResult, key func(*judge.TensorResult) float64) []*judge.TensorResult {
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Failed() != b.Failed() {
			return a.Failed()
		}
		return key(a) > key(b)
	})
	return out
}

// worstFirst orders pairs for people: failing before matching, and within
// each, the larger relative L2 error first; ties keep step order.
func worstFirst(ts []*judge.TensorResult) []*judge.TensorResult {
	out := append([]*judge.TensorResult(nil), ts...)
	severity := func(t *judge.TensorResult) float64 {
		if t.Metrics == nil {
			return math.Inf(1)
		}
		if math.IsNaN(t.Metrics.RelL2) {
			return math.Inf(1)
		}
		return t.Metrics.RelL2
	}
	return failingFirst(out, severity)
}

// where names a tensor for people: "step 3, grads/fc1.weight", or the
// name alone outside any step.
func where(step int, name string) string {
	if step == loaders.NoStep {
		return name
	}
	return fmt.Sprintf("step %d, %s", step, name)
}

func stepWords(step int) string {
	if step == loaders.NoStep {
		return "no step"
	}
	return fmt.Sprintf("step %d", step)
}

func stepCell(step int) string {
	if step == loaders.NoStep {
		return "-"
	}
	return fmt.Sprint(step)
}

func dtypeCell(t *judge.TensorResult) string {
	switch {
	case t.A == nil:
		return t.B.DType.String()
	case t.B == nil || t.A.DType == t.B.DType:
		return t.A.DType.String()
	}
	return t.A.DType.String() + "/" + t.B.DType.String()
}

// metricCells returns the REL_L2, MISMATCHED, MAX_ABS, AT and COSINE cells.
func metricCells(m *compare.Metrics) string {
	if m == nil {
		return "-\t-\t-\t-\t-"
	}
	at := "-"
	if m.MaxAbs.Index != nil {
		at = indexString(m.MaxAbs.Index)
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", sci(m.RelL2), percent(m.MismatchFraction()), sci(m.MaxAbs.Value), at, cosine(m.Cosine))
}

func sci(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v == 0:
		return "0"
	}
	return fmt.Sprintf("%.3g", v)
}

func percent(f float64) string {
	if f == 0 {
		return "0%"
	}
	if f < 0.001 {
		return fmt.Sprintf("%.2g%%", 100*f)
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}

func cosine(c float64) string {
	if math.IsNaN(c) {
		return "-"
	}
	return fmt.Sprintf("%.6f", c)
}

func indexString(idx []int) string {
	if len(idx) == 0 {
		return "()"
	}
	parts := make([]string, len(idx))
	for i, v := range idx {
		parts[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// firstDTypeChange names the first compared pair stored in two dtypes:
// "params/w float32/float64, compared in float32".
func firstDTypeChange(r *judge.Result) string {
	for _, t := range r.Tensors {
		if t.Metrics != nil && dtypeChanged(t) {
			return fmt.Sprintf("%s %s/%s, compared in %s", t.Name, t.A.Effective(), t.B.Effective(), t.Settings.DType)
		}
	}
	return ""
}

// unexplainedLines says, for a failure no cause was named for, what still
// parts runs where these did and which dumps would tell (nil for none).
func unexplainedLines(u *diagnose.Unexplained) []string {
	if u == nil {
		return nil
	}
	var out []string
	if len(u.Candidates) > 0 {
		verb := "parts"
		if len(u.Candidates) > 1 {
			verb = "part"
		}
		out = append(out, fmt.Sprintf("%s is %s, where %s also %s runs, in ways these dumps cannot test", stepWords(u.Step), u.WhereWords(), words.List(u.Candidates), verb))
	}
	for _, d := range u.Dumps {
		out = append(out, "would tell: "+d)
	}
	return out
}
