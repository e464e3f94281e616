package compare

import (
	"encoding/binary"
	"fmt"
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
		s.init()
		s.t.counts[0][e]++ // N
		bin := &s.t.sums[e]
		bin[0] += float64(ua * ua)                       // UU
		bin[1] += float64(d * ua)                        // DU
		bin[2] += float64(d * d)                         // DD
		bin[3] += float64(math.Abs(float64(pa[k]) * ua)) // PU
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

// diffUpdateSums says how got differs from want, bit for bit (every
// count, every bin's N and sums, the worst elements), or returns "".
func diffUpdateSums(got, want *updateSums) string {
	if !reflect.DeepEqual(*got.u, *want.u) {
		return fmt.Sprintf("counts %+v, want %+v", *got.u, *want.u)
	}
	for e := range skipBin {
		g, w := got.bin(e), want.bin(e)
		if g.N != w.N || math.Float64bits(g.UU) != math.Float64bits(w.UU) || math.Float64bits(g.DU) != math.Float64bits(w.DU) ||
			math.Float64bits(g.DD) != math.Float64bits(w.DD) || math.Float64bits(g.PU) != math.Float64bits(w.PU) {
			return fmt.Sprintf("bin %d: %+v, want %+v", e, g, w)
		}
	}
	if got.worst.n != want.worst.n {
		return fmt.Sprintf("%d worst elements, want %d", got.worst.n, want.worst.n)
	}
	for i, g := range got.worst.elems[:got.worst.n] {
		if w := want.worst.elems[i]; g.pos != w.pos || g.e != w.e || math.Float64bits(g.d) != math.Float64bits(w.d) {
			return fmt.Sprintf("worst element %d: %+v, want %+v", i, g, w)
		}
	}
	return ""
}

// addInChunks adds vals to s with add, in chunks of chunk elements (the
// last shorter), as the readers hand them over.
func addInChunks[F float32 | float64](s *updateSums, vals [][]F, chunk int, add func(*updateSums, int64, [][]F)) {
	n := len(vals[0])
	piece := make([][]F, len(vals))
	for done := 0; done < n; done += chunk {
		end := min(n, done+chunk)
		for i := range vals {
			piece[i] = vals[i][done:end]
		}
		add(s, int64(done), piece)
	}
}

// checkUpdatesAsDefined checks addUpdates, running kernels k, against its
// definition on vals, whole and in chunks, in float32 (epsilon eps) and,
// widened to values float32 cannot hold, in float64.
func checkUpdatesAsDefined(t *testing.T, k kernels, vals [][]float32, eps float64) {
	t.Helper()
	n := len(vals[0])
	for _, chunk := range []int{max(n, 1), 777, 13, updateBlockElemsForTest + 8} {
		if d := updatesDiffer(k, vals, eps, chunk); d != "" {
			t.Fatalf("float32, n = %d in chunks of %d: %s", n, chunk, d)
		}
	}
	wide := make([][]float64, len(vals))
	for i := range vals {
		wide[i] = make([]float64, n)
		for j, v := range vals[i] {
			wide[i][j] = float64(v) * (1 + 0x1p-40) // values float32 cannot hold
		}
	}
	if d := updatesDiffer(k, wide, 0x1p-52, 777); d != "" {
		t.Fatalf("float64, n = %d: %s", n, d)
	}
}

// updatesDiffer adds vals in chunks of chunk elements through addUpdates,
// running kernels k, and through its definition, and says where the two
// sums differ ("" where they agree bit for bit).
func updatesDiffer[F float32 | float64](k kernels, vals [][]F, eps float64, chunk int) string {
	got := &updateSums{u: &Update{}, eps: eps, noKernels: ^k}
	want := &updateSums{u: &Update{}, eps: eps}
	addInChunks(got, vals, chunk, addUpdates[F])
	addInChunks(want, vals, chunk, addUpdatesByDefinition[F])
	return diffUpdateSums(got, want)
}

// TestAddUpdatesAsDefined checks the loop that runs against its
// definition, bit for bit (every sum, count and worst element), with each
// kernel set the machine has, on float32 and float64 streams with and
// without a gradient, whole and in chunks as the readers hand them over:
// with NaN, ±Inf, zero and subnormal gradients, unmoved elements and
// one-ulp moves mixed in; every length around the assembly's groups of
// eight and blocks; all NaN; runs of one bin, bins alternating and every
// element in its own bin; ties and a new worst element at every element.
func TestAddUpdatesAsDefined(t *testing.T) {
	eachKernelSet(t, func(t *testing.T, k kernels) {
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
			vals := updateValues(r, tc.n, tc.differ, tc.special)
			if !tc.grad {
				vals = vals[:4]
			}
			t.Run(tc.name, func(t *testing.T) { checkUpdatesAsDefined(t, k, vals, 0x1p-23) })
		}
		t.Run("lengths", func(t *testing.T) {
			for _, n := range []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 511, 512, 513, 519, 520, 1023, 1024, 1031, 1537} {
				vals := updateValues(r, n, 0.3, true)
				checkUpdatesAsDefined(t, k, vals, 0x1p-23)
				checkUpdatesAsDefined(t, k, vals[:4], 0x1p-7)
			}
		})
		t.Run("all NaN", func(t *testing.T) {
			vals := updateValues(r, 1000, 0.3, false)
			for i := range vals {
				for j := range vals[i] {
					vals[i][j] = float32(math.NaN())
				}
			}
			checkUpdatesAsDefined(t, k, vals, 0x1p-23)
			vals[1][500] = 1 // NaN in one run only
			checkUpdatesAsDefined(t, k, vals, 0x1p-23)
		})
		t.Run("bins", func(t *testing.T) {
			// the bin of element i, from runs of one bin to one bin each
			for _, bin := range []func(i int) int{
				func(i int) int { return 100 },
				func(i int) int { return 100 + i%2 },
				func(i int) int { return 1 + i%254 },
				func(i int) int { return 100 + i/3%2 },
				func(i int) int { return 100 + i/13%3 },
				func(i int) int { return 100 + i/700%2 },
				func(i int) int { return []int{0, 254, 1, 0xff, 100}[i/5%5] },
				func(i int) int { return 100 + int(uint32(i)*2654435761>>30) },
			} {
				vals := updateValues(r, 2100, 0.5, false)
				for i := range vals[4] {
					vals[4][i] = math.Float32frombits(uint32(bin(i))<<23 | uint32(i)&0x7FFFFF)
					if i%37 == 5 {
						vals[3][i] = float32(math.Inf(1)) // skipped, inside runs
					}
				}
				checkUpdatesAsDefined(t, k, vals, 0x1p-23)
			}
		})
		t.Run("one ulp", func(t *testing.T) {
			// moves in one run only of one and two ulps, from powers of two
			// (|u| = ε·|p| exactly) and other values, up and down, and from
			// zero
			n := 1000
			pa, ca, pb, cb := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range n {
				p := float32(math.Ldexp(1, i%40-20))
				if i%3 == 0 {
					p *= 1.375
				}
				if i%5 == 0 {
					p = -p
				}
				if i%97 == 0 {
					p = 0
				}
				to := float32(math.Inf(1 - 2*(i/2%2)))
				u := math.Nextafter32(p, to)
				if i%7 == 0 {
					u = math.Nextafter32(u, to)
				}
				pa[i], ca[i], pb[i], cb[i] = p, u, p, p
				if i%2 == 1 {
					ca[i], cb[i] = p, u
				}
			}
			for _, eps := range []float64{0x1p-23, 0x1p-24, 0x1p-22, 0} {
				checkUpdatesAsDefined(t, k, [][]float32{pa, ca, pb, cb}, eps)
			}
		})
		t.Run("worst", func(t *testing.T) {
			n := 1100
			pa, ca, pb, cb := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range n {
				pa[i], ca[i], pb[i] = 1, 1+0x1p-10, 1
				cb[i] = 1 + 0x1p-9 // ties: the first eight stay
			}
			checkUpdatesAsDefined(t, k, [][]float32{pa, ca, pb, cb}, 0x1p-23)
			for i := range n {
				cb[i] = 1 + float32(i)*0x1p-20 // a new worst element each
			}
			checkUpdatesAsDefined(t, k, [][]float32{pa, ca, pb, cb}, 0x1p-23)
			for i := range n {
				cb[i] = 1 + float32(i%100)*0x1p-20 // new worst then ties
			}
			checkUpdatesAsDefined(t, k, [][]float32{pa, ca, pb, cb}, 0x1p-23)
		})
	})
}

// FuzzAddUpdates checks addUpdates against its definition, bit for bit,
// with each kernel set, on five float32 streams made from data, nine bytes
// an element after a first byte that picks the epsilon, the chunk size and
// whether there is a gradient. Of an element's bytes, four are the bit
// pattern of p_A (any float32), and a control byte says how the others
// derive from it: c_A equal, a few units of the bit pattern away (into
// ±Inf or NaN too) or arbitrary; p_B equal or with low bits flipped; c_B
// as c_A, equal to p_B, a unit from c_A or arbitrary; the gradient's top
// 16 bits from two more bytes (any exponent).
func FuzzAddUpdates(f *testing.F) {
	for _, seed := range []int{1, 40, 300, 1100} {
		r := rand.New(rand.NewPCG(uint64(seed), 9))
		data := make([]byte, 1+9*seed)
		for i := range data {
			data[i] = byte(r.Uint32())
			if i%9 == 1 && r.IntN(3) > 0 { // mostly p_A of a usual size
				data[i+3] = 0x3c
			}
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		head := data[0]
		data = data[1:]
		n := len(data) / 9
		pa, ca, pb, cb, g := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range n {
			p := data[9*i : 9*i+9]
			c, x, y := p[0], binary.LittleEndian.Uint32(p[1:]), binary.LittleEndian.Uint16(p[5:])
			a1 := x
			switch c & 3 {
			case 1:
				a1 = x + uint32(int32(int8(y)))
			case 2:
				a1 = x ^ uint32(y)<<uint(c>>5)
			case 3:
				a1 = uint32(y)<<16 | uint32(p[7])
			}
			b0 := x
			if c&4 != 0 {
				b0 = x ^ uint32(y>>8)
			}
			b1 := a1
			switch c >> 3 & 3 {
			case 1:
				b1 = b0
			case 2:
				b1 = a1 + 1
			case 3:
				b1 = uint32(y)<<16 ^ x
			}
			pa[i], ca[i] = math.Float32frombits(x), math.Float32frombits(a1)
			pb[i], cb[i] = math.Float32frombits(b0), math.Float32frombits(b1)
			g[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(p[7:])) << 16)
		}
		vals := [][]float32{pa, ca, pb, cb, g}
		if head&1 == 0 {
			vals = vals[:4]
		}
		eps := []float64{0x1p-23, 0x1p-7, 0, math.Inf(1)}[head>>1&3]
		chunk := []int{max(n, 1), 8, 9, 61, 512, 520, 777, 1}[head>>3&7]
		eachKernelSet(t, func(t *testing.T, k kernels) {
			if d := updatesDiffer(k, vals, eps, chunk); d != "" {
				t.Fatalf("n = %d in chunks of %d: %s", n, chunk, d)
			}
		})
	})
}

// BenchmarkAddUpdates measures the update sums of a 1M-element parameter
// (as a training dump's: a tenth of the compared run's updates one ulp
// off), with the loop that runs, the Go loop alone and the definition,
// side by side; the nograd cases have every element in one bin.
func BenchmarkAddUpdates(b *testing.B) {
	const n = 1 << 20
	vals := updateValues(rand.New(rand.NewPCG(3, 4)), n, 0.1, false)
	for _, bc := range []struct {
		name string
		add  func(*updateSums, int64, [][]float32)
		off  kernels
		grad bool
	}{
		{"loop", addUpdates[float32], 0, true},
		{"go", addUpdates[float32], ^kernels(0), true},
		{"definition", addUpdatesByDefinition[float32], 0, true},
		{"loop-nograd", addUpdates[float32], 0, false},
		{"go-nograd", addUpdates[float32], ^kernels(0), false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			v := vals
			if !bc.grad {
				v = vals[:4]
			}
			b.SetBytes(int64(4 * len(v) * n))
			for b.Loop() {
				s := &updateSums{u: &Update{}, eps: 0x1p-23, noKernels: bc.off}
				addInChunks(s, v, updateBufElems, bc.add)
			}
		})
	}
}
