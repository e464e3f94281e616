package loaders

import (
	"fmt"
	"strings"
)

// Kind is the role of a tensor in a training step.
type Kind string

// The kinds, in the order a step produces them: the loss first, then the
// gradients, then the updated parameters. Comparisons report a step's
// tensors in this order, so the first divergence names the earliest
// quantity that went wrong.
const (
	KindLoss   Kind = "loss"
	KindGrad   Kind = "grad"
	KindParam  Kind = "param"
	KindInput  Kind = "input"
	KindOutput Kind = "output"
	// KindActivation is a module's output in the forward pass, and
	// KindActivationGrad the gradient that flowed into it in the backward
	// pass, as the dump helper's taps keep them (Taps: each named by its
	// module, in the forward order the manifest records).
	KindActivation     Kind = "activation"
	KindActivationGrad Kind = "activation_grad"
	KindTensor         Kind = "tensor"
)

var kindOrder = map[Kind]int{KindLoss: 0, KindGrad: 1, KindParam: 2, KindInput: 3, KindOutput: 4,
	KindActivation: 5, KindActivationGrad: 6, KindTensor: 7}

// Rank returns the kind's position in the order above (unknown kinds last).
func (k Kind) Rank() int {
	if r, ok := kindOrder[k]; ok {
		return r
	}
	return len(kindOrder)
}

// ParseKind returns the kind named s (one of the constants above).
func ParseKind(s string) (Kind, error) {
	if _, ok := kindOrder[Kind(s)]; ok {
		return Kind(s), nil
	}
	return "", fmt.Errorf("unknown kind %q (want loss, grad, param, input, output, activation, activation_grad or tensor)", s)
}

var kindWords = map[string]Kind{
	"loss": KindLoss, "losses": KindLoss,
	"grad": KindGrad, "grads": KindGrad, "gradient": KindGrad, "gradients": KindGrad,
	"param": KindParam, "params": KindParam, "parameter": KindParam, "parameters": KindParam,
	"weight": KindParam, "weights": KindParam,
	"input": KindInput, "inputs": KindInput,
	"output": KindOutput, "outputs": KindOutput,
	"activation": KindActivation, "activations": KindActivation,
	"activation_grad": KindActivationGrad, "activation_grads": KindActivationGrad,
}

// KindOf returns the kind a tensor name says: the first '/'-separated
// component of the name that is one of the words loss(es), grad(s),
// gradient(s), param(s), parameter(s), weight(s), input(s), output(s),
// activation(s), activation_grad(s) (case ignored). Without one, a component that names a
// model's state_dict or a checkpoint of it (model, state_dict,
// model_state_dict, module, ckpt, checkpoint, pytorch_model: what
// torch.save({"model": model.state_dict(), ...}), ckpt_1003.pt and
// Hugging Face's pytorch_model.bin are named by) makes the tensor a param, unless a component names an
// optimizer's state (optimizer, optim, optimizer_state_dict, opt_state)
// or an exponential moving average (ema, or a key ema.*), whose tensors follow their own
// update rule, and so are the buffers a state_dict holds beside the
// parameters (isBuffer: BatchNorm's running_mean, running_var,
// num_batches_tracked), which no optimizer steps: those are tensors,
// judged alone. (Under a kind word, params/bn.running_mean, the dump has
// called the buffer a parameter, and it is one.) Else KindTensor.
// "fc1.weight" is one component, so a bare parameter name is a tensor, not
// a param.
func KindOf(name string) Kind {
	k, _, _ := kindComponent(name)
	return k
}

// bufferSuffixes end the names of the buffers torch.nn's normalization
// layers keep beside their parameters (BatchNorm's running statistics and
// its counter): state derived from the batches by an update rule of its
// own, not an optimizer's step, under whatever component the dump put it.
var bufferSuffixes = []string{"running_mean", "running_var", "num_batches_tracked"}

// isBuffer reports whether name's last component is such a buffer's:
// bn1.running_mean, or running_mean alone.
func isBuffer(name string) bool {
	leaf := name[strings.LastIndexByte(name, '/')+1:]
	for _, s := range bufferSuffixes {
		if leaf == s || strings.HasSuffix(leaf, "."+s) {
			return true
		}
	}
	return false
}

// stateWords name a model's state_dict or a checkpoint of it; otherWords
// name state of another kind beside it (see KindOf).
var (
	stateWords = map[string]bool{"model": true, "state_dict": true, "model_state_dict": true, "module": true,
		"ckpt": true, "checkpoint": true, "pytorch_model": true}
	otherWords = map[string]bool{"optimizer": true, "optim": true, "optimizer_state_dict": true, "opt_state": true,
		"ema": true}
)

// kindComponent returns the kind KindOf gives name and the byte range
// [start, end) of the component it read it from (0, 0 for none).
func kindComponent(name string) (k Kind, start, end int) {
	state, stateStart, stateEnd, other := false, 0, 0, false
	for c := range strings.SplitSeq(name, "/") {
		end = start + len(c)
		lower := strings.ToLower(c)
		if k, ok := kindWords[lower]; ok {
			return k, start, end
		}
		if stateWords[lower] && !state {
			state, stateStart, stateEnd = true, start, end
		}
		other = other || otherWords[lower] || strings.HasPrefix(lower, "ema.") // ema/w, or a state_dict's ema.w
		start = end + 1
	}
	if state && !other && !isBuffer(name) {
		return KindParam, stateStart, stateEnd
	}
	return KindTensor, 0, 0
}

// Subject returns the name without the component KindOf read its kind
// from: "grads/fc1.weight", "params/fc1.weight" and "model/fc1.weight" are
// all "fc1.weight", which is how a parameter finds its gradient. A name
// without a kind word is its own subject.
func Subject(name string) string {
	// the component in place (diagnosis asks for the subject of every
	// pair): no allocation but where it sits in the middle
	_, start, end := kindComponent(name)
	switch {
	case start == end:
		return name
	case start == 0 && end == len(name):
		return ""
	case start == 0:
		return name[end+1:]
	case end == len(name):
		return name[:start-1]
	}
	return name[:start] + name[end+1:]
}
