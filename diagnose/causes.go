package diagnose

// The cause IDs: a stable contract, in JSON and in `graphdiff explain`.
const (
	FrozenRNG           = "frozen_rng"
	StaleInput          = "stale_input"
	InputLag            = "input_lag"
	OutputAliasing      = "output_aliasing"
	UninitializedMemory = "uninitialized_memory"
	GradAccumulation    = "grad_accumulation"
	CapturedScalar      = "captured_scalar"
	CapturedBranch      = "captured_branch"
	AutocastCache       = "autocast_cache"
	DynamicShape        = "dynamic_shape"
	PrecisionNoise      = "precision_noise"
)

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

// Causes lists every cause graphdiff can name, in the order `graphdiff
// explain` lists them.
var Causes = []Explanation{
	{
		ID:    FrozenRNG,
		Title: "random values baked into the graph",
		What: `Random numbers drawn outside the graph's view at capture time — from a CPU
generator, from a CUDA generator not registered with the graph, or seeded
with a Python int — are recorded as constants: every replay reuses the
dropout masks or noise of the capture.`,
		Signature: `The runs agree at the capture step and differ from the first replay after it,
over most elements, with no simpler pattern: the graph does not lag the eager
run, does not repeat one batch, and its gradients do not accumulate.`,
		Confirm: `Dump the random tensor (mask or noise) at two steps of the graphed run: if
they are equal, it is frozen.`,
		Fix: `Draw random numbers inside the captured region from the default CUDA
generator, or register custom generators with the graph
(graph.register_generator_state(gen)); never pass Python-int seeds or
CPU-generated noise into captured code; use torch's graph-safe RNG ops.`,
	},
	{
		ID:    StaleInput,
		Title: "input tensor reassigned instead of copied",
		What: `The graph reads the static input tensor it was captured with. Assigning a new
tensor to the Python name (static_x = batch) changes nothing the graph sees,
so every replay computes on the capture-time batch.`,
		Signature: `The graph behaves as if fed one batch: its outputs barely change from step
to step while the eager run's change with every batch, and its gradients'
zero pattern (from ReLUs) repeats step after step.`,
		Confirm: `Dump the graph's static input tensor after a few steps: it still holds the
first batch.`,
		Fix: `Copy new data into the static input in place: static_x.copy_(batch)
(and keep the static tensors alive for the graph's lifetime).`,
	},
	{
		ID:    InputLag,
		Title: "data copied after replay, or a pinned-memory race",
		What: `The new batch reaches the static input after the replay that should use it —
copy_ after g.replay(), or an asynchronous host-to-device copy from pinned
memory that is overwritten before it completes — so step k computes on the
batch of step k−1.`,
		Signature: `The graph's step k matches the eager run's step k−1 (loss, outputs and
gradients far closer to the previous eager step than to the same one).`,
		Confirm: `Dump the static input right before each replay; compare with the batch the
step should use.`,
		Fix: `Copy the batch into the static input before g.replay(); when copying from
pinned memory with non_blocking=True, synchronize (or record an event) before
the host buffer is reused.`,
	},
	{
		ID:    OutputAliasing,
		Title: "kept references to a static output",
		What: `The graph writes its outputs into the same static tensors at every replay.
Keeping a reference (losses.append(static_loss)) instead of a copy means every
kept value is overwritten by the next replay.`,
		Signature: `Some of the graph's values (loss, outputs) are identical at every step and
equal to the eager run's last step, while the eager values change.`,
		Confirm: `Print the kept values' data_ptr(): they are all the same tensor.`,
		Fix: `Clone outputs you keep past the next replay (static_loss.detach().clone(),
or .item() for scalars) before calling g.replay() again.`,
	},
	{
		ID:    UninitializedMemory,
		Title: "memory read before it is written",
		What: `A buffer made with torch.empty, or memory the graph's private pool reuses,
is read before it is written: the graph computes on whatever the memory held.`,
		Signature: `The runs differ from the very first step, before any replay-order bug could
act; values may be NaN, Inf or huge where the eager run has none, or come
from an unrelated tensor.`,
		Confirm: `Run the graphed code with torch.use_deterministic_algorithms(True) (which
fills torch.empty with NaN) or compute-sanitizer --tool initcheck.`,
		Fix: `Initialise buffers (torch.zeros, or fill_ before use); do not read tensors
freed before capture; keep tensors the graph uses alive.`,
	},
	{
		ID:    GradAccumulation,
		Title: "gradients not zeroed between replays",
		What: `backward() accumulates into .grad. If the grads are not zeroed or set to None
inside the captured step, each replay adds its gradient to the previous one.`,
		Signature: `The graph's gradient at step k equals its gradient at k−1 plus one that
matches the eager gradient, and gradient norms grow with k relative to eager.`,
		Confirm: `Dump .grad after two replays on the same batch: the second is twice the
first.`,
		Fix: `Let the captured backward allocate the grads: call
optimizer.zero_grad(set_to_none=True) right before capture, as PyTorch's
whole-network example does; or zero them inside the captured step
(p.grad.zero_() before backward()).`,
	},
	{
		ID:    CapturedScalar,
		Title: "a Python scalar frozen at capture (learning rate, loss weight, step, loss scale)",
		What: `A Python float or int used inside the captured code — a learning rate changed
by a scheduler, a loss weight, a step counter, a loss scale — is baked into the
graph's kernels as a constant at capture; later changes never reach it.`,
		Signature: `The difference is proportional: gradients or parameter updates equal the
eager ones times a factor other than 1 (cosine ≈ 1), starting at the step
where the scalar first changes; with only losses dumped, the losses differ by
a drifting factor.`,
		Confirm: `Log the scalar on both sides; in the graphed run, put it in a tensor and
check whether the kernels read it.`,
		Fix: `Keep changing scalars in device tensors updated in place (lr_tensor.fill_(lr));
use capturable optimizers (Adam(capturable=True)) and schedulers that write
tensors; never branch on or multiply by Python numbers that change.`,
	},
	{
		ID:    CapturedBranch,
		Title: "a Python if decided at capture",
		What: `Python control flow runs once, at capture. A condition on the step counter,
a schedule or a data-dependent value picks one branch, and every replay
repeats it.`,
		Signature: `The runs agree exactly for several steps and break at one step — when the
eager run takes the other branch — by a term that is not proportional to the
eager values (a loss term switched on or off, a tensor constantly zero).`,
		Confirm: `Find Python conditions in the captured code that depend on the step or on
tensor values (.item(), bool(tensor)).`,
		Fix: `Capture one graph per branch and choose the graph in Python, or express the
branch on the device (torch.where, multiplying by a 0/1 tensor).`,
	},
	{
		ID:    AutocastCache,
		Title: "autocast cache across capture: stale casted weights",
		What: `With autocast's cache enabled around capture, the low-precision copies of the
weights made at capture are baked into the graph: later parameter updates
never reach the forward pass.`,
		Signature: `Only under autocast (compute dtype narrower than the dumps): the runs agree
at the capture step, then drift apart step by step beyond the compute
dtype's noise while staying strongly correlated.`,
		Confirm: `Capture with torch.autocast(..., cache_enabled=False) and compare again.`,
		Fix: `Use torch.autocast(device_type="cuda", dtype=..., cache_enabled=False)
around capture (torch.cuda.make_graphed_callables requires it).`,
	},
	{
		ID:    DynamicShape,
		Title: "shape differs from the captured one",
		What: `A graph is captured for fixed shapes. Batches of another size are padded,
truncated or copied into part of the static input, and the rest of the
static tensor keeps stale values.`,
		Signature: `Tensors whose shapes differ between the runs at some steps, or a tail of a
tensor that never changes in the graphed run.`,
		Confirm: `Log the batch size at every step; compare with the captured shape.`,
		Fix: `Bucket shapes and capture one graph per bucket, pad inputs to the captured
shape with masking, or drop the last incomplete batch (drop_last=True).`,
	},
	{
		ID:    PrecisionNoise,
		Title: "not a bug: rounding differences",
		What: `Eager and graphed runs may pick different kernels or fuse operations
differently (capturable optimizers, for one), so results differ in the last
bits, and training amplifies that over steps.`,
		Signature: `Differences within the dtype's noise, with no structure: no proportional
factor, no lag, no repetition.`,
		Confirm: `Compare two eager runs (--baseline RUN2): the graph should differ from the
eager run about as much as the eager runs differ from each other.`,
		Fix: `Nothing to fix. If the verdict fails on noise alone, give --baseline or
loosen the thresholds for that dtype in a policy file.`,
	},
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
