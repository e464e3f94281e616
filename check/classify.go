package check

import (
	"fmt"
	"slices"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// sides is what classifying a pair knows of it: each run's entry, when it
// holds the pair and it was read (nil otherwise), and the error that kept
// it from being read (nil when it was read, or the run does not hold it).
type sides struct {
	Name       string
	Step       int
	Kind       loaders.Kind
	A, B       *loaders.Entry
	ErrA, ErrB error
	// RootA and RootB name the runs, for the reasons.
	RootA, RootB string
}

// class is what can be said of a pair before it is compared.
type class int

const (
	// unlisted: neither run could read the pair; both errors are
	// discovery's, reported as such.
	unlisted class = iota
	// ignored: a policy rule leaves the pair out.
	ignored
	// settled: the pair is not compared, and its result is known
	// (missing, extra, unreadable, differing shapes, or real against
	// complex).
	settled
	// toCompare: both sides were read and can be compared.
	toCompare
)

// classification is a pair's class, with what goes into its result: the
// descriptions of its two sides, its settings (for a pair to compare or
// ignored), and for a settled pair its decision and error.
type classification struct {
	class    class
	A, B     *loaders.Meta
	Settings tolerances.Settings
	Decision judge.Decision
	Err      error
}

// classify decides what can be said of a pair before comparing it, with
// the settings resolver gives it in precision p. It reads no file.
func classify(s sides, resolver tolerances.Resolver, p tolerances.Precision) classification {
	if s.A == nil && s.B == nil {
		return classification{class: unlisted}
	}
	c := classification{class: settled}
	if s.A != nil {
		c.A = s.A.Meta()
	}
	if s.B != nil {
		c.B = s.B.Meta()
	}
	fail := func(status judge.Status, reason string) classification {
		c.Decision = judge.Decision{Status: status, Reasons: []string{reason}}
		return c
	}
	switch {
	case s.B == nil && s.ErrB != nil:
		c.Err = s.ErrB
		return fail(judge.StatusError, "could not be read in "+s.RootB)
	case s.A == nil && s.ErrA != nil:
		c.Err = s.ErrA
		return fail(judge.StatusError, "could not be read in "+s.RootA)
	case (s.B == nil && s.A.Hyper) || (s.A == nil && s.B.Hyper):
		// an optimizer's hyperparameter one run holds as a tensor (a
		// capturable optimizer's lr) and the other as a Python number,
		// which no loader reads: the same setting in another container
		c.class = ignored
		return c
	case s.B == nil:
		return fail(judge.StatusMissing, "not in "+s.RootB)
	case s.A == nil:
		return fail(judge.StatusExtra, "not in "+s.RootA)
	}
	c.Settings = resolver.Resolve(s.Name, s.Kind, c.A.Effective(), c.B.Effective(), p.ComparisonCompute())
	switch {
	case c.Settings.Ignore:
		c.class = ignored
	case !slices.Equal(s.A.Shape, s.B.Shape):
		return fail(judge.StatusShapeMismatch, fmt.Sprintf("shape %s in %s, %s in %s",
			loaders.FormatShape(s.A.Shape), s.RootA, loaders.FormatShape(s.B.Shape), s.RootB))
	case s.A.DType.Components() != s.B.DType.Components():
		return fail(judge.StatusDTypeMismatch, fmt.Sprintf("dtype %s in %s, %s in %s", s.A.DType, s.RootA, s.B.DType, s.RootB))
	default:
		c.class = toCompare
	}
	return c
}

// result is the result of a pair classified settled or ignored.
func (c classification) result(s sides) judge.TensorResult {
	return judge.TensorResult{Pair: judge.Pair{Name: s.Name, Step: s.Step, Kind: s.Kind, A: c.A, B: c.B, Settings: c.Settings},
		Decision: c.Decision, Err: c.Err}
}
