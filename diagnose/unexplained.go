package diagnose

import (
	"fmt"
	"slices"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// Unexplained is the answer for a failing comparison no cause's prediction
// fits: where the runs part, the causes that part there the same way and
// that these dumps cannot test, and the dumps that would.
type Unexplained struct {
	// Step is the first divergent step; Name the pair that first departs
	// there ("" when none was named).
	Step int
	Name string
	// Where is how the break sits in the dumped steps: FirstDumped,
	// FirstReplay (the step after the first dumped one, where a value
	// fixed at capture first acts) or Later.
	Where string
	// Candidates are the cause IDs that break there and whose prediction
	// these dumps cannot test; Dumps are the dumps that would, each a
	// phrase ("the inputs as the graph read them at two replays").
	Candidates, Dumps []string
}

// Where a break sits (Unexplained.Where).
const (
	FirstDumped = "first dumped step"
	FirstReplay = "first replay"
	Later       = "later"
)

// WhereWords says where the break sits, in words.
func (u *Unexplained) WhereWords() string {
	switch u.Where {
	case FirstDumped:
		return "the first dumped step"
	case FirstReplay:
		return "the first replay after the first dumped step"
	}
	return "a break after agreeing steps"
}

// unexplained returns the Unexplained answer of a failing comparison whose
// detectors named nothing: by where the break sits, the causes that break
// there and what would tell them apart. A candidate whose deciding dump
// is present (inputs for a stale or late input, say) was tested and did
// not fit, and is left out.
func (f *facts) unexplained() *Unexplained {
	if f.div == loaders.NoStep || f.r.FirstDivergence == nil {
		return nil
	}
	u := &Unexplained{Step: f.div, Name: f.r.FirstDivergence.Name}
	inputs := f.s.kinds[loaders.KindInput]
	add := func(cause, dump string, tested bool) {
		if !tested && !slices.Contains(u.Candidates, cause) {
			u.Candidates = append(u.Candidates, cause)
			if dump != "" {
				u.Dumps = append(u.Dumps, dump)
			}
		}
	}
	if f.readOtherInputs() {
		// the taps at two steps after the break were tested by both
		// causes' predictions, and fit neither: the static input is
		// what is left to dump
		dump := "the first tapped module's output, or the static input the graph reads, at two steps: a stale batch repeats, a lagging one is the step before's"
		if len(f.afterBreak(loaders.KindActivation)) > 0 {
			dump = "the static input the graph reads, at two steps: a stale batch repeats, a lagging one is the step before's"
		}
		add(StaleInput, "", false)
		add(InputLag, dump, false)
		inputs = false // tested by the taps, and fitting: not to be left out below
	}
	switch p, ok := f.s.prev(f.div); {
	case f.div == f.firstStep && f.inference():
		// every dumped batch of an inference run is a replay: what was
		// fixed at capture acts from the first; another dumped batch read
		// would have shown as eager's outputs of another step
		// (batchesRead), one batch held as outputs that repeat
		// (staleInput's test)
		u.Where = FirstDumped
		add(FrozenRNG, "the random tensors (dropout masks, noise) at two batches of the graphed run", false)
		add(CapturedScalar, "the Python numbers the forward reads (a temperature, a position) at capture and at the first dumped batch", false)
		add(ReassignedTensor, "the tensors the model reads besides its parameters, their data_ptr() at capture and at the first dumped batch", false)
		add(UninitializedMemory, "compute-sanitizer --tool initcheck, or torch.use_deterministic_algorithms(True) (torch.empty filled with NaN)", false)
	case f.div == f.firstStep:
		u.Where = FirstDumped
		add(UninitializedMemory, "compute-sanitizer --tool initcheck, or torch.use_deterministic_algorithms(True) (torch.empty filled with NaN)", false)
		if !f.fromStart() {
			// dumps that begin mid-run: a lag or a stale batch that acted
			// from the first replay, before them, parts them there too
			add(InputLag, "the inputs as the graph read them at two replays", inputs)
			add(StaleInput, "", inputs)
			// and so do gradients accumulated over the replays before
			// them, where no two consecutive steps' gradients (dumped, or
			// derived from an optimizer's state) test the sum
			add(GradAccumulation, "the gradients, or the optimizer's state, at two consecutive steps: accumulated, each gradient is the one before plus eager's", f.consecutiveGrads())
			// and, under autocast, the weights' casts cached at capture,
			// stale from the first replay on
			if f.autocast() {
				add(AutocastCache, "the same run captured under torch.autocast(..., cache_enabled=False), or dumps from the capture step on: stale casts agree there and part at the first replay", false)
			}
		}
		u.Dumps = append(u.Dumps, "a baseline, the reference run from weights one ULP apart (--baseline): rounding amplified by training parts runs the same way",
			"dumps from the first training step: a bug acting before the dumps began parts them the same way")
	case ok && p == f.firstStep:
		u.Where = FirstReplay
		add(FrozenRNG, "the random tensors (dropout masks, noise) at two steps", false)
		add(StaleInput, "the inputs as the graph read them at two replays", inputs)
		add(InputLag, "", inputs)
		add(CapturedScalar, "the Python numbers the step reads (learning rate, loss weights, a drawn timestep or mixing factor) at two steps", false)
	default:
		u.Where = Later
		if gap := f.gapBefore(); gap > 1 {
			u.Dumps = append(u.Dumps, fmt.Sprintf("every step from %d to %d (these dumps are %d steps apart): the step the runs part at, and whether the difference lasts past it", p, f.div, gap))
		}
		if f.inference() {
			add(ReassignedTensor, "the cache and buffers the graph reads, their data_ptr() at capture and at the break (a cache rebuilt after capture has moved)", false)
		}
		branch := "the loss's terms apart, or the value the branch tests, at the steps around the break"
		if f.inference() {
			branch = "the value the branch tests, at the steps around the break"
		}
		add(CapturedBranch, branch, false)
		add(DynamicShape, "the inputs or outputs, whose shapes would show a batch of another size", inputs || f.s.kinds[loaders.KindOutput] || f.inference())
		add(CapturedScalar, "the Python numbers the step reads at the steps around the break", false)
	}
	return u
}

// readOtherInputs reports whether the taps show the graph reading inputs
// other than the ones dumped: at the first divergent step the first tapped
// module in forward order departs while every dumped input agrees bit for
// bit (a stale or lagging input's prediction, which the dumped inputs
// alone cannot test: they are the batch the loop meant, not the static
// tensor the graph read).
func (f *facts) readOtherInputs() bool {
	m := f.r.FirstModule
	if m == nil || m.Backward || m.Input != "" {
		return false
	}
	seen := false
	for _, t := range f.r.Tensors {
		if t.Step != m.Step || t.Kind != loaders.KindInput {
			continue
		}
		if t.Metrics == nil || t.Status != judge.StatusMatch || !t.Metrics.Identical() {
			return false
		}
		seen = true
	}
	return seen
}

// consecutiveGrads reports whether both runs sampled gradients (dumped,
// or derived from an optimizer's state) at a diverged step and at the
// sampled step before it, one step apart: what grad_accumulation's
// prediction, each gradient the one before plus eager's, is tested on.
func (f *facts) consecutiveGrads() bool {
	for _, k := range f.diverged[loaders.KindGrad] {
		if p, ok := f.s.prev(k); ok && p == k-1 {
			if a, _, _, _ := f.four(loaders.KindGrad, k, p); a != nil {
				return true
			}
		}
	}
	return false
}

// autocast reports whether the runs computed in a narrower dtype than
// their floating-point dumps hold (autocast's compute dtype).
func (f *facts) autocast() bool {
	compute, stored := f.r.Precision.Compute, f.storedFloat()
	return compute != loaders.Invalid && stored != loaders.Invalid && tolerances.Epsilon(compute) > tolerances.Epsilon(stored)
}
