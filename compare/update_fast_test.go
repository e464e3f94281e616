package compare

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// addUpdatesByDefinition is addUpdates written as its doc comment states
// it, one element at a time with nothing skipped early: the reference the
// loop that runs is checked against bit for bit.
func addUpdatesByDefinition[F float32 | float64](s *updateSums, done int64, vals [][]F) {
	pa, ca, pb, cb := vals[0], vals[1], vals[2], vals[3]
	var g []F
	if len(vals) == 5 {
		g = vals[4]
	}
	for k := range ca {
		mA, mB := ca[k] != pa[k] || ca[k] != ca[k], cb[k] != pb[k] || cb[k] != cb[k]
		if mA {
			s.u.MovedA++
		}
		if mB {
			s.u.MovedB++
		}
		ua := float64(ca[k]) - float64(pa[k])
		ub := float64(cb[k]) - float64(pb[k])
		switch {
		case mA && !mB && math.Abs(ua) <= s.eps*math.Abs(float64(pa[k])):
			s.u.UlpMovedA++
		case mB && !mA && math.Abs(ub) <= s.eps*math.Abs(float64(pb[k])):
			s.u.UlpMovedB++
		}
		if math.IsNaN(ua) || math.IsInf(ua, 0) || math.IsNaN(ub) || math.IsInf(ub, 0) {
			continue
		}
		e := 0
		if g != nil {
			if b := int(math.Float32bits(float32(g[k]))>>23) & 0xff; b != 0 && b != 0xff {
				e = b
			}
		}
		d := ub - ua
		s.worst.add(done+int64(k), e, d) // its own test, not the loop's floor
		bin := &s.bins[e]
		bin.N++
		bin.UU += ua * ua
		bin.DU += d * ua
		bin.DD += d * d
		bin.PU += math.Abs(float64(pa[k]) * ua)
	}
}

// updateValues makes the five streams of an update of n elements: a
// parameter of normal values, a gradient spanning many octaves, each
// run's update, and the compared run's update one ulp off at a fraction
// differ of the elements; with special, NaN, ±Inf, zeros, subnormals,
// elements one run leaves unchanged and moves of one ulp are mixed in.
func updateValues(r *rand.Rand, n int, differ float64, special bool) [][]float32 {
	pa, ca, pb, cb, g := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	for k := range n {
		p := float32(r.NormFloat64() * 0.02)
		g[k] = float32(r.NormFloat64() * math.Exp2(-10-4*r.Float64()))
		u := float32(-1e-4 * math.Copysign(1, float64(g[k])) * (0.5 + r.Float64()))
		pa[k], pb[k] = p, p
		ca[k] = p + u
		cb[k] = ca[k]
		if r.Float64() < differ {
			cb[k] = math.Nextafter32(ca[k], float32(math.Inf(1)))
		}
		if !special {
			continue
		}
		switch r.IntN(24) {
		case 0:
			cb[k] = float32(math.NaN())
		case 1:
			ca[k] = float32(math.Inf(-1))
		case 2:
			g[k] = 0
		case 3:
			g[k] = math.Float32frombits(1) // subnormal
		case 4:
			g[k] = float32(math.Inf(1))
		case 5:
			cb[k] = pb[k] // left unchanged by B
		case 6:
			ca[k] = pa[k] // left unchanged by A
			cb[k] = math.Nextafter32(pb[k], 1)
		case 7:
			pa[k], ca[k] = float32(math.NaN()), float32(math.NaN())
		}
	}
	return [][]float32{pa, ca, pb, cb, g}
}

// TestAddUpdatesAsDefined checks the loop that runs against its
// definition, bit for bit (every sum, count and worst element), on
// float32 and float64 streams with and without a gradient, in chunks as
// the readers hand them over, with NaN, ±Inf, zero and subnormal
// gradients, unmoved elements and one-ulp moves mixed in.
func TestAddUpdatesAsDefined(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name    string
		n       int
		differ  float64
		special bool
		grad    bool
	}{
		{"plain", 5000, 0.1, false, true},
		{"specials", 5000, 0.1, true, true},
		{"no gradient", 3000, 0.5, true, false},
		{"all differ", 3000, 1, false, true},
		{"none differ", 3000, 0, true, true},
		{"tiny", 3, 1, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := updateValues(r, tc.n, tc.differ, tc.special)
			if !tc.grad {
				vals = vals[:4]
			}
			run := func(add func(*updateSums, int64, [][]float32)) *updateSums {
				s := &updateSums{u: &Update{}, eps: 0x1p-23}
				for done := 0; done < tc.n; done += 777 { // chunks, as the readers give them
					end := min(tc.n, done+777)
					chunk := make([][]float32, len(vals))
					for i := range vals {
						chunk[i] = vals[i][done:end]
					}
					add(s, int64(done), chunk)
				}
				return s
			}
			got, want := run(addUpdates[float32]), run(addUpdatesByDefinition[float32])
			if !reflect.DeepEqual(got.bins, want.bins) || got.worst.n != want.worst.n || got.worst.elems != want.worst.elems || !reflect.DeepEqual(*got.u, *want.u) {
				t.Errorf("float32: sums differ from the definition:\n got %+v %+v\nwant %+v %+v", *got.u, got.worst, *want.u, want.worst)
			}
			wide := make([][]float64, len(vals))
			for i := range vals {
				wide[i] = make([]float64, len(vals[i]))
				for k, v := range vals[i] {
					wide[i][k] = float64(v) * (1 + 0x1p-40) // values float32 cannot hold
				}
			}
			g64 := &updateSums{u: &Update{}, eps: 0x1p-52}
			w64 := &updateSums{u: &Update{}, eps: 0x1p-52}
			addUpdates(g64, 0, wide)
			addUpdatesByDefinition(w64, 0, wide)
			if !reflect.DeepEqual(g64.bins, w64.bins) || g64.worst.elems != w64.worst.elems || !reflect.DeepEqual(*g64.u, *w64.u) {
				t.Errorf("float64: sums differ from the definition")
			}
		})
	}
}

// BenchmarkAddUpdates measures the update sums of a 1M-element parameter
// (as a training dump's: a tenth of the compared run's updates one ulp
// off), with the loop that runs and with its definition, side by side.
func BenchmarkAddUpdates(b *testing.B) {
	const n = 1 << 20
	vals := updateValues(rand.New(rand.NewPCG(3, 4)), n, 0.1, false)
	for _, bc := range []struct {
		name string
		add  func(*updateSums, int64, [][]float32)
	}{{"loop", addUpdates[float32]}, {"definition", addUpdatesByDefinition[float32]}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(5 * 4 * n)
			chunk := make([][]float32, 5)
			for b.Loop() {
				s := &updateSums{u: &Update{}, eps: 0x1p-23}
				for done := 0; done < n; done += updateBufElems {
					for i := range vals {
						chunk[i] = vals[i][done : done+updateBufElems]
					}
					bc.add(s, int64(done), chunk)
				}
			}
		})
	}
}
