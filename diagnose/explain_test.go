package diagnose

import "testing"

func TestExplain(t *testing.T) {
	ids := append([]string{PrecisionNoise, NoiseDrift, NeedsBaseline}, causeIDs...)
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

// TestCauseTable checks the table that adding a cause extends: unique IDs,
// a place in the explain listing for each, a detector for each, and
// precision_noise, which is no bug, running last.
func TestCauseTable(t *testing.T) {
	ids, listed := map[string]bool{}, map[int]bool{}
	for i, c := range causeTable {
		if ids[c.ID] || listed[c.listed] || c.listed < 0 || c.listed >= len(causeTable) {
			t.Errorf("entry %d (%s): ID or listing place %d used twice or out of range", i, c.ID, c.listed)
		}
		ids[c.ID], listed[c.listed] = true, true
		if c.detect == nil {
			t.Errorf("%s: no detector", c.ID)
		}
	}
	if last := causeTable[len(causeTable)-1]; last.ID != PrecisionNoise {
		t.Errorf("the last detector is %s, not precision_noise", last.ID)
	}
}
