package diagnose

import "testing"

func TestExplain(t *testing.T) {
	ids := append([]string{PrecisionNoise}, causeIDs...)
	if len(Causes) != len(ids) {
		t.Errorf("%d explanations for %d IDs", len(Causes), len(ids))
	}
	for _, id := range ids {
		e, ok := Explain(id)
		if !ok || e.Title == "" || e.What == "" || e.Signature == "" || e.Confirm == "" || e.Fix == "" {
			t.Errorf("%s: incomplete explanation %+v", id, e)
		}
	}
	if _, ok := Explain("cosmic_rays"); ok {
		t.Error("unknown ID explained")
	}
}
