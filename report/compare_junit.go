package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
)

// JUnit XML, as CI systems read it: one <testsuite> for the pair of runs,
// one <testcase> per tensor and step (classname "step_N", or "no_step"; name
// the tensor), a <failure> carrying the reasons and the numbers for a pair
// that did not match, an <error> for one that could not be read, and a
// <skipped> for one a policy ignored or --fail-fast left out. Likely
// renames are properties of the suite (likely_rename) and lead its
// system-out, and the failure of a pair one names says so first.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
	SystemErr  string          `xml:"system-err,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure"`
	Error     *junitProblem `xml:"error"`
	Skipped   *junitSkipped `xml:"skipped"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func compareJUnit(w io.Writer, r *outcome.Comparison) error {
	suite := junitSuite{
		Name:       r.A + " vs " + r.B,
		Properties: []junitProperty{{"verdict", string(r.Verdict)}, {"reference", r.A}, {"compared", r.B}},
	}
	if d := r.FirstDivergence; d != nil {
		suite.Properties = append(suite.Properties, junitProperty{"first_divergence", where(d.Step, d.Name)})
	}
	out := renamesJUnit(&suite, r.Renames)
	for _, c := range append(append([]diagnose.Cause(nil), r.Causes...), r.Warnings...) {
		suite.Properties = append(suite.Properties, junitProperty{"cause", fmt.Sprintf("%s %.2f", c.ID, c.Confidence)})
		out = append(out, fmt.Sprintf("%s (confidence %.2f):\n  %s\n  fix: %s", c.ID, c.Confidence, strings.Join(c.Evidence, "\n  "), c.Fix))
	}
	suite.SystemOut = strings.Join(out, "\n")
	renamedAs := renamedPairs(r.Renames)
	for _, t := range r.Tensors {
		c := junitCase{ClassName: junitClass(t.Step), Name: t.Name, Time: "0"}
		switch {
		case t.Status == judge.StatusError:
			c.Error = &junitProblem{Message: t.Err.Error(), Type: string(t.Status)}
			suite.Errors++
		case t.Failed():
			msg := string(t.Status)
			if len(t.Reasons) > 0 {
				msg = strings.Join(t.Reasons, "; ")
			}
			c.Failure = &junitProblem{Message: msg, Type: string(t.Status), Text: renamedAs[renamedPair{t.Step, t.Name, t.Status}] + junitDetails(t)}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, c)
	}
	for _, t := range r.Ignored {
		suite.Cases = append(suite.Cases, junitCase{ClassName: junitClass(t.Step), Name: t.Name, Time: "0",
			Skipped: &junitSkipped{Message: "ignored by policy"}})
		suite.Skipped++
	}
	if r.NotCompared > 0 && r.StoppedAfterStep != nil {
		suite.SystemErr = fmt.Sprintf("--fail-fast stopped after %s; %d pairs of later steps were not compared", stepWords(*r.StoppedAfterStep), r.NotCompared)
	}
	var errs []string
	for _, err := range r.AllErrors() {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		suite.SystemErr = strings.TrimSpace(suite.SystemErr + "\n" + strings.Join(errs, "\n"))
	}
	suite.Tests = len(suite.Cases)
	doc := junitSuites{Name: "graphdiff", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Skipped: suite.Skipped, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// renamesJUnit adds a likely_rename property to suite for each --rename
// that would pair likely renames (renameGroups), and returns the lines
// the suite's system-out starts with: each as the text report says it,
// and what renames mean for the verdict and the causes.
func renamesJUnit(suite *junitSuite, rs []outcome.Rename) []string {
	if len(rs) == 0 {
		return nil
	}
	var out []string
	groups, left := renameGroups(rs)
	for _, g := range groups {
		hint := renameHint(g.First, g.More)
		suite.Properties = append(suite.Properties, junitProperty{"likely_rename", hint})
		out = append(out, "likely rename: "+hint)
	}
	if left > 0 {
		out = append(out, "  "+renamesLeft(left))
	}
	return append(out, "  ("+renameNote+")")
}

// renamedPair is a pair by step, name and status.
type renamedPair struct {
	step   int
	name   string
	status judge.Status
}

// renamedPairs gives the first line of the failure of each missing and
// extra pair that a likely rename names: the rename, and the --rename
// that pairs it.
func renamedPairs(rs []outcome.Rename) map[renamedPair]string {
	out := map[renamedPair]string{}
	for _, r := range rs {
		line := "likely rename: " + renameHint(r, 0) + "\n"
		for _, k := range r.Steps {
			out[renamedPair{k, r.A, judge.StatusMissing}] = line
			out[renamedPair{k, r.B, judge.StatusExtra}] = line
		}
	}
	return out
}

func junitClass(step int) string {
	if step < 0 {
		return "no_step"
	}
	return fmt.Sprintf("step_%d", step)
}

// junitDetails is the failure body: the pair's files, what its verdict
// compared (its rule, measure and limit) and its numbers.
func junitDetails(t *judge.TensorResult) string {
	var b strings.Builder
	if t.A != nil {
		fmt.Fprintf(&b, "reference: %s (%s %s)\n", entryFile(t.A), t.A.DType, loaders.FormatShape(t.A.Shape))
	}
	if t.B != nil {
		fmt.Fprintf(&b, "compared:  %s (%s %s)\n", entryFile(t.B), t.B.DType, loaders.FormatShape(t.B.Shape))
	}
	if t.Rule != "" {
		fmt.Fprintf(&b, "judged by %s: %s of its limit\n", judgedText(t), ratioText(errorRatio(t)))
	}
	if m := t.Metrics; m != nil {
		fmt.Fprintf(&b, "rel_l2 %s, mismatched %d of %d = %s beyond rtol %g atol %g\n",
			sci(m.RelL2), m.Mismatched, m.Count, percent(m.MismatchFraction()), t.Settings.RTol, t.Settings.ATol)
		if m.MaxAbs.Index != nil {
			fmt.Fprintf(&b, "max_abs %s at %s (%g vs %g)\n", sci(m.MaxAbs.Value), indexString(m.MaxAbs.Index), m.MaxAbs.A, m.MaxAbs.B)
		}
		fmt.Fprintf(&b, "cosine %s, p50/p90/p99 abs %s/%s/%s, max_ulp %d, NaN %d/%d, Inf %d/%d\n",
			cosine(m.Cosine), sci(m.P50), sci(m.P90), sci(m.P99), m.MaxULP, m.NaNA, m.NaNB, m.InfA, m.InfB)
	}
	return b.String()
}
