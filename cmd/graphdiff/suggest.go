package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/graphdiff/graphdiff/report"
)

// flagError is every command's flag error (cobra's SetFlagErrorFunc): a
// usage error pointing to the command's help, or, for an unknown flag
// close to one the command has, one line naming it ("did you mean
// --rtol?"). cobra suggests subcommands for a mistyped command but
// nothing for a mistyped flag, and pflag neither.
func flagError(c *cobra.Command, err error) error {
	if nf, ok := errors.AsType[*pflag.NotExistError](err); ok {
		typed := nf.GetSpecifiedName()
		if group := nf.GetSpecifiedShortnames(); group != "" {
			typed = group // -rtol: a long name given one dash
		}
		if c.Flags().Lookup("format") != nil && isFormat(typed) {
			return &usageError{err: fmt.Errorf("%w: did you mean --format %s?", err, typed)}
		}
		if s := suggestFlag(c, typed); s != "" {
			return &usageError{err: fmt.Errorf("%w: did you mean %s?", err, s)}
		}
	}
	return &usageError{err: err, help: c.CommandPath()}
}

// isFormat reports whether name is an output format of some command
// (--json for --format json).
func isFormat(name string) bool {
	for _, fs := range [][]report.Format{report.CompareFormats, report.CurveFormats, report.InspectFormats} {
		if _, err := report.ParseFormat(name, fs...); err == nil {
			return true
		}
	}
	return false
}

// maxTypos is how many single-character edits a typed flag may be from
// a flag's name to be suggested, and the most a third of its length.
const maxTypos = 2

// suggestFlag returns the flag of c (its own or inherited, help and
// version included) nearest typed in edits (editDistance), as "--name",
// or "" when none is within maxTypos edits and a third of typed's length
// (or holds typed whole as a prefix, as --max typed for --max-drift
// would, when only one does). Ties go to the first name in order.
func suggestFlag(c *cobra.Command, typed string) string {
	typed = strings.TrimLeft(typed, "-")
	if typed == "" {
		return ""
	}
	var names []string
	seen := map[string]bool{}
	add := func(f *pflag.Flag) {
		if !f.Hidden && !seen[f.Name] {
			seen[f.Name] = true
			names = append(names, f.Name)
		}
	}
	c.Flags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	sort.Strings(names)
	best, bestD := "", maxTypos+1
	for _, n := range names {
		if d := editDistance(strings.ToLower(typed), n); d < bestD {
			best, bestD = n, d
		}
	}
	if best != "" && 3*bestD <= max(len(typed), 3) {
		return "--" + best
	}
	var prefixed []string
	for _, n := range names {
		if len(typed) >= 3 && strings.HasPrefix(n, typed) {
			prefixed = append(prefixed, n)
		}
	}
	if len(prefixed) == 1 {
		return "--" + prefixed[0]
	}
	return ""
}

// editDistance is the optimal-string-alignment distance between a and b,
// in bytes (flag names are ASCII): the fewest insertions, deletions,
// substitutions and swaps of two neighbours that turn one into the other
// (Levenshtein's, with a swap one edit: --fromat is one typo from
// --format). A dozen lines over three rows of the table: cobra's own
// Levenshtein (for its command suggestions) is not exported, pflag has
// none, and no module the project uses offers one.
func editDistance(a, b string) int {
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
