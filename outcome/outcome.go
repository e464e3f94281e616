// Package outcome holds the finished values the renderers take: a
// Comparison of two runs and an Inspection of one. Package check makes
// them; package report renders them without importing the pipeline.
package outcome

import (
	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// Comparison is a finished check of two runs: the judged result, its
// diagnosis and the loss-curve analysis.
type Comparison struct {
	*judge.Result
	// Causes are the likely causes, highest confidence first; Warnings the
	// structured differences found inside the thresholds.
	Causes, Warnings []diagnose.Cause
	// Unexplained is set on a failing comparison no cause was named for:
	// where the runs part, what could still explain it and the dumps that
	// would tell.
	Unexplained *diagnose.Unexplained
	// Curve is the analysis of the runs' loss curves, nil when they hold
	// none.
	Curve *curve.Result
	// Strict is set when warnings fail the verdict (--strict).
	Strict bool
	// Baseline says how the baseline run served the comparison (which
	// pairs it held, whether it measured any noise, the steps it was too
	// far from the reference to be used at); nil without one.
	Baseline *judge.BaselineUse
	// Renames are the tensors the two runs seem to hold under two names;
	// the pairs they name are missing and extra, and no cause is
	// diagnosed from them.
	Renames []Rename
}

// Rename is a tensor that the two runs seem to hold under two names: at
// each of Steps the reference run alone holds A and the other run alone
// holds B, of one kind, shape and dtype.
type Rename struct {
	A, B  string
	Kind  loaders.Kind
	Shape []int
	DType loaders.DType
	Steps []int
	// Flag is the rename that pairs them (graphdiff compare --rename).
	Flag loaders.Rename
}

// TensorSummary is one row of an inspection: a run entry and its values'
// statistics.
type TensorSummary struct {
	Name string
	Step int
	Kind loaders.Kind
	loaders.Meta
	compare.Summary
}

// Inspection is what `graphdiff inspect` reports about one run.
type Inspection struct {
	// Root is the run directory or file inspected.
	Root string
	// Manifest is the run's manifest, nil when it has none.
	Manifest *loaders.Manifest
	// Tensors are the readable tensors, in entry order (step, kind, name).
	Tensors []TensorSummary
	// Errors are the files and tensors that could not be read, each an
	// *loaders.Error naming the file; the rest are still listed.
	Errors []error
}
