package diagnose

import (
	"fmt"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// CallablesAccumulation is the ID of the cause "graphed modules' gradients
// wrong under micro-batch accumulation".
const CallablesAccumulation = "callables_accumulation"

// callablesAccumulationCause is what `graphdiff explain callables_accumulation` prints.
var callablesAccumulationCause = Explanation{
	ID:    CallablesAccumulation,
	Title: "graphed modules' gradients wrong under micro-batch accumulation",
	What: `torch.cuda.make_graphed_callables captures each module's forward and backward
separately. Run twice before an optimizer step (gradient accumulation over
micro-batches), the graphed backward reuses static buffers that the second
micro-batch overwrites before the first one's gradient has been accumulated,
so the graphed modules' parameters get other gradients than eager's
(PyTorch issue 181723 reproduces this on torch 2.11). Gradients left over from
warm-up iterations (not zeroed before the first replay) look the same in the
dumps.`,
	Signature: `At the first divergent step the loss agrees with the eager run's (the forward
computed the same numbers) while the gradients differ far beyond rounding,
and not by a scale factor or by the previous step's gradient: the backward
alone went wrong.`,
	Confirm: `Run one micro-batch per optimizer step: the gradients then agree. Or dump the
gradients after each micro-batch's backward and compare them with eager's.`,
	Fix: `Capture the whole accumulation loop as one graph (torch.cuda.graph around
all micro-batches and the step), or call the graphed callables once per
optimizer step; zero the gradients (set_to_none=True) before the first
replay.`,
}

// callablesAccumulation: at the first divergent step the losses agree bit
// for bit (the forward computed the same numbers: a loss that merely
// passes may hide a small change in the forward, such as a frozen random
// mask) while some gradient fails, and the causes that explain a gradient
// difference with the forward intact (a scale factor: captured_scalar; the
// previous step's gradient added: grad_accumulation) were not found. The
// difference is then in the backward. 0.8 when it is at the first
// training step (nothing the replays carry over can be involved), 0.65
// later or at the first step of dumps that begin mid-run, where
// gradients accumulated over the replays before them leave the same
// mark (alternatives lists grad_accumulation beside it).
//
// Prediction: the graphed backward adds to gradients the eager backward
// writes afresh (make_graphed_callables with micro-batch accumulation), so
// the forward is eager's, bit for bit, and only gradients differ.
func callablesAccumulation(f *facts) *Cause {
	if f.div == loaders.NoStep || f.explained(GradAccumulation, CapturedScalar, GradsZeroNotNone, DynamicShape, OutputAliasing) >= 0.6 {
		return nil
	}
	lossBitwise, gradFails := false, 0
	var worst *judge.TensorResult
	for _, t := range f.r.Tensors {
		if t.Step != f.div || t.Metrics == nil {
			continue
		}
		switch t.Kind {
		case loaders.KindLoss:
			if t.Status != judge.StatusMatch || t.Metrics.RelL2 != 0 {
				return nil
			}
			lossBitwise = true
		case loaders.KindGrad:
			if t.Status == judge.StatusMismatch {
				gradFails++
				if worst == nil || t.Metrics.RelL2 > worst.Metrics.RelL2 {
					worst = t
				}
			}
		}
	}
	if !lossBitwise || gradFails == 0 {
		return nil
	}
	var ev evidence
	ev.add("step %d: the loss agrees bit for bit while %d gradients differ (worst %s, relative L2 %s): the forward computed the same numbers, the backward did not",
		f.div, gradFails, worst.Name, g(worst.Metrics.RelL2))
	if a, b := f.s.get(f.s.a, f.div, loaders.KindGrad), f.s.get(f.s.b, f.div, loaders.KindGrad); a != nil {
		ev.add("the gradients at step %d are not a scale of the eager ones (cosine %.3f, norm ratio %s)", f.div, cosine(a, b), g(norm(b)/norm(a)))
	}
	conf := 0.65
	if f.div == f.firstStep && !f.midRunStart(f.div) {
		conf = 0.8
		ev.add("%s", fmt.Sprintf("it starts at step %d, the first step: no value carried from replay to replay is involved", f.div))
	}
	return &Cause{ID: CallablesAccumulation, Confidence: conf, Evidence: ev}
}
