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
	also := ""
	if more > 0 {
		also = fmt.Sprintf(" (%s of names too)", plural(more, "more pair"))
	}
	return fmt.Sprintf("%s in REFERENCE and %s in OTHER have the same shape %s and dtype %s%s%s: a rename? give --rename %s",
		r.A, r.B, loaders.FormatShape(r.Shape), r.DType, renameSteps(r.Steps), also, r.Flag)
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

// renameLines is how many renames the text report names, one --rename
// each.
const renameLines = 5

// renamesText writes the likely renames, one line for each --rename that
// would pair them, the first pair of names it pairs as the example; names
// are escaped as printable escapes the report's.
func renamesText(w io.Writer, rs []outcome.Rename) {
	if len(rs) == 0 {
		return
	}
	var flags []loaders.Rename
	first := map[loaders.Rename]outcome.Rename{}
	count := map[loaders.Rename]int{}
	for _, r := range rs {
		if _, seen := first[r.Flag]; !seen {
			flags = append(flags, r.Flag)
			first[r.Flag] = r
		}
		count[r.Flag]++
	}
	fmt.Fprintln(w)
	for i, f := range flags {
		if i == renameLines {
			fmt.Fprintf(w, "  and %s more (the JSON report lists them all)\n", plural(len(flags)-i, "rename"))
			break
		}
		r := first[f]
		r.A, r.B = escape(r.A), escape(r.B)
		r.Flag = loaders.Rename{Old: escape(f.Old), New: escape(f.New)}
		fmt.Fprintf(w, "likely rename: %s\n", renameHint(r, count[f]-1))
	}
	fmt.Fprintln(w, "  (a tensor held under two names is listed as missing and extra; no cause is diagnosed from it)")
}
