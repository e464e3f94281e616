package report

import (
	"fmt"
	"io"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
)

// RenameJSON is a tensor the two runs seem to hold under two names
// (outcome.Rename): the name in the reference run and in the other, its
// kind, shape and dtype, the steps at which each run alone holds its
// name (null for a tensor outside any step), the --rename value that
// pairs them, and the hint the text report prints.
type RenameJSON struct {
	Reference string `json:"reference"`
	Other     string `json:"other"`
	Kind      string `json:"kind"`
	Shape     []int  `json:"shape"`
	DType     string `json:"dtype"`
	Steps     []int  `json:"steps"`
	Rename    string `json:"rename"`
	Hint      string `json:"hint"`
}

// renamesJSON is the JSON form of a comparison's renames, nil for none.
func renamesJSON(rs []outcome.Rename) []RenameJSON {
	var out []RenameJSON
	for _, r := range rs {
		j := RenameJSON{Reference: r.A, Other: r.B, Kind: string(r.Kind), Shape: append([]int{}, r.Shape...),
			DType: r.DType.String(), Rename: r.Flag.String(), Hint: renameHint(r, 0)}
		for _, k := range r.Steps {
			if k != loaders.NoStep {
				j.Steps = append(j.Steps, k)
			}
		}
		out = append(out, j)
	}
	return out
}

// renameHint says that r looks like a rename and how to pair it, with
// how many more pairs of names the same --rename pairs (more).
func renameHint(r outcome.Rename, more int) string {
	return fmt.Sprintf("%s in REFERENCE and %s in OTHER have %s: a rename? give --rename %s", r.A, r.B, renameDetails(r, more), r.Flag)
}

// renameDetails is what renameHint says the two names share: "the same
// shape (32, 16) and dtype float32 at 8 steps, 0 to 7", and how many more
// pairs of names the same --rename pairs (more).
func renameDetails(r outcome.Rename, more int) string {
	also := ""
	if more > 0 {
		also = fmt.Sprintf(" (%s of names too)", plural(more, "more pair"))
	}
	return fmt.Sprintf("the same shape %s and dtype %s%s%s", loaders.FormatShape(r.Shape), r.DType, renameSteps(r.Steps), also)
}

// renameSteps says at which steps a rename was seen: "" outside any step.
func renameSteps(steps []int) string {
	switch {
	case len(steps) == 0 || steps[0] == loaders.NoStep:
		return ""
	case len(steps) == 1:
		return fmt.Sprintf(" at step %d", steps[0])
	}
	return fmt.Sprintf(" at %d steps, %d to %d", len(steps), steps[0], steps[len(steps)-1])
}

// renameLines is how many renames the text, Markdown, HTML and JUnit
// reports name, one --rename each; the JSON report lists them all.
const renameLines = 5

// renameNote says what the reports' likely renames mean for the verdict
// and the causes.
const renameNote = "a tensor held under two names is listed as missing and extra; no cause is diagnosed from it"

// renameGroup is one --rename that would pair likely renames: the first
// pair of names it pairs, the example the reports show, and how many more
// it pairs.
type renameGroup struct {
	First outcome.Rename
	More  int
}

// renameGroups gathers likely renames by the --rename that pairs them,
// in the order of their first pair of names: at most renameLines of
// them, and how many more were left out.
func renameGroups(rs []outcome.Rename) (groups []renameGroup, left int) {
	at := map[loaders.Rename]int{}
	for _, r := range rs {
		if i, seen := at[r.Flag]; seen {
			groups[i].More++
			continue
		}
		at[r.Flag] = len(groups)
		groups = append(groups, renameGroup{First: r})
	}
	if len(groups) > renameLines {
		return groups[:renameLines], len(groups) - renameLines
	}
	return groups, 0
}

// renamesLeft says how many more --rename values a report leaves out.
func renamesLeft(left int) string {
	return fmt.Sprintf("and %s (the JSON report lists them all)", plural(left, "more rename"))
}

// renamesText writes the likely renames, one line for each --rename that
// would pair them, the first pair of names it pairs as the example.
func renamesText(w io.Writer, rs []outcome.Rename) {
	if len(rs) == 0 {
		return
	}
	groups, left := renameGroups(rs)
	fmt.Fprintln(w)
	for _, g := range groups {
		fmt.Fprintf(w, "likely rename: %s\n", renameHint(g.First, g.More))
	}
	if left > 0 {
		fmt.Fprintf(w, "  %s\n", renamesLeft(left))
	}
	fmt.Fprintf(w, "  (%s)\n", renameNote)
}
