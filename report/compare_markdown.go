package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/outcome"
)

// compareMarkdown writes a report for a CI job summary (GitHub-flavoured
// Markdown): the verdict, the first divergence, the likely renames with
// the --rename that pairs each, counts, the failing pairs with their
// reasons, and the matching pairs nearest their limits in a collapsed
// section; each pair with its error over its limit, as its verdict
// measured it (errorRatio), and the rule that measured it.
func compareMarkdown(w io.Writer, r *outcome.Comparison) error {
	r = printable(r)
	icon := map[judge.Verdict]string{judge.Pass: "✅", judge.Fail: "❌", judge.Error: "⚠️"}[r.Verdict]
	fmt.Fprintf(w, "## graphdiff: %s %s\n\n", icon, r.Verdict)
	fmt.Fprintf(w, "`%s` (reference) vs `%s`\n\n", mdCode(r.A), mdCode(r.B))
	if r.Shard.Count > 0 {
		fmt.Fprintf(w, "Shard %s only: merge the shards' JSON reports with `graphdiff merge` for the whole comparison.\n\n", r.Shard)
	}
	if d := r.FirstDivergence; d != nil {
		fmt.Fprintf(w, "**First divergence:** `%s` (%s): %s\n\n", mdCode(where(d.Step, d.Name)), d.Kind, mdEscape(strings.Join(d.Reasons, "; ")))
		if l := moduleLine(r.Result); l != "" {
			fmt.Fprintf(w, "**Where in the model:** %s\n\n", mdEscape(strings.TrimPrefix(l, "where in the model: ")))
		}
	}
	renamesMarkdown(w, r.Renames)
	if len(r.Causes) == 0 && r.Unexplained != nil && r.FirstDivergence != nil {
		fmt.Fprintf(w, "**Likely cause:** none of the known causes fits how the runs part at `%s`\n\n", mdCode(where(r.FirstDivergence.Step, r.FirstDivergence.Name)))
		for _, l := range unexplainedLines(r.Unexplained) {
			fmt.Fprintf(w, "- %s\n", mdEscape(l))
		}
		fmt.Fprintln(w)
	}
	for i, c := range r.Causes {
		if i == 0 {
			title := ""
			if e, ok := diagnose.Explain(c.ID); ok {
				title = " — " + e.Title
			}
			fmt.Fprintf(w, "**Likely cause:** `%s` (confidence %.2f)%s\n\n", c.ID, c.Confidence, title)
			for _, e := range c.Evidence {
				fmt.Fprintf(w, "- %s\n", mdEscape(e))
			}
			fmt.Fprintf(w, "\n**Fix:** %s\n\n", mdEscape(c.Fix))
			continue
		}
		fmt.Fprintf(w, "Also possible: `%s` (confidence %.2f)\n\n", c.ID, c.Confidence)
	}
	for _, c := range r.Warnings {
		fmt.Fprintf(w, "**Warning:** `%s` (confidence %.2f): %s\n\n", c.ID, c.Confidence, mdEscape(strings.Join(c.Evidence, "; ")))
	}
	if r.StoppedAfterStep != nil {
		fmt.Fprintf(w, "Stopped after %s (`--fail-fast`): %d pairs of later steps not compared.\n\n", stepWords(*r.StoppedAfterStep), r.NotCompared)
	}
	if r.Precision.ModelFromValues {
		fmt.Fprintf(w, "**Precision:** %s\n\n", mdEscape(strings.TrimPrefix(fromValuesNote, "precision: ")))
	}
	if r.Precision.ComputeFromValues {
		fmt.Fprintf(w, "**Precision:** %s\n\n", mdEscape(strings.TrimPrefix(autocastNote, "precision: ")))
	}
	if line := baselineLine(r.Baseline); line != "" {
		fmt.Fprintf(w, "**Baseline:** %s\n\n", mdEscape(line))
	}
	s := summarize(r.Result)
	fmt.Fprintln(w, "| pairs | match | mismatch | shape | dtype | missing | extra | unreadable | ignored |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Fprintf(w, "| %d | %d | %d | %d | %d | %d | %d | %d | %d |\n\n",
		s.Pairs, s.Match, s.Mismatch, s.ShapeMismatch, s.DTypeMismatch, s.Missing, s.Extra, s.Errors, s.Ignored)

	rows := byRatio(r.Tensors)
	var failing, matching []*judge.TensorResult
	for _, t := range rows {
		if t.Failed() {
			failing = append(failing, t)
		} else {
			matching = append(matching, t)
		}
	}
	if len(failing) > 0 {
		fmt.Fprintln(w, "### Failing tensors")
		fmt.Fprintln(w)
		mdTable(w, failing, 50, true)
	}
	if len(matching) > 0 {
		fmt.Fprintf(w, "<details><summary>Matching tensors, nearest their limits first (%d)</summary>\n\n", len(matching))
		mdTable(w, matching, 20, false)
		fmt.Fprintln(w, "</details>")
		fmt.Fprintln(w)
	}
	if errs := r.AllErrors(); len(errs) > 0 {
		fmt.Fprintln(w, "### Unreadable inputs")
		fmt.Fprintln(w)
		for _, err := range errs {
			fmt.Fprintf(w, "- `%s`\n", mdCode(err.Error()))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// renamesMarkdown writes the likely renames, one item for each --rename
// that would pair them, with the first pair of names it pairs.
func renamesMarkdown(w io.Writer, rs []outcome.Rename) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "**Likely renames** (%s):\n\n", mdEscape(renameNote))
	groups, left := renameGroups(rs)
	for _, g := range groups {
		r := g.First
		fmt.Fprintf(w, "- `%s` in REFERENCE and `%s` in OTHER have %s: a rename? give `--rename %s`\n",
			mdCode(r.A), mdCode(r.B), mdEscape(renameDetails(r, g.More)), mdCode(r.Flag.String()))
	}
	if left > 0 {
		fmt.Fprintf(w, "- %s\n", mdEscape(renamesLeft(left)))
	}
	fmt.Fprintln(w)
}

func mdTable(w io.Writer, rows []*judge.TensorResult, limit int, reasons bool) {
	head := "| step | tensor | kind | status | dtype | error / limit | judged by | rel L2 | mismatched | max abs |"
	rule := "|---:|---|---|---|---|---:|---|---:|---:|---:|"
	if reasons {
		head += " why |"
		rule += "---|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	for i, t := range rows {
		if i == limit {
			fmt.Fprintf(w, "\n… and %d more.\n", len(rows)-limit)
			break
		}
		relL2, mism, maxAbs, ratio := "-", "-", "-", "-"
		if m := t.Metrics; m != nil {
			relL2, mism, maxAbs = sci(m.RelL2), percent(m.MismatchFraction()), sci(m.MaxAbs.Value)
		}
		if e := errorRatio(t); !math.IsNaN(e) {
			ratio = ratioText(e)
		}
		fmt.Fprintf(w, "| %s | `%s` | %s | %s | %s | %s | %s | %s | %s | %s |", stepCell(t.Step), mdCode(t.Name), t.Kind, t.Status, dtypeCell(t),
			ratio, mdEscape(judgedText(t)), relL2, mism, maxAbs)
		if reasons {
			fmt.Fprintf(w, " %s |", mdEscape(strings.Join(t.Reasons, "; ")))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// mdCode makes text safe inside a code span in a table cell.
func mdCode(s string) string { return strings.NewReplacer("`", "'", "|", "\\|", "\n", " ").Replace(s) }

// mdEscape makes text safe in a table cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "<", "&lt;", ">", "&gt;", "*", "\\*", "_", "\\_").Replace(s)
}
