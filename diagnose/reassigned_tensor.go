package diagnose

import (
	"sort"

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
optimizer.param_groups[0]["lr"] = torch.tensor(lr), a KV cache made anew for
the next generation, cache = torch.zeros_like(cache), where cache.zero_()
was meant) leaves the graph reading the old block. Once nothing references it, the caching allocator frees the
block and may hand it to the next allocation: the graph then reads the old
value, another tensor's data, or whatever the block holds at replay.`,
	Signature: `The runs agree up to the first replay after the value changes; from then on
the forward's numbers (loss, outputs, gradients) differ, close to a scale of
the eager ones but not exactly one (the value acts inside the network),
while the inputs agree. A Python number frozen at capture inside the
forward leaves the same mark (captured_scalar); a value read from freed
memory may also jump from step to step. A decoding whose cache was made
anew agrees through the first generation and parts, every sequence at
once, at the first step of the next: outputs alone cannot tell that from a
branch or a number frozen at capture, and the answer says so.`,
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
// better. What the dumps hold decides how sure it is (see
// scheduledBuffers): a buffer that changes every step, bit for bit the
// same in both runs, while the numbers it feeds diverge, is a value set
// from outside that the graph did not follow: 0.85. With parameters and
// gradients dumped and no such buffer, the value is no module buffer
// (captured_scalar leads): 0.5. Without them: 0.5, saying which dump would
// decide.
//
// Where the taps place the break in a module whose input agrees and the
// module's output is eager's under an affine map per channel but under
// no single one (moduleChannels), the module reads a tensor of
// per-channel values held at capture: 0.6, the prediction tested on the
// module's output (heldChannels).
//
// Prediction: a tensor the forward reads was replaced by a new object
// after capture, so the graph keeps reading the old one: its numbers are
// eager's with one value held, close to a scale of eager's, while a buffer
// the user sets each step changes in both runs alike.
func reassignedTensor(f *facts) *Cause {
	if f.div == loaders.NoStep || f.explained(AutocastCache, InputLag, StaleInput, GradAccumulation, OutputAliasing, DynamicShape) >= 0.6 {
		return nil
	}
	if cf := f.channels; cf != nil {
		return heldChannels(cf)
	}
	fs := f.forwardScale()
	if fs == nil {
		return nil
	}
	var ev evidence
	ev.add("step %d: the forward's numbers changed with the inputs unchanged: the graphed gradients are close to the eager ones × %s (cosine %.4f), but not a scale up to rounding (the residual %s of their norm is above the step's gradient noise limit %s): a value read inside the network differs",
		fs.step, ratioString(fs.ratio), fs.cos, g(fs.residual), g(fs.limit))
	bufs, couldSee := f.scheduledBuffers()
	conf := 0.5
	switch {
	case len(bufs) > 0:
		conf = 0.85
		ev.add("%s: changes at every step, bit for bit the same in both runs, while the numbers it feeds diverge: a value set from outside each step that the graph does not read (the graph reads the block of the tensor it replaced)", list(bufs, 3))
	case couldSee:
		ev.add("no buffer of the dumped state changes from step to step: the value is no module buffer; a tensor outside the module (a closure, optimizer state) reassigned, or a Python number frozen at capture (captured_scalar)")
	default:
		ev.add("a tensor reassigned after capture and a Python number frozen inside the forward leave this same mark; not dumped, and would decide it: parameters with their buffers (the state_dict) and gradients — a buffer set each step shows there")
	}
	return &Cause{ID: ReassignedTensor, Confidence: conf, Evidence: ev}
}

// scheduledBuffers returns the dumped parameters-kind tensors without a
// gradient in either run (buffers: BatchNorm's statistics, a scheduled
// temperature) whose reference value changes between dumped steps while
// both runs hold it bit for bit equal at every step, the divergent ones
// included: values set from outside the computation. couldSee is whether
// gradients and parameters were dumped, so that such a buffer would show.
func (f *facts) scheduledBuffers() (names []string, couldSee bool) {
	hasGrad := map[string]bool{}
	for _, t := range f.r.Tensors {
		if t.Kind == loaders.KindGrad {
			hasGrad[loaders.Subject(t.Name)] = true
		}
	}
	if len(hasGrad) == 0 {
		return nil, false
	}
	type seen struct{ moved, differs, pastDiv bool }
	bufs := map[string]*seen{}
	for _, t := range f.r.Tensors {
		s := loaders.Subject(t.Name)
		if t.Kind != loaders.KindParam || t.Step == loaders.NoStep {
			continue
		}
		couldSee = true // parameters are dumped: a buffer would be too
		if hasGrad[s] {
			continue
		}
		b := bufs[s]
		if b == nil {
			b = &seen{}
			bufs[s] = b
		}
		if t.Metrics == nil || t.Metrics.RelL2 != 0 {
			b.differs = true
		}
		if t.Update != nil && t.Update.MovedA > 0 {
			b.moved = true
		}
		if t.Step > f.div {
			b.pastDiv = true
		}
	}
	for s, b := range bufs {
		if b.moved && !b.differs && b.pastDiv {
			names = append(names, s)
		}
	}
	sort.Strings(names)
	return names, couldSee
}

// heldChannels is reassigned_tensor from the departing module's output:
// each channel of the graphed output is eager's scaled and shifted by
// values of its own, so the module read per-channel values (statistics,
// a per-channel scale) other than eager's, and no Python number, which
// would scale every channel alike. Random values drawn per channel
// outside torch's generator and frozen at capture leave the same mark;
// the evidence says which dump would tell.
func heldChannels(cf *channelFinding) *Cause {
	var ev evidence
	if cf.module == "" { // an inference run's output
		ev.add("step %d: the graphed %s is eager's scaled and shifted channel by channel (axis %d, %d channels): that prediction leaves %s of it (relative L2), within its limit %s, while one scale and shift for all leaves %s: the model read per-channel values held from capture (a per-class bias, a normalization's statistics), not a Python number, which maps every channel alike, nor another batch, which moves rows, not channels",
			cf.step, cf.name, cf.axis, cf.channels, g(cf.perChannel), g(cf.limit), g(cf.global))
		ev.add("random values drawn per channel outside torch's generator and frozen at capture leave the same mark; not dumped, and would decide it: the tensors the model reads besides its parameters (buffers, attributes set from the loop), their data_ptr() at capture and at the break")
		return fitSet{cf.fit}.set(&Cause{ID: ReassignedTensor, Confidence: 0.6, Evidence: ev},
			"graph = α_c·eager + β_c, channel by channel", "the "+cf.name+" difference from eager")
	}
	ev.add("step %d: the output of %s, whose input agrees, is eager's scaled and shifted channel by channel (axis %d, %d channels): that prediction leaves %s of it (relative L2), within its limit %s, while one scale and shift for all leaves %s: the module read per-channel values held from capture, not a Python number, which scales every channel alike",
		cf.step, cf.module, cf.axis, cf.channels, g(cf.perChannel), g(cf.limit), g(cf.global))
	ev.add("random values drawn per channel outside torch's generator and frozen at capture leave the same mark; not dumped, and would decide it: the tensors %s reads, their data_ptr() at capture and at the break", cf.module)
	return fitSet{cf.fit}.set(&Cause{ID: ReassignedTensor, Confidence: 0.6, Evidence: ev},
		"graph = α_c·eager + β_c, channel by channel", "the "+cf.module+" output's difference from eager")
}
