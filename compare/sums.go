package compare

// The float64 sums behind RelL2 and Cosine (‖a−b‖², ‖a‖², ‖b‖², a·b) are
// kept as partial sums, so that the hot loops add into independent
// registers instead of waiting on one chain of additions, and so that a
// run of equal values costs one addition per element instead of three.
//
// The order of every addition is fixed by the data alone, never by the
// number of workers or the loop that ran:
//
//   - element i of an accumulator (counted from its chunk's first element)
//     adds to lane i mod lanes;
//   - a finite pair with a = b (as values: +0 = −0) adds a² to eq[lane],
//     which stands for its a², b² and a·b at once (its (a−b)² is 0);
//   - any other finite pair adds (a−b)², a², b² and a·b to the lanes of
//     sqD, sqA, sqB and ab;
//   - chunks merge lane by lane, in storage order;
//   - a total is ((p0+p1)+(p2+p3)), and ‖a‖² is total(sqA)+total(eq),
//     likewise ‖b‖² and a·b.
//
// For values that are all float32 the squares and products are exact in
// float64, so only these additions round, and they round identically in
// the float32 kernel (kernel.go) and the general loop (addReal).

// lanes is the number of partial sums per sum.
const lanes = 4

type laneSums struct {
	sqD, sqA, sqB, ab [lanes]float64 // finite pairs with a ≠ b
	eq                [lanes]float64 // a² of finite pairs with a = b
}

// differ adds a pair with a ≠ b to lane l (terms: (a−b)², a², b², a·b).
func (s *laneSums) differ(l int, sqD, sqA, sqB, ab float64) {
	s.sqD[l] += sqD
	s.sqA[l] += sqA
	s.sqB[l] += sqB
	s.ab[l] += ab
}

func (s *laneSums) merge(o *laneSums) {
	for l := range lanes {
		s.sqD[l] += o.sqD[l]
		s.sqA[l] += o.sqA[l]
		s.sqB[l] += o.sqB[l]
		s.ab[l] += o.ab[l]
		s.eq[l] += o.eq[l]
	}
}

// totals returns ‖a−b‖², ‖a‖², ‖b‖² and a·b.
func (s *laneSums) totals() (sqD, sqA, sqB, ab float64) {
	eq := total(&s.eq)
	return total(&s.sqD), total(&s.sqA) + eq, total(&s.sqB) + eq, total(&s.ab) + eq
}

func total(p *[lanes]float64) float64 { return (p[0] + p[1]) + (p[2] + p[3]) }
