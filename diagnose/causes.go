package diagnose

// Explanation is everything graphdiff says about one cause.
type Explanation struct {
	ID string
	// Title is one line: what happened.
	Title string
	// What goes wrong in the graph.
	What string
	// Signature is how it shows in dumps, and what graphdiff measures.
	Signature string
	// Confirm says how to make sure.
	Confirm string
	// Fix is the remedy, as PyTorch's and NVIDIA's CUDA-graph guides give it.
	Fix string
}

// causeTable lists every cause: its explanation and its detector, in the
// order the detectors run on a failing comparison (later detectors
// discount what earlier ones explain), and, as listed, its place in the
// order `graphdiff explain` lists them. Adding a cause is one file (its
// ID, explanation and detector) and one entry here.
var causeTable = []struct {
	*Explanation
	detect detector
	listed int
}{
	{&missingStepsCause, missingSteps, 13},
	{&dynamicShapeCause, dynamicShape, 12},
	{&gradsZeroNotNoneCause, gradsZeroNotNone, 7},
	{&outputAliasingCause, outputAliasing, 3},
	{&gradAccumulationCause, gradAccumulation, 5},
	{&inputLagCause, inputLag, 2},
	{&staleInputCause, staleInput, 1},
	{&capturedScalarCause, capturedScalar, 8},
	{&callablesAccumulationCause, callablesAccumulation, 6},
	{&capturedBranchCause, capturedBranch, 10},
	{&uninitializedMemoryCause, uninitializedMemory, 4},
	{&autocastCacheCause, autocastCache, 11},
	{&reassignedTensorCause, reassignedTensor, 9},
	{&frozenRNGCause, frozenRNG, 0},
	{&noiseDriftCause, noiseDrift, 15},         // a warning on passing comparisons only
	{&needsBaselineCause, needsBaseline, 16},   // a warning on failing comparisons only
	{&precisionNoiseCause, precisionNoise, 14}, // not a bug: last, whatever was found
}

// Causes lists every cause graphdiff can name, in the order `graphdiff
// explain` lists them.
var Causes = func() []Explanation {
	out := make([]Explanation, len(causeTable))
	for _, c := range causeTable {
		out[c.listed] = *c.Explanation
	}
	return out
}()

// detectors returns the detectors of a failing comparison, in the order
// they run.
func detectors() []detector {
	out := make([]detector, 0, len(causeTable))
	for _, c := range causeTable {
		if c.ID != NeedsBaseline { // a warning, run apart (Diagnose)
			out = append(out, c.detect)
		}
	}
	return out
}

// Explain returns the explanation of a cause, and whether the ID is known.
func Explain(id string) (Explanation, bool) {
	for _, c := range Causes {
		if c.ID == id {
			return c, true
		}
	}
	return Explanation{}, false
}

// fixOf returns a cause's fix in one paragraph.
func fixOf(id string) string {
	e, _ := Explain(id)
	return oneLine(e.Fix)
}

// causeIDs are the IDs of actual bugs: every cause but precision_noise,
// noise_drift and needs_baseline,
// in the order graphdiff explain lists them.
var causeIDs = func() []string {
	var out []string
	for _, c := range Causes {
		if c.ID != PrecisionNoise && c.ID != NoiseDrift && c.ID != NeedsBaseline {
			out = append(out, c.ID)
		}
	}
	return out
}()
