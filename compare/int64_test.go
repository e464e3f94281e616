package compare

import (
	"math"
	"testing"
)

// TestIntDistance: the distance of two 64-bit integers is computed in
// integer arithmetic, so integers float64 rounds to one value still
// differ, and the extremes do not overflow, in one dtype or two (an int64
// against a uint64: the same bits may be two values).
func TestIntDistance(t *testing.T) {
	t.Parallel()
	i := func(v int64) uint64 { return uint64(v) }
	signed, unsigned := intSides{}, intSides{unsignedA: true, unsignedB: true}
	mixed := intSides{unsignedB: true} // int64 against uint64
	for _, tc := range []struct {
		name  string
		x, y  uint64
		sides intSides
		want  float64
	}{
		{"equal", i(5), i(5), signed, 0},
		{"beyond 2^53, one apart", i(1 << 62), i(1<<62 + 1), signed, 1},
		{"either order", i(1<<62 + 1), i(1 << 62), signed, 1},
		{"across zero", i(-3), i(5), signed, 8},
		{"negative", i(-3), i(-1), signed, 2},
		{"int64 extremes", i(math.MinInt64), i(math.MaxInt64), signed, 0x1p64 - 1},
		{"uint64 near 2^64", math.MaxUint64, math.MaxUint64 - 1, unsigned, 1},
		{"uint64 extremes", 0, math.MaxUint64, unsigned, 0x1p64 - 1},
		{"int64 against uint64 beyond 2^53", i(1<<62 + 1), 1 << 62, mixed, 1},
		{"int64 -1 against uint64 2^64 - 1, the same bits", i(-1), math.MaxUint64, mixed, 0x1p64},
		{"int64 minimum against uint64 maximum", i(math.MinInt64), math.MaxUint64, mixed, 0x1p63 + 0x1p64},
		{"uint64 against int64 across zero", 5, i(-3), intSides{unsignedA: true}, 8},
	} {
		if got := intDistance(tc.x, tc.y, tc.sides); got != tc.want {
			t.Errorf("%s: intDistance = %g, want %g", tc.name, got, tc.want)
		}
	}
}
