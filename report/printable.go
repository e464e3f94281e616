package report

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/outcome"
)

// needsEscape reports whether s holds a character a terminal or a Markdown
// renderer would act on rather than show: C0 and C1 controls (escape,
// carriage return, newline, tab, ...), DEL, and the bidirectional
// overrides and isolates (U+202A–U+202E, U+2066–U+2069) that reorder the
// text around them.
func needsEscape(s string) bool {
	for _, r := range s {
		if escaped(r) {
			return true
		}
	}
	return false
}

// escaped reports whether needsEscape looks for r (an invalid byte counts,
// as utf8.RuneError).
func escaped(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) ||
		(r >= 0x2066 && r <= 0x2069) || r == utf8.RuneError
}

// escape writes each character needsEscape looks for as Go writes it in a
// quoted string (\n, \r, \x1b, \u202e), and leaves the rest as it is.
func escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if escaped(r) {
			q := fmt.Sprintf("%+q", string(r))
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Escape returns s with the characters a terminal would act on rather
// than show (controls, DEL, bidirectional overrides, invalid bytes)
// written as Go writes them in a quoted string, the rest as it is: for a
// message that quotes a file name or a path, printed outside a report (an
// error on stderr).
func Escape(s string) string { return escape(s) }

// printable returns c itself, or, where any name, path, reason, error or
// piece of evidence it holds (each may quote a file name from the dumps
// or a run path from a shard report) has a character needsEscape looks
// for, a copy whose strings are escaped: the text and Markdown renderers
// print these as they are, and a name with an escape sequence or a
// newline would clear the screen or forge a line. The copy is made only
// then: c is not changed.
func printable(c *outcome.Comparison) *outcome.Comparison {
	if !dirty(c) {
		return c
	}
	out := *c
	r := *c.Result
	out.Result = &r
	r.A, r.B, r.BaselineRun, r.NothingCompared = escape(r.A), escape(r.B), escape(r.BaselineRun), escape(r.NothingCompared)
	if c.Baseline != nil {
		u := *c.Baseline
		u.Path = escape(u.Path)
		out.Baseline = &u
	}
	r.Errors = escapeErrors(r.Errors)
	r.Tensors = escapePairs(c.Tensors)
	r.Ignored = escapePairs(c.Ignored)
	if i := slices.Index(c.Tensors, c.FirstDivergence); i >= 0 {
		r.FirstDivergence = r.Tensors[i]
	}
	r.Steps = slices.Clone(c.Steps)
	for i := range r.Steps {
		s := &r.Steps[i]
		s.WorstGrad, s.Reasons = escape(s.WorstGrad), escapeAll(s.Reasons)
		s.Drift = escapeNames(s.Drift, func(d *judge.Drift) *string { return &d.Name })
		s.Flips = escapeNames(s.Flips, func(f *judge.FlipFact) *string { return &f.Name })
		s.State = escapeNames(s.State, func(f *judge.StateFit) *string { return &f.Name })
	}
	out.Causes, out.Warnings = escapeCauses(c.Causes), escapeCauses(c.Warnings)
	out.Renames = escapeRenames(c.Renames)
	if c.Curve != nil {
		out.Curve = printableCurve(c.Curve)
	}
	return &out
}

// printableCurve is printable for a loss-curve analysis: r itself, or a
// copy with its sources, evidence and notes escaped.
func printableCurve(r *curve.Result) *curve.Result {
	if !curveNeeds(r) {
		return r
	}
	cv := *r
	cv.A, cv.B = escape(cv.A), escape(cv.B)
	cv.Evidence, cv.NotesA, cv.NotesB = escapeAll(cv.Evidence), escapeAll(cv.NotesA), escapeAll(cv.NotesB)
	if cv.Baseline != nil {
		b := *cv.Baseline
		b.Source = escape(b.Source)
		cv.Baseline = &b
	}
	return &cv
}

// dirty reports whether printable has anything to escape in c.
func dirty(c *outcome.Comparison) bool {
	if needsEscape(c.A) || needsEscape(c.B) || needsEscape(c.BaselineRun) || needsEscape(c.NothingCompared) || anyErrorNeeds(c.Errors) {
		return true
	}
	for _, ts := range [][]*judge.TensorResult{c.Tensors, c.Ignored} {
		for _, t := range ts {
			if pairNeeds(t) {
				return true
			}
		}
	}
	for _, s := range c.Steps {
		if needsEscape(s.WorstGrad) || slices.ContainsFunc(s.Reasons, needsEscape) ||
			namesNeed(s.Drift, func(d *judge.Drift) *string { return &d.Name }) ||
			namesNeed(s.State, func(f *judge.StateFit) *string { return &f.Name }) ||
			namesNeed(s.Flips, func(f *judge.FlipFact) *string { return &f.Name }) {
			return true
		}
	}
	for _, cs := range [][]diagnose.Cause{c.Causes, c.Warnings} {
		for _, cause := range cs {
			if slices.ContainsFunc(cause.Evidence, needsEscape) {
				return true
			}
		}
	}
	if slices.ContainsFunc(c.Renames, renameNeeds) {
		return true
	}
	return c.Curve != nil && curveNeeds(c.Curve)
}

// renameNeeds reports whether a name of r, or of its --rename, needs
// escaping.
func renameNeeds(r outcome.Rename) bool {
	return needsEscape(r.A) || needsEscape(r.B) || needsEscape(r.Flag.Old) || needsEscape(r.Flag.New)
}

// escapeRenames returns a copy of rs with the names escaped, theirs and
// their --rename's.
func escapeRenames(rs []outcome.Rename) []outcome.Rename {
	out := slices.Clone(rs)
	for i := range out {
		r := &out[i]
		r.A, r.B = escape(r.A), escape(r.B)
		r.Flag.Old, r.Flag.New = escape(r.Flag.Old), escape(r.Flag.New)
	}
	return out
}

func curveNeeds(cv *curve.Result) bool {
	return needsEscape(cv.A) || needsEscape(cv.B) || slices.ContainsFunc(cv.Evidence, needsEscape) ||
		slices.ContainsFunc(cv.NotesA, needsEscape) || slices.ContainsFunc(cv.NotesB, needsEscape) ||
		cv.Baseline != nil && needsEscape(cv.Baseline.Source)
}

func pairNeeds(t *judge.TensorResult) bool {
	if needsEscape(t.Name) || slices.ContainsFunc(t.Reasons, needsEscape) || (t.Err != nil && needsEscape(t.Err.Error())) {
		return true
	}
	return (t.A != nil && (needsEscape(t.A.File) || needsEscape(t.A.Member))) ||
		(t.B != nil && (needsEscape(t.B.File) || needsEscape(t.B.Member)))
}

func anyErrorNeeds(errs []error) bool {
	return slices.ContainsFunc(errs, func(err error) bool { return needsEscape(err.Error()) })
}

// escapePairs returns copies of ts with their names, reasons, errors and
// files escaped.
func escapePairs(ts []*judge.TensorResult) []*judge.TensorResult {
	slab := make([]judge.TensorResult, len(ts))
	out := make([]*judge.TensorResult, len(ts))
	for i, t := range ts {
		c := *t
		c.Name, c.Reasons = escape(c.Name), escapeAll(c.Reasons)
		if c.Err != nil && needsEscape(c.Err.Error()) {
			c.Err = errors.New(escape(c.Err.Error()))
		}
		if c.A != nil {
			a := *c.A
			a.File, a.Member = escape(a.File), escape(a.Member)
			c.A = &a
		}
		if c.B != nil {
			b := *c.B
			b.File, b.Member = escape(b.File), escape(b.Member)
			c.B = &b
		}
		slab[i] = c
		out[i] = &slab[i]
	}
	return out
}

func escapeAll(ss []string) []string {
	if !slices.ContainsFunc(ss, needsEscape) {
		return ss
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = escape(s)
	}
	return out
}

func escapeErrors(errs []error) []error {
	if !anyErrorNeeds(errs) {
		return errs
	}
	out := make([]error, len(errs))
	for i, err := range errs {
		out[i] = err
		if msg := err.Error(); needsEscape(msg) {
			out[i] = errors.New(escape(msg))
		}
	}
	return out
}

func escapeCauses(cs []diagnose.Cause) []diagnose.Cause {
	out := slices.Clone(cs)
	for i := range out {
		out[i].Evidence = escapeAll(out[i].Evidence)
	}
	return out
}

// escapeNames returns a copy of xs with the name that name points to in
// each escaped.
func escapeNames[T any](xs []T, name func(*T) *string) []T {
	xs = slices.Clone(xs)
	for i := range xs {
		n := name(&xs[i])
		*n = escape(*n)
	}
	return xs
}

// namesNeed reports whether a name of xs (name points to it) needs escaping.
func namesNeed[T any](xs []T, name func(*T) *string) bool {
	for i := range xs {
		if needsEscape(*name(&xs[i])) {
			return true
		}
	}
	return false
}
