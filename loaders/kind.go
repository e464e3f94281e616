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
	KindTensor Kind = "tensor"
)

var kindOrder = map[Kind]int{KindLoss: 0, KindGrad: 1, KindParam: 2, KindInput: 3, KindOutput: 4, KindTensor: 5}

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
	return "", fmt.Errorf("unknown kind %q (want loss, grad, param, input, output or tensor)", s)
}

var kindWords = map[string]Kind{
	"loss": KindLoss, "losses": KindLoss,
	"grad": KindGrad, "grads": KindGrad, "gradient": KindGrad, "gradients": KindGrad,
	"param": KindParam, "params": KindParam, "parameter": KindParam, "parameters": KindParam,
	"weight": KindParam, "weights": KindParam,
	"input": KindInput, "inputs": KindInput,
	"output": KindOutput, "outputs": KindOutput, "activation": KindOutput, "activations": KindOutput,
}

// KindOf returns the kind a tensor name says: the first '/'-separated
// component of the name that is one of the words loss(es), grad(s),
// gradient(s), param(s), parameter(s), weight(s), input(s), output(s),
// activation(s) (case ignored), or KindTensor when none is. "fc1.weight" is
// one component, so a bare parameter name is a tensor, not a param.
func KindOf(name string) Kind {
	for c := range strings.SplitSeq(name, "/") {
		if k, ok := kindWords[strings.ToLower(c)]; ok {
			return k
		}
	}
	return KindTensor
}

// Subject returns the name without the component KindOf read its kind
// from: "grads/fc1.weight" and "params/fc1.weight" are both "fc1.weight",
// which is how a parameter finds its gradient. A name without a kind word
// is its own subject.
func Subject(name string) string {
	// components in place (diagnosis asks for the subject of every pair),
	// name[start:end] each
	start := 0
	for c := range strings.SplitSeq(name, "/") {
		end := start + len(c)
		if _, ok := kindWords[strings.ToLower(c)]; ok {
			switch {
			case start == 0 && end == len(name):
				return ""
			case start == 0:
				return name[end+1:]
			case end == len(name):
				return name[:start-1]
			}
			return name[:start] + name[end+1:]
		}
		start = end + 1
	}
	return name
}
