package loaders

import (
	"strings"
	"testing"
)

// TestSubject checks Subject against its definition (the name split at
// '/', without the first component that is a kind word, joined again) for
// names with the kind word first, last, in the middle, alone, in capitals,
// twice, absent, and with empty components.
func TestSubject(t *testing.T) {
	t.Parallel()
	byDefinition := func(name string) string {
		parts := strings.Split(name, "/")
		for i, c := range parts {
			if _, ok := kindWords[strings.ToLower(c)]; ok {
				return strings.Join(append(parts[:i:i], parts[i+1:]...), "/")
			}
		}
		return name
	}
	for _, name := range []string{
		"", "/", "//", "grads", "grads/fc1.weight", "params/fc1.weight", "model/grads/fc1.weight",
		"rank_0/GRADS/fc1", "fc1/grads", "a//grads", "/grads/x", "grads/params/x", "loss", "a/b/c",
		"grads/", "/grads", "activations/x/y", "x.grads/y",
	} {
		if got, want := Subject(name), byDefinition(name); got != want {
			t.Errorf("Subject(%q) = %q, want %q", name, got, want)
		}
	}
	if got := Subject("grads/fc1.weight"); got != "fc1.weight" {
		t.Errorf("Subject(grads/fc1.weight) = %q", got)
	}
}

// TestKindOfStateDicts: the names torch.save({"model": state_dict, ...}),
// checkpoints and their neighbours give come out with the kind a user
// means: the state_dict's parameters are params (and their subject finds
// their gradient), its BatchNorm buffers, an optimizer's state and EMA
// weights are tensors judged alone, and a kind word still wins.
func TestKindOfStateDicts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		kind    Kind
		subject string
	}{
		{"model/blocks.0.attn.qkv.bias", KindParam, "blocks.0.attn.qkv.bias"},
		{"state_dict/fc.weight", KindParam, "fc.weight"},
		{"model_state_dict/fc.weight", KindParam, "fc.weight"},
		{"ckpt/fc.weight", KindParam, "fc.weight"},
		{"rank_0/checkpoint/fc.weight", KindParam, "rank_0/fc.weight"},
		{"model/bn1.running_mean", KindTensor, "model/bn1.running_mean"},
		{"model/bn1.num_batches_tracked", KindTensor, "model/bn1.num_batches_tracked"},
		{"params/bn1.running_var", KindParam, "bn1.running_var"}, // the dump called it a parameter
		{"ckpt/optimizer/state/0/exp_avg", KindTensor, "ckpt/optimizer/state/0/exp_avg"},
		{"ckpt/ema.fc.weight", KindTensor, "ckpt/ema.fc.weight"},
		{"ema/fc.weight", KindTensor, "ema/fc.weight"},
		{"model/ema/fc.weight", KindTensor, "model/ema/fc.weight"},
		{"ckpt/grads/fc.weight", KindGrad, "ckpt/fc.weight"},
		{"model/outputs/logits", KindOutput, "model/logits"},
		{"fc.weight", KindTensor, "fc.weight"},
	} {
		if k := KindOf(tc.name); k != tc.kind {
			t.Errorf("KindOf(%q) = %s, want %s", tc.name, k, tc.kind)
		}
		if s := Subject(tc.name); s != tc.subject {
			t.Errorf("Subject(%q) = %q, want %q", tc.name, s, tc.subject)
		}
	}
}
