package diagnose

import (
	"github.com/graphdiff/graphdiff/loaders"
)

// ReassignedTensor is the ID of the cause "a tensor attribute reassigned
// after capture".
const ReassignedTensor = "reassigned_tensor"

// reassignedTensorCause is what `graphdiff explain reassigned_tensor` prints.
var reassignedTensorCause = Explanation{
	ID:    ReassignedTensor,
	Title: "a tensor attribute reassigned after capture",
	What: `The graph reads tensors by address. Replacing a tensor the graph reads with a
new one (model.temperature = torch.tensor(t), self.mask = new_mask,
optimizer.param_groups[0]["lr"] = torch.tensor(lr)) leaves the graph reading
the old block. Once nothing references it, the caching allocator frees the
block and may hand it to the next allocation: the graph then reads the old
value, another tensor's data, or whatever the block holds at replay.`,
	Signature: `The runs agree up to the first replay after the value changes; from then on
the forward's numbers (loss, outputs, gradients) differ, close to a scale of
the eager ones but not exactly one (the value acts inside the network),
while the inputs agree. A Python number frozen at capture inside the
forward leaves the same mark (captured_scalar); a value read from freed
memory may also jump from step to step.`,
	Confirm: `Search the training loop for assignments to attributes the captured code
reads (module buffers, tensors in closures, optimizer param_group entries);
print their data_ptr() at capture and at a later step: it changed.`,
	Fix: `Update tensors the graph reads in place: model.temperature.fill_(t) or
.copy_(new), never rebind them; keep every tensor the graph reads alive for
as long as the graph is replayed.`,
}

// reassignedTensor: the forward's numbers differ from the first divergent
// step on by close to, but not exactly, a scale of the eager ones (what
// scaleAt reports as a non-exact gradient scale, capturedScalar's forward
// case), the inputs agree, and autocast's stale casts do not explain it
// better. It cannot be told from a Python number frozen inside the
// forward, so its confidence stays at 0.6 and the evidence says what would
// decide.
func reassignedTensor(f *facts) *Cause {
	if f.div == loaders.NoStep || f.explained(AutocastCache, InputLag, StaleInput, GradAccumulation, OutputAliasing, DynamicShape) >= 0.6 {
		return nil
	}
	fs := f.forwardScale()
	if fs == nil {
		return nil
	}
	var ev evidence
	ev.add("step %d: the forward's numbers changed with the inputs unchanged: the graphed gradients are close to the eager ones × %s (cosine %.4f), but not a scale up to rounding (the residual %s of their norm is above the step's gradient noise limit %s): a value read inside the network differs",
		fs.step, ratioString(fs.ratio), fs.cos, g(fs.residual), g(fs.limit))
	ev.add("a tensor attribute reassigned after capture and a Python number frozen inside the forward leave this same mark; print the data_ptr() of the tensors the captured code reads (buffers, tensors in closures) at capture and now: a changed one decides it")
	return &Cause{ID: ReassignedTensor, Confidence: 0.6, Evidence: ev}
}
