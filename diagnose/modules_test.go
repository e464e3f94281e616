package diagnose

import (
	"slices"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// TestLocateTestsWhereCausesAct: where the taps place the departure
// refutes the causes that predict another place (a stale input departs at
// the first module; nothing in the forward pass departs when every tapped
// output agrees), and every cause kept quotes the place.
func TestLocateTestsWhereCausesAct(t *testing.T) {
	found := func() []Cause {
		return []Cause{{ID: StaleInput}, {ID: FrozenRNG}, {ID: CapturedScalar}, {ID: DynamicShape}, {ID: GradAccumulation}}
	}
	ids := func(cs []Cause) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	drop := &judge.ModuleDeparture{Step: 2, Module: loaders.TapModule{Name: "drop", Type: "Dropout"}, Index: 1, Input: "embed"}
	first := &judge.ModuleDeparture{Step: 2, Module: loaders.TapModule{Name: "embed", Type: "Embedding"}}
	back := &judge.ModuleDeparture{Step: 2, Module: loaders.TapModule{Name: "head"}, Index: 3, Backward: true}
	for _, c := range []struct {
		name  string
		r     judge.Result
		kept  []string
		quote string
	}{
		{"a later module departs", judge.Result{FirstModule: drop}, []string{FrozenRNG, CapturedScalar, GradAccumulation}, "drop (Dropout), its input, the output of embed, agreeing"},
		{"the first module departs", judge.Result{FirstModule: first}, []string{StaleInput, FrozenRNG, CapturedScalar, DynamicShape, GradAccumulation}, "embed (Embedding), the first in forward order"},
		{"only gradients depart", judge.Result{FirstModule: back}, []string{CapturedScalar, GradAccumulation}, "the gradient into head departs first in backward order"},
		{"every module agrees", judge.Result{ModulesAgree: &judge.ModulesAgree{Step: 2, Modules: 4}}, []string{CapturedScalar, GradAccumulation}, "the 4 modules tapped at step 2 agree"},
		{"no taps", judge.Result{}, []string{StaleInput, FrozenRNG, CapturedScalar, DynamicShape, GradAccumulation}, ""},
	} {
		f := &facts{r: &c.r}
		got := f.locate(found())
		if !slices.Equal(ids(got), c.kept) {
			t.Errorf("%s: kept %v, want %v", c.name, ids(got), c.kept)
		}
		for _, cause := range got {
			has := len(cause.Evidence) > 0 && strings.Contains(cause.Evidence[len(cause.Evidence)-1], c.quote)
			if c.quote != "" && !has || c.quote == "" && len(cause.Evidence) > 0 {
				t.Errorf("%s: %s's evidence %q, want it to quote %q", c.name, cause.ID, cause.Evidence, c.quote)
			}
		}
	}
}
