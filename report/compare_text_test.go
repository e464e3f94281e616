package report

import (
	"slices"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// TestGroupPairs: the text report tables each pair under words that say
// what it is. At a step that dumped gradients, optimizer state, EMA
// weights and BatchNorm's buffers (under params/ or a state_dict's name)
// are state and buffers; a parameter without a gradient that its name
// does not call a buffer (frozen, or a buffer the dump put among the
// parameters) is one without a gradient; a tensor whose name says neither
// a kind nor state (a pair of single files, a container's key, an extra)
// is another tensor; the rest is the model's.
func TestGroupPairs(t *testing.T) {
	tests := []struct {
		name, group string
		step        int
	}{
		{"loss", "model", 1},
		{"grads/fc.weight", "model", 1},
		{"params/fc.weight", "model", 1},
		{"inputs/x", "model", 1},
		{"optimizer/fc.weight/exp_avg_sq", "state", 1},
		{"ema/fc.weight", "state", 1},
		{"model/bn.running_mean", "state", 1},
		{"params/bn.running_var", "state", 1},
		{"params/embed.weight", "noGrad", 1}, // frozen
		{"params/temp", "noGrad", 1},         // a buffer of another name
		{"params/embed.weight", "model", 2},  // a step that dumped no gradient
		{"f4", "other", loaders.NoStep},      // a pair of single files
		{"extra/lr", "other", 1},
	}
	var ts []*judge.TensorResult
	for _, tc := range tests {
		ts = append(ts, &judge.TensorResult{Pair: judge.Pair{Name: tc.name, Step: tc.step, Kind: loaders.KindOf(tc.name)}})
	}
	g := groupPairs(ts)
	groups := map[string][]*judge.TensorResult{"model": g.model, "state": g.state, "noGrad": g.noGrad, "other": g.other}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !slices.ContainsFunc(groups[tc.group], func(r *judge.TensorResult) bool { return r.Name == tc.name && r.Step == tc.step }) {
				t.Errorf("%s at step %d not among the %s pairs", tc.name, tc.step, tc.group)
			}
		})
	}
	if n := len(g.model) + len(g.state) + len(g.noGrad) + len(g.other); n != len(ts) {
		t.Errorf("%d pairs grouped, %d given", n, len(ts))
	}
}
