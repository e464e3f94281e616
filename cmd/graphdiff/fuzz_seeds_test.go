package main

import (
	"fmt"
	"slices"
	"testing"
)

// seedRuns describes a fuzz input of FuzzCompareRuns; encode writes it as
// generate reads it.
type seedRuns struct {
	variant    variant
	float8Hint bool
	losses     string // the root losses.npy's dtype, "" for none
	taps       bool   // outputs dumped as taps (generate's flag bit 5)
	steps      []int
	tensors    []seedTensor
	// values are A's elements (genElem); nil for encode's
	values []byte
	// b is B's section (see perturb), for a perturbed B; nil leaves B as
	// A (every action 0, no extra tensor, no step dropped).
	b []byte
}

// seedTensor is one tensor header of a seed (genHeader).
type seedTensor struct {
	kind    string // one of fuzzKinds' kinds
	subject int    // 0 to 2
	dtype   string
	layout  byte // setLayout
	shape   []int
	mask    byte // the steps it is in, by position; 0 for all
}

// encode returns s as a fuzz input. A's values are every special value
// and a few ordinary ones in turn (genElem), one selector byte each.
func (s seedRuns) encode() []byte {
	flags := byte(s.variant)
	if s.float8Hint {
		flags |= 4
	}
	if s.losses != "" {
		flags |= 8
	}
	if s.taps {
		flags |= 32
	}
	out := []byte{flags, byte(len(s.steps) - 1)}
	for _, st := range s.steps {
		out = append(out, byte(st))
	}
	out = append(out, byte(len(s.tensors)-1))
	elems := 0
	for _, t := range s.tensors {
		out = append(out, kindIndex(t.kind)+byte(6*t.subject), dtypeIndex(t.dtype), t.layout, byte(len(t.shape)))
		n := 1
		for _, d := range t.shape {
			out = append(out, byte(d))
			n *= d
		}
		out = append(out, t.mask)
		in := len(s.steps)
		if t.mask != 0 {
			in = 0
			for i := range s.steps {
				in += int(t.mask >> i & 1)
			}
		}
		elems += in * n * dtypeNamed(t.dtype).size / dtypeNamed(t.dtype).partSize() // a complex element: two
	}
	if s.losses != "" {
		out = append(out, dtypeIndex(s.losses), 0)
		elems += (slices.Max(s.steps) + 1) * dtypeNamed(s.losses).size / dtypeNamed(s.losses).partSize()
	}
	if s.values != nil {
		elems = 0
		out = append(out, s.values...)
	}
	for i := range elems {
		if i%3 == 2 {
			out = append(out, byte(96+i%17-8)) // ordinary: (i%17−8)/8
		} else {
			out = append(out, byte(i/3%32)) // a special value
		}
	}
	switch s.variant {
	case reencodeB:
		for i := range 64 { // enough layout bytes for any seed
			out = append(out, byte(i+1))
		}
	case perturbB:
		out = append(out, s.b...)
		if s.b == nil {
			out = append(out, make([]byte, 64)...)
		}
	}
	return out
}

// kindIndex is the index of kind in fuzzKinds.
func kindIndex(kind string) byte {
	return byte(slices.IndexFunc(fuzzKinds, func(k struct{ dir, prefix, kind string }) bool { return k.kind == kind }))
}

// dtypeIndex is the index of the dtype named name in fuzzDTypes.
func dtypeIndex(name string) byte {
	return byte(slices.Index(fuzzDTypes, dtypeNamed(name)))
}

// compareRunsSeeds are FuzzCompareRuns' seed inputs: every dtype in
// every shape class (empty, 0-d, 2-D in Fortran order, big-endian), B
// copied, re-encoded and perturbed, and the inputs that crashed graphdiff
// before the fuzz target existed (historicalSeeds).
func compareRunsSeeds() [][]byte {
	var out [][]byte
	for _, s := range historicalSeeds() {
		out = append(out, s.runs.encode())
	}
	for i, dt := range fuzzDTypes {
		out = append(out, dtypeSeed(dt.name, variant(i%3), i%2 == 0).encode())
	}
	for _, v := range []variant{copyB, perturbB} {
		out = append(out, tapsSeed(v).encode())
	}
	return out
}

// tapsSeed is a seed with taps: module y0's float32 output (2, 3, 5) and
// the loss at two steps, every value ordinary (finite), so that where
// the module departs its output is fitted channel by channel; with a
// perturbed B, one element of y0's output at the second step is another.
func tapsSeed(v variant) seedRuns {
	s := seedRuns{variant: v, taps: true, steps: []int{0, 1}, tensors: []seedTensor{
		{kind: "output", dtype: "float32", shape: []int{2, 3, 5}},
		{kind: "loss", dtype: "float32", shape: []int{}},
	}}
	for i := range 2*30 + 2 {
		s.values = append(s.values, byte(96+i%17-8)) // ordinary: (i%17−8)/8
	}
	if v == perturbB {
		s.b = []byte{
			0, 0, // y0, step 0: the same
			5, 0, 4, 200, 100, 0, // step 1: element 4 a new value (ordinary 0.5)
			0, 0, 0, 0, // the loss the same at both steps
			0, 0, // no tensor only in B, no step dropped
		}
	}
	return s
}

// dtypeSeed is a seed whose tensors are all of dtype dt: a parameter and
// its gradient at two steps, a 2-D parameter in Fortran order,
// big-endian, an empty gradient (0,), a 0-d loss written by the forger,
// outputs (3, 0) at the first step only and a buffer (0, 5) at the second
// only, and with a perturbed B, one parameter element flipped, a tensor
// only in B at a step only in B.
func dtypeSeed(dt string, v variant, curve bool) seedRuns {
	s := seedRuns{variant: v, float8Hint: true, steps: []int{0, 1}, tensors: []seedTensor{
		{kind: "param", subject: 0, dtype: dt, layout: 3, shape: []int{2, 3}},
		{kind: "grad", subject: 0, dtype: dt, shape: []int{0}},
		{kind: "loss", dtype: dt, layout: 4, shape: []int{}},
		{kind: "output", subject: 1, dtype: dt, shape: []int{3, 0}, mask: 1},
		{kind: "tensor", subject: 2, dtype: dt, shape: []int{0, 5}, mask: 2},
	}}
	if curve {
		s.losses = dt
	}
	if v == perturbB {
		// A's tensors: the parameter at steps 0 and 1, the gradient at 0
		// and 1, the loss at 0 and 1, the outputs at 0, the buffer at 1
		s.b = []byte{
			0, 3, // parameter, step 0: the same, layout: big-endian, Fortran
			5, 0, 4, 0, 3, // step 1: one element (4) changed: bit 0 flipped
			0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, // the rest the same, the loss forged
		}
		if curve {
			s.b = append(s.b, 0, 0)
		}
		s.b = append(s.b, 1, // one tensor only in B:
			kindIndex("input"), dtypeIndex(dt), 0, 1, 2, // inputs/x0 of shape (2,)
			5, // at step 5
		)
		for i := range 2 * dtypeNamed(dt).size / dtypeNamed(dt).partSize() {
			s.b = append(s.b, byte(100+i)) // ordinary values, 0.5 and up
		}
		s.b = append(s.b, 0) // no step dropped
	}
	return s
}

// historicalSeed is an input that crashed graphdiff or made it wrong
// before FuzzCompareRuns existed (see testdata/edge/README.md), or while
// it was written.
type historicalSeed struct {
	name string
	runs seedRuns
	// a checks the generated run A: the seed holds what it is for
	a func(g *genRuns) error
}

func historicalSeeds() []historicalSeed {
	return []historicalSeed{
		{name: "float64 parameters at two steps (decode32 of float64 in the update measurement)",
			runs: seedRuns{variant: perturbB, steps: []int{0, 1}, tensors: []seedTensor{
				{kind: "param", dtype: "float64", shape: []int{3}},
				{kind: "grad", dtype: "float64", shape: []int{3}},
			}, b: []byte{
				0, 0, // parameter, step 0: the same
				5, 0, 1, 200, 100, 0, // step 1: element 1 a new value, 100 (ordinary 0.5)
				0, 0, 0, 0, // the gradient the same
				0, 0,
			}},
			a: func(g *genRuns) error { return want(g, "params/w0", "float64", 2) }},
		{name: "empty float32 tensors (0,) and (0, 5) (index out of range)",
			runs: seedRuns{variant: perturbB, steps: []int{0, 1}, tensors: []seedTensor{
				{kind: "param", dtype: "float32", shape: []int{0}},
				{kind: "param", subject: 1, dtype: "float32", shape: []int{0, 5}},
				{kind: "grad", dtype: "float32", shape: []int{0}},
				{kind: "loss", dtype: "float32", shape: []int{}},
			}},
			a: func(g *genRuns) error {
				if err := want(g, "params/w0", "float32", 2); err != nil {
					return err
				}
				return want(g, "params/w1", "float32", 2)
			}},
		{name: "int64 2^62 against 2^62 + 1, uint64 2^64 − 1 against 2^64 − 2 (equal in float64)",
			runs: seedRuns{variant: perturbB, steps: []int{0}, tensors: []seedTensor{
				{kind: "output", dtype: "int64", shape: []int{2}},
				{kind: "output", subject: 1, dtype: "uint64", shape: []int{1}},
			}, values: []byte{
				7, 5, // tokens: 2^62, 2^53 (specials 7 and 5)
				2, // hashes: 2^64 − 1 (special 2)
			}, b: []byte{
				5, 0, 0, 0, 0, // tokens: element 0 (2^62 below) bit 0 flipped
				5, 0, 0, 0, 0, // hashes: element 0 (2^64 − 1) bit 0 flipped
				0, 0,
			}},
			a: func(g *genRuns) error {
				if err := want(g, "outputs/y0", "int64", 1); err != nil {
					return err
				}
				return want(g, "outputs/y1", "uint64", 1)
			}},
		{name: "int64 2^62 against 2^62 + 1 stored in C and Fortran order (compared in float64)",
			runs: seedRuns{variant: perturbB, steps: []int{0}, tensors: []seedTensor{
				{kind: "output", dtype: "int64", shape: []int{2, 2}},
			}, values: []byte{7, 5, 0, 1}, // 2^62, 2^53, 0, 1
				b: []byte{
					5, 0, 0, 0, 2, // element 0 bit 0 flipped; stored in Fortran order
					0, 0,
				}},
			a: func(g *genRuns) error { return want(g, "outputs/y0", "int64", 1) }},
		{name: "int64 2^62 against uint64 2^62 + 1 (compared in float64)",
			runs: seedRuns{variant: perturbB, steps: []int{0}, tensors: []seedTensor{
				{kind: "output", dtype: "int64", shape: []int{1}},
			}, values: []byte{7}, // 2^62
				b: []byte{
					6, dtypeIndex("uint64"), 8, 0, // stored as uint64: 2^62 + 1 (special 8)
					0, 0,
				}},
			a: func(g *genRuns) error { return want(g, "outputs/y0", "int64", 1) }},
		{name: "complex64 +Inf against -Inf (complex infinities all agreed)",
			runs: seedRuns{variant: perturbB, steps: []int{0}, tensors: []seedTensor{
				{kind: "output", dtype: "complex64", shape: []int{1}},
			}, values: []byte{2, 0}, // (+Inf, 0): float32 specials 2 and 0
				b: []byte{
					5, 0, 0, 31, 0, // the real part's sign bit (31) flipped
					0, 0,
				}},
			a: func(g *genRuns) error { return want(g, "outputs/y0", "complex64", 1) }},
	}
}

// want checks that g's run A holds name in dtype at steps steps.
func want(g *genRuns, name, dtype string, steps int) error {
	n := 0
	for _, x := range g.a {
		if x.name == name && x.dt.name == dtype {
			n++
		}
	}
	if n != steps {
		return fmt.Errorf("%s %s at %d steps, want %d", name, dtype, n, steps)
	}
	return nil
}

// TestCompareRunsSeeds checks that each historical seed generates the
// runs it stands for.
func TestCompareRunsSeeds(t *testing.T) {
	t.Parallel()
	for _, s := range historicalSeeds() {
		if err := s.a(generate(s.runs.encode())); err != nil {
			t.Errorf("%s: %v", s.name, err)
		}
	}
}
