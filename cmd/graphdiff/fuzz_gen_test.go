package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/x448/float16"

	"github.com/graphdiff/graphdiff/internal/npyfile"
)

// The generator of FuzzCompareRuns: two runs from a fuzz input.

// tensorKey names a tensor of a run: its step and its name in the report.
type tensorKey struct {
	step int
	name string
}

// noStep is loaders.NoStep: the step of a tensor outside step directories.
const noStep = -1

func byKey(ts []*genTensor) map[tensorKey]*genTensor {
	m := map[tensorKey]*genTensor{}
	for _, x := range ts {
		m[x.key()] = x
	}
	return m
}

// variant is how run B is made from run A.
type variant int

const (
	copyB     variant = iota // B's files are copies of A's
	reencodeB                // B holds A's values, each file's layout drawn again
	perturbB                 // B is A perturbed
)

func (v variant) String() string {
	return [...]string{"a copy", "re-encoded", "perturbed"}[v]
}

// genRuns are two runs generated from a fuzz input.
type genRuns struct {
	a, b    []*genTensor
	variant variant
	// float8Hint passes --float8 e4m3fn: '|V1' files are then readable.
	float8Hint bool
	// taps: the outputs are dumped as the tapped modules' (activations/),
	// and both runs' manifests name the modules y0, y1, y2 in that
	// forward order.
	taps bool
}

// tapsManifest is the manifest of a generated run with taps.
const tapsManifest = `{"graphdiff_manifest": 1, "run": {"taps": {"modules": [{"name": "y0", "type": "Linear"}, {"name": "y1", "type": "Normalize"}, {"name": "y2"}]}}, "tensors": []}`

// flags returns the command line flags of the comparisons.
func (g *genRuns) flags() []string {
	if g.float8Hint {
		return []string{"--float8", "e4m3fn"}
	}
	return nil
}

// readable reports whether graphdiff can read x: every file is, but
// '|V1' without --float8 (its float8 format is not recorded).
func (g *genRuns) readable(x *genTensor) bool {
	return x.dt.code != "V1" || g.float8Hint
}

// sameHistory reports whether the parameter pair a, b (the same bits at
// this step) has the same update in both runs: it is no parameter, or
// the reference run's previous step of it (the one the update is measured
// from: check/updates.go) is missing from B, stored differently (no
// update measured), or the same bits in both.
func (g *genRuns) sameHistory(a, b *genTensor) bool {
	if a.kind != "param" || a.step == noStep {
		return true
	}
	var prevA *genTensor
	for _, x := range g.a {
		if x.name == a.name && x.step != noStep && x.step < a.step && (prevA == nil || x.step > prevA.step) {
			prevA = x
		}
	}
	if prevA == nil {
		return true
	}
	prevB := byKey(g.b)[prevA.key()]
	if prevB == nil || prevA.dt != a.dt || prevB.dt != b.dt || !slices.Equal(prevA.shape, a.shape) ||
		!slices.Equal(prevB.shape, b.shape) || prevA.fortran != a.fortran || prevB.fortran != b.fortran ||
		a.fortran != b.fortran {
		return true
	}
	return bytes.Equal(prevA.data, prevB.data)
}

// write writes run A to dirA and run B to dirB.
func (g *genRuns) write(dirA, dirB string) error {
	if g.taps {
		for _, dir := range []string{dirA, dirB} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(tapsManifest), 0o644); err != nil {
				return err
			}
		}
	}
	for _, x := range g.a {
		if err := x.write(dirA); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dirB, 0o755); err != nil {
		return err
	}
	if g.variant == copyB {
		for _, x := range g.a {
			data, err := os.ReadFile(filepath.Join(dirA, x.file()))
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dirB, x.file())), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dirB, x.file()), data, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	for _, x := range g.b {
		if err := x.write(dirB); err != nil {
			return err
		}
	}
	return nil
}

// genTensor is one tensor of a generated run.
type genTensor struct {
	step  int    // noStep for the root's losses.npy
	name  string // as the report names it: "params/w0", "loss"
	kind  string // as the report says it
	dt    *fuzzDType
	shape []int
	// data holds the elements in C order, little-endian
	data []byte
	// how the file stores them
	big, fortran, forge bool
}

func (x *genTensor) key() tensorKey { return tensorKey{x.step, x.name} }

// file is the tensor's file in its run directory.
func (x *genTensor) file() string {
	if x.step == noStep {
		return x.name + ".npy"
	}
	return filepath.Join(fmt.Sprintf("step_%06d", x.step), x.name+".npy")
}

func (x *genTensor) len() int {
	n := 1
	for _, d := range x.shape {
		n *= d
	}
	return n
}

func (x *genTensor) layout() string {
	var out []string
	for _, f := range []struct {
		on   bool
		word string
	}{{x.big, "big-endian"}, {x.fortran, "Fortran"}, {x.forge, "forged"}} {
		if f.on {
			out = append(out, f.word)
		}
	}
	return strings.Join(out, " ")
}

// describe says what x holds, for a failure's message.
func (x *genTensor) describe() string {
	if x == nil {
		return "-"
	}
	var vals []string
	for i := range x.len() {
		re, im := npyfile.Value(x.dt.littleDescr(), x.elem(i))
		if x.dt.class == complexClass {
			vals = append(vals, fmt.Sprintf("(%g,%g)", re, im))
		} else {
			vals = append(vals, fmt.Sprint(re))
		}
	}
	return fmt.Sprintf("%s %v %s %v", x.dt.name, x.shape, x.layout(), vals)
}

func (x *genTensor) elem(i int) []byte {
	return x.data[i*x.dt.size : (i+1)*x.dt.size]
}

// integers returns the exact values of an exact (bool, integer) tensor.
func (x *genTensor) integers() []string {
	out := make([]string, x.len())
	for i := range out {
		out[i], _ = npyfile.Integer(x.dt.littleDescr(), x.elem(i))
	}
	return out
}

// nanMask says which elements are NaN (numpy's isnan).
func (x *genTensor) nanMask() []bool {
	out := make([]bool, x.len())
	if x.dt.class == exactClass {
		return out
	}
	for i := range out {
		re, im := npyfile.Value(x.dt.littleDescr(), x.elem(i))
		out[i] = math.IsNaN(re) || math.IsNaN(im)
	}
	return out
}

// infinitiesDiffer reports whether a and b, of one dtype and shape and
// NaN at the same elements, differ at an element where either holds an
// infinity: a real one is equal only to the same infinity, a complex one
// to the same value part by part (numpy's isclose).
func infinitiesDiffer(a, b *genTensor) bool {
	if a.dt.class == exactClass {
		return false
	}
	for i := range a.len() {
		ar, ai := npyfile.Value(a.dt.littleDescr(), a.elem(i))
		br, bi := npyfile.Value(b.dt.littleDescr(), b.elem(i))
		inf := math.IsInf(ar, 0) || math.IsInf(ai, 0) || math.IsInf(br, 0) || math.IsInf(bi, 0)
		nan := math.IsNaN(ar) || math.IsNaN(ai) || math.IsNaN(br) || math.IsNaN(bi)
		if inf && !nan && (ar != br || ai != bi) {
			return true
		}
	}
	return false
}

// write writes x's file under root.
func (x *genTensor) write(root string) error {
	path := filepath.Join(root, x.file())
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data := x.data
	if x.fortran {
		data = npyfile.FortranOrder(x.shape, x.dt.size, data)
	}
	descr := x.dt.littleDescr()
	if x.big && x.dt.size > 1 {
		data = npyfile.Swap(data, x.dt.partSize())
		descr = ">" + x.dt.code
	}
	a := npyfile.Array{Descr: descr, Shape: x.shape, Fortran: x.fortran, Data: data}
	if x.forge {
		return npyfile.Forge(path, a)
	}
	return npyfile.Write(path, a)
}

// fuzzDType is a dtype as the generated files store it.
type fuzzDType struct {
	name  string // as the report names it
	code  string // numpy's type code: "f4", "V2"
	size  int
	class dtClass
}

type dtClass int

const (
	exactClass   dtClass = iota // bool and integers: compared exactly
	floatClass                  // IEEE and brain floats
	float8Class                 // float8_e4m3fn, float8_e5m2
	complexClass                // complex64, complex128
)

// fuzzDTypes are the dtypes graphdiff reads from .npy.
var fuzzDTypes = []*fuzzDType{
	{"bool", "b1", 1, exactClass},
	{"int8", "i1", 1, exactClass},
	{"uint8", "u1", 1, exactClass},
	{"int16", "i2", 2, exactClass},
	{"uint16", "u2", 2, exactClass},
	{"int32", "i4", 4, exactClass},
	{"uint32", "u4", 4, exactClass},
	{"int64", "i8", 8, exactClass},
	{"uint64", "u8", 8, exactClass},
	{"float16", "f2", 2, floatClass},
	{"bfloat16", "V2", 2, floatClass},
	{"float32", "f4", 4, floatClass},
	{"float64", "f8", 8, floatClass},
	{"complex64", "c8", 8, complexClass},
	{"complex128", "c16", 16, complexClass},
	{"float8_e4m3fn", "V1", 1, float8Class},
	{"float8_e5m2", "f1", 1, float8Class},
}

// fuzzDType returns the dtype named name.
func dtypeNamed(name string) *fuzzDType {
	for _, d := range fuzzDTypes {
		if d.name == name {
			return d
		}
	}
	panic("no dtype " + name)
}

func (d *fuzzDType) exact() bool { return d.class == exactClass }

// littleDescr is the descr numpy (or ml_dtypes) writes for d on a
// little-endian machine.
func (d *fuzzDType) littleDescr() string {
	switch {
	case d.code == "f1":
		return "<f1" // ml_dtypes' float8_e5m2
	case d.size == 1:
		return "|" + d.code
	}
	return "<" + d.code
}

// partSize is the size of each part of an element that has its own byte
// order: half the element for complex dtypes.
func (d *fuzzDType) partSize() int {
	if d.class == complexClass {
		return d.size / 2
	}
	return d.size
}

// part is the dtype of a complex dtype's parts.
func (d *fuzzDType) part() *fuzzDType {
	if d.code == "c8" {
		return dtypeNamed("float32")
	}
	return dtypeNamed("float64")
}

// fuzzKinds are the places of a step directory a tensor is dumped to,
// with the kind graphdiff reads from each.
var fuzzKinds = []struct {
	dir, prefix, kind string
}{
	{"", "loss", "loss"}, // step_N/loss.npy
	{"grads", "w", "grad"},
	{"params", "w", "param"},
	{"inputs", "x", "input"},
	{"outputs", "y", "output"},
	{"buffers", "b", "tensor"},
}

// fuzzSteps are the step numbers a run's steps are drawn from.
const fuzzSteps = 8

// byteSource hands out a fuzz input's bytes, then zeros.
type byteSource struct {
	data []byte
	i    int
}

func (s *byteSource) next() byte {
	if s.i >= len(s.data) {
		return 0
	}
	s.i++
	return s.data[s.i-1]
}

func (s *byteSource) done() bool { return s.i >= len(s.data) }

// generate reads two runs from a fuzz input; every input makes some. The
// bytes, in order (compareRunsSeeds writes them so):
//
//	flags      bits 0–1: 0 B a copy of A, 1 A re-encoded, 2 and 3 perturbed;
//	           bit 2: --float8 e4m3fn; bit 3: a root losses.npy; bit 4: a
//	           decoding step (gen/tokens int64 [S], gen/logits float32
//	           [S, V]) at every step; bit 5: taps, the outputs dumped as
//	           activations of the modules y0–y2 that the manifests name
//	[decoding] with flag bit 4, S−1 (b%3), V−2 (b%5) and the two layout bytes
//	steps      1 + b%4, then that many step numbers b%8 (repeats dropped)
//	tensors    1 + b%5, then for each a tensor header (genHeader) and the
//	           steps it is in (bit i: the i-th step; none set: all); a
//	           name already drawn is dropped
//	[losses]   with flag bit 3, a 1-D loss curve at the run's root: its
//	           dtype (b%17) and layout byte
//	values     A's elements, tensor by tensor, step by step (genElem)
//	B          per variant: re-encoded, a layout byte per tensor of A;
//	           perturbed, an action and a layout byte per tensor of A,
//	           tensors only in B and a step dropped (perturb)
func generate(data []byte) *genRuns {
	s := &byteSource{data: data}
	flags := s.next()
	g := &genRuns{variant: variant(min(flags&3, 2)), float8Hint: flags&4 != 0, taps: flags&32 != 0}
	var steps []int
	for range 1 + s.next()%4 {
		if st := int(s.next() % fuzzSteps); !slices.Contains(steps, st) {
			steps = append(steps, st)
		}
	}
	slices.Sort(steps)
	type header struct {
		name, kind string
		dt         *fuzzDType
		shape      []int
		layout     byte
		steps      []int
	}
	var headers []header
	for range 1 + s.next()%5 {
		name, kind, dt, layout, shape := genHeader(s)
		mask := s.next()
		var in []int
		for i, st := range steps {
			if mask>>i&1 != 0 {
				in = append(in, st)
			}
		}
		if len(in) == 0 {
			in = steps
		}
		if g.taps && kind == "output" {
			name, kind = "activations/"+strings.TrimPrefix(name, "outputs/"), "activation"
		}
		if !slices.ContainsFunc(headers, func(h header) bool { return h.name == name }) {
			headers = append(headers, header{name, kind, dt, shape, layout, in})
		}
	}
	if flags&8 != 0 {
		dt := fuzzDTypes[int(s.next())%len(fuzzDTypes)]
		headers = append(headers, header{"losses", "loss", dt, []int{steps[len(steps)-1] + 1}, s.next(), []int{noStep}})
	}
	if flags&16 != 0 { // a decoding step at every step: int64 tokens [S] beside float32 logits [S, V]
		rows, vocab := 1+int(s.next()%3), 2+int(s.next()%5)
		headers = append(headers, header{"gen/tokens", "tensor", dtypeNamed("int64"), []int{rows}, s.next(), steps},
			header{"gen/logits", "tensor", dtypeNamed("float32"), []int{rows, vocab}, s.next(), steps})
	}
	for _, h := range headers {
		for _, st := range h.steps {
			x := &genTensor{step: st, name: h.name, kind: h.kind, dt: h.dt, shape: h.shape}
			x.setLayout(h.layout)
			x.data = genData(s, h.dt, x.len())
			g.a = append(g.a, x)
		}
	}
	switch g.variant {
	case copyB:
		g.b = g.a
	case reencodeB:
		for _, x := range g.a {
			y := *x
			y.setLayout(s.next())
			g.b = append(g.b, &y)
		}
	case perturbB:
		g.b = perturb(s, g.a, steps)
	}
	return g
}

// genHeader reads a tensor's header: a byte for its kind (b%6, one of
// fuzzKinds) and subject (b/6%3: "w0" to "w2"), one for its dtype (b%17,
// one of fuzzDTypes), one for its layout (setLayout), one for its rank
// (b%4) and one for each dimension (b%6: 0 to 5).
func genHeader(s *byteSource) (name, kind string, dt *fuzzDType, layout byte, shape []int) {
	kb := s.next()
	k := fuzzKinds[int(kb)%len(fuzzKinds)]
	name = k.prefix
	if k.dir != "" {
		name = fmt.Sprintf("%s/%s%d", k.dir, k.prefix, kb/6%3)
	}
	dt = fuzzDTypes[int(s.next())%len(fuzzDTypes)]
	layout = s.next()
	shape = make([]int, s.next()%4)
	for i := range shape {
		shape[i] = int(s.next() % 6)
	}
	return name, k.kind, dt, layout, shape
}

// setLayout sets how x's file stores it from a byte: bit 0 big-endian,
// bit 1 Fortran order, bit 2 forged (npyfile.Forge) even where npyio
// could write it.
func (x *genTensor) setLayout(b byte) {
	x.big, x.fortran, x.forge = b&1 != 0 && x.dt.size > 1, b&2 != 0, b&4 != 0
}

// genData reads n elements of dtype dt (genElem), in C order.
func genData(s *byteSource, dt *fuzzDType, n int) []byte {
	out := make([]byte, 0, n*dt.size)
	for i := range n {
		out = append(out, genElem(s, dt, i)...)
	}
	return out
}

// genElem reads the element at position pos of a tensor of dtype dt,
// little-endian: a selector byte b, then
//
//	b < 32    the special value b%len (specials: ±0, ±Inf, NaN, subnormals,
//	          extremes, integers around 2^53, 2^62 and 2^64)
//	b < 160   an ordinary value k = b−96: k/8 for floats, k for integers
//	          (wrapped to the dtype), k&1 for bool, the pattern k for float8
//	else      the element's bytes, raw (bool: the low bit)
//
// A complex element is two float elements. Past the input's end, elements
// are the ordinary values pos%17−8.
func genElem(s *byteSource, dt *fuzzDType, pos int) []byte {
	if dt.class == complexClass {
		return append(genElem(s, dt.part(), pos), genElem(s, dt.part(), pos+1)...)
	}
	if s.done() {
		return ordinary(dt, pos%17-8)
	}
	b := s.next()
	switch {
	case b < 32:
		sp := specials(dt)
		return sp[int(b)%len(sp)]
	case b < 160:
		return ordinary(dt, int(b)-96)
	}
	out := make([]byte, dt.size)
	for i := range out {
		out[i] = s.next()
	}
	if dt.code == "b1" {
		out[0] &= 1
	}
	return out
}

// ordinary returns the value k/8 of a float dtype, k of an integer one
// (wrapped), k&1 of bool, the pattern k of float8, little-endian.
func ordinary(dt *fuzzDType, k int) []byte {
	switch {
	case dt.code == "b1":
		return []byte{byte(k & 1)}
	case dt.class == exactClass:
		return binary.LittleEndian.AppendUint64(nil, uint64(int64(k)))[:dt.size]
	case dt.class == float8Class:
		return []byte{byte(k)}
	}
	v := float64(k) / 8
	switch dt.code {
	case "f2":
		return binary.LittleEndian.AppendUint16(nil, float16.Fromfloat32(float32(v)).Bits())
	case "V2":
		return binary.LittleEndian.AppendUint16(nil, uint16(math.Float32bits(float32(v))>>16))
	case "f4":
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v)))
	}
	return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))
}

// floatFormats are the mantissa and exponent widths of the float dtypes.
var floatFormats = map[string]struct{ man, exp uint }{"f2": {10, 5}, "V2": {7, 8}, "f4": {23, 8}, "f8": {52, 11}}

// specials returns the special values of a (real) dtype, little-endian.
func specials(dt *fuzzDType) [][]byte {
	var bits []uint64
	switch dt.class {
	case exactClass:
		if dt.code == "b1" {
			return [][]byte{{0}, {1}}
		}
		w := 8 * uint(dt.size)
		top := uint64(1) << (w - 1)
		bits = []uint64{0, 1, ^uint64(0), top, top - 1, 1 << 53, 1<<53 + 1, 1 << 62, 1<<62 + 1, ^uint64(0) - 1, 1 << 31, 1<<32 + 1}
	case float8Class:
		// ±0, NaN (e4m3fn: S.1111.111; e5m2: .11111.01), e5m2's ±Inf and
		// e4m3fn's 256, the largest finite values, the smallest
		// subnormals, 1
		bits = []uint64{0x00, 0x80, 0x7F, 0xFF, 0x7C, 0xFC, 0x7E, 0x7B, 0x01, 0x81, 0x38, 0x3C}
	default:
		f := floatFormats[dt.code]
		sign := uint64(1) << (f.man + f.exp)
		inf := (uint64(1)<<f.exp - 1) << f.man
		one := (uint64(1)<<(f.exp-1) - 1) << f.man
		bits = []uint64{0, sign, inf, sign | inf, inf | 1<<(f.man-1), sign | inf | 1, inf | 1, // ±0, ±Inf, NaNs
			1, sign | 1, 1<<f.man - 1, 1 << f.man, // subnormals, the smallest normal
			inf - 1, sign | (inf - 1), one, sign | one, one | 1} // the largest finite, ±1, 1 + ε
	}
	out := make([][]byte, len(bits))
	for i, b := range bits {
		out[i] = binary.LittleEndian.AppendUint64(nil, b)[:dt.size]
	}
	return out
}

// perturb reads run B from A (tensors in A's order, their steps): per
// tensor of A an action byte b%8,
//
//	0–3  the same values
//	4    not in B
//	5    1 + b%3 elements changed, each: a position byte (b%len), then
//	     b < 128: bit b%(8·size) flipped (bool: the value toggled), else
//	     a new element (genElem)
//	6    stored in another dtype (b%17), new elements
//	7    another shape (a rank byte and dimension bytes), new elements
//
// then a layout byte; then 0–2 tensors only in B (b%3: for each a tensor
// header, a step byte b%8, elements); then a byte that, from 0xC0 on,
// drops B's step b%len(steps).
func perturb(s *byteSource, a []*genTensor, steps []int) []*genTensor {
	var b []*genTensor
	for _, x := range a {
		y := *x
		y.data = slices.Clone(x.data)
		switch s.next() % 8 {
		case 4:
			continue
		case 5:
			for range 1 + s.next()%3 {
				pos, how := int(s.next()), s.next()
				if y.len() == 0 {
					continue
				}
				pos %= y.len()
				e := y.data[pos*y.dt.size : (pos+1)*y.dt.size]
				switch {
				case y.dt.code == "b1":
					e[0] ^= 1
				case how < 128:
					bit := int(how) % (8 * y.dt.size)
					e[bit/8] ^= 1 << (bit % 8)
				default:
					copy(e, genElem(s, y.dt, pos))
				}
			}
		case 6:
			y.dt = fuzzDTypes[int(s.next())%len(fuzzDTypes)]
			y.data = genData(s, y.dt, y.len())
		case 7:
			y.shape = make([]int, s.next()%4)
			for i := range y.shape {
				y.shape[i] = int(s.next() % 6)
			}
			y.data = genData(s, y.dt, y.len())
		}
		y.setLayout(s.next())
		b = append(b, &y)
	}
	for range s.next() % 3 {
		name, kind, dt, layout, shape := genHeader(s)
		y := &genTensor{step: int(s.next() % fuzzSteps), name: name, kind: kind, dt: dt, shape: shape}
		y.setLayout(layout)
		y.data = genData(s, dt, y.len())
		if !slices.ContainsFunc(b, func(z *genTensor) bool { return z.key() == y.key() }) {
			b = append(b, y)
		}
	}
	if d := s.next(); d >= 0xC0 {
		drop := steps[int(d)%len(steps)]
		b = slices.DeleteFunc(b, func(z *genTensor) bool { return z.step == drop })
	}
	return b
}
