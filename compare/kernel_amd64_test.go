//go:build amd64 && !purego

package compare

import (
	"testing"
	"unsafe"
)

// TestDifferStateLayout checks differState's offsets against those the
// assembly uses (ST_* in kernel_amd64.s).
func TestDifferStateLayout(t *testing.T) {
	var st differState
	got := map[string]uintptr{
		"sums": unsafe.Offsetof(st.sums), "counts": unsafe.Offsetof(st.counts),
		"differ": unsafe.Offsetof(st.differ), "beyond": unsafe.Offsetof(st.beyond),
		"first": unsafe.Offsetof(st.first), "minAd": unsafe.Offsetof(st.minAd),
		"maxULP": unsafe.Offsetof(st.maxULP),
		"atol":   unsafe.Offsetof(st.atol), "rtol": unsafe.Offsetof(st.rtol),
		"maxAbs": unsafe.Offsetof(st.maxAbs), "maxRel": unsafe.Offsetof(st.maxRel),
	}
	want := map[string]uintptr{"sums": 0, "counts": 8, "differ": 16, "beyond": 24, "first": 32, "minAd": 48,
		"maxULP": 80, "atol": 96, "rtol": 128, "maxAbs": 160, "maxRel": 192}
	for f, off := range want {
		if got[f] != off {
			t.Errorf("differState.%s at %d, the assembly reads it at %d", f, got[f], off)
		}
	}
	var s laneSums
	if unsafe.Offsetof(s.sqA) != 32 || unsafe.Offsetof(s.sqB) != 64 || unsafe.Offsetof(s.ab) != 96 || unsafe.Offsetof(s.eq) != 128 {
		t.Error("laneSums is not laid out as the assembly reads it (sqD, sqA, sqB, ab, eq)")
	}
}
