//go:build amd64 && !purego

package compare

import (
	"testing"
	"unsafe"
)

// updateBlockElemsForTest is the assembly's block length, for the tests
// to cross its boundaries.
const updateBlockElemsForTest = updateBlockElems

// TestUpdateStateLayout checks updateState's offsets against those the
// assembly uses (US_* in update_amd64.s).
func TestUpdateStateLayout(t *testing.T) {
	t.Parallel()
	var st updateState
	got := map[string]uintptr{"pa": unsafe.Offsetof(st.pa), "ca": unsafe.Offsetof(st.ca),
		"pb": unsafe.Offsetof(st.pb), "cb": unsafe.Offsetof(st.cb), "g": unsafe.Offsetof(st.g),
		"n": unsafe.Offsetof(st.n), "eps": unsafe.Offsetof(st.eps), "floor": unsafe.Offsetof(st.floor),
		"sums": unsafe.Offsetof(st.sums), "counts": unsafe.Offsetof(st.counts),
		"terms": unsafe.Offsetof(st.terms), "offs": unsafe.Offsetof(st.offs), "moved": unsafe.Offsetof(st.moved)}
	want := map[string]uintptr{"pa": 0, "ca": 8, "pb": 16, "cb": 24, "g": 32, "n": 40, "eps": 48, "floor": 56,
		"sums": 64, "counts": 72, "terms": 80, "offs": 88, "moved": 96}
	for f, off := range want {
		if got[f] != off {
			t.Errorf("updateState.%s at %d, the assembly reads it at %d", f, got[f], off)
		}
	}
	var b updateBlock
	if unsafe.Offsetof(b.masks)-unsafe.Offsetof(b.offs) != 2048 || unsafe.Offsetof(b.cand)-unsafe.Offsetof(b.offs) != 2560 {
		t.Error("updateBlock's masks and cand are not where the assembly reads them (UB_MASKS, UB_CAND from offs)")
	}
	if unsafe.Sizeof([8][256]int64{}[0]) != 2048 {
		t.Error("a count table is not 2048 bytes, as the assembly reads them")
	}
}
