package compare

import (
	"math"
	"testing"
)

// TestIntDistance: the distance of two 64-bit integers is computed in
// integer arithmetic, so integers float64 rounds to one value still
// differ, and the extremes do not overflow.
func TestIntDistance(t *testing.T) {
	t.Parallel()
	i := func(v int64) uint64 { return uint64(v) }
	for _, tc := range []struct {
		name   string
		x, y   uint64
		signed bool
		want   float64
	}{
		{"equal", i(5), i(5), true, 0},
		{"beyond 2^53, one apart", i(1 << 62), i(1<<62 + 1), true, 1},
		{"either order", i(1<<62 + 1), i(1 << 62), true, 1},
		{"across zero", i(-3), i(5), true, 8},
		{"int64 extremes", i(math.MinInt64), i(math.MaxInt64), true, 0x1p64 - 1},
		{"uint64 near 2^64", math.MaxUint64, math.MaxUint64 - 1, false, 1},
		{"uint64 extremes", 0, math.MaxUint64, false, 0x1p64 - 1},
	} {
		if got := intDistance(tc.x, tc.y, tc.signed); got != tc.want {
			t.Errorf("%s: intDistance = %g, want %g", tc.name, got, tc.want)
		}
	}
}
