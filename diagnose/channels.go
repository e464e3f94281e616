package diagnose

import (
	"math"
	"slices"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// channelFinding is what moduleChannels (or outputChannels) found: at the first divergent
// step, the departing module's output in the graphed run is the eager
// one's under an affine map of its own for each channel (a scale and an
// offset per channel), and under no single one.
type channelFinding struct {
	step int
	// module is moduleWords of the departing module; where the finding
	// is an inference run's output (outputChannels) it is "" and name
	// is the output's pair
	module, name string
	axis         int // the channel axis of the module's output
	channels     int // how many channels the values read cover
	// perChannel and global are the fits' residuals relative to the
	// graphed output, ‖B − (α_c·A + β_c)‖ / ‖B‖ with least-squares α_c,
	// β_c per channel and α, β for all; limit the activation's relative
	// L2 limit, which perChannel is within and global beyond.
	perChannel, global, limit float64
	// fit is the per-channel prediction's fit, 1 − ‖B − P‖ / ‖B − A‖
	// (see fitOf).
	fit float64
}

// minPerChannel is how many values each channel must hold for its fit to
// say anything: a least-squares affine fit of n values removes about 2/n
// of a difference unrelated to the eager values, so with 8 or more at
// least 87% of such a difference's norm is left.
const minPerChannel = 8

// moduleChannels tests, where the taps place the first divergent step in
// a module whose input agrees (judge.ModuleDeparture, forward), the
// prediction of a tensor of per-channel values the module reads (a mean
// and a standard deviation, a per-channel scale) held at its value at
// capture while eager's changes: the graphed output B is eager's A under
// an affine map per channel, B ≈ α_c·A + β_c, within the activation's
// limit, while no single map B ≈ α·A + β (a scalar frozen at capture)
// fits. The channel axis is the second (N, C, …) or the last (…, C). The
// values are the pair's head, as read for the samples: the first values
// in storage order (C or Fortran, as the file says), which in C order
// cover whole channels along the last axis and the first channels of the
// first item along the second; at least two
// channels of minPerChannel values each are needed. Nil when the taps
// place no such module, its values were not read, or the prediction does
// not fit.
func (f *facts) moduleChannels() *channelFinding {
	m := f.r.FirstModule
	if m == nil || m.Backward || m.Pair == nil || m.Pair.Kind != loaders.KindActivation {
		return nil
	}
	cf := f.channelsOf(m.Pair)
	if cf != nil {
		cf.module = moduleWords(m)
	}
	return cf
}

// outputChannels is moduleChannels' test on what an inference run
// dumped (f.inference: only what the model put out, each output a
// function of its batch and of what the model holds): the first
// divergent pair, where it is an output. A model that read per-channel
// values held from capture (a per-class bias, a normalization's
// statistics) puts out eager's outputs under an affine map per channel;
// another batch moves rows, not channels, and a Python number frozen at
// capture maps every channel alike.
func (f *facts) outputChannels() *channelFinding {
	t := f.r.FirstDivergence
	if !f.inference() || t == nil || t.Status != judge.StatusMismatch || !slices.Contains(f.outputKinds(), t.Kind) {
		return nil
	}
	return f.channelsOf(t)
}

// channelsOf makes the per-channel test of moduleChannels on one pair.
func (f *facts) channelsOf(p *judge.TensorResult) *channelFinding {
	if p.A == nil || f.pairHead == nil {
		return nil
	}
	a, b := f.pairHead(p.Step, p.Kind, p.Name)
	limit := p.MaxRelL2
	shape := p.A.Shape
	if len(a) == 0 || len(a) != len(b) || !(limit > 0) || !allFinite(a, b) {
		return nil
	}
	var axes []int
	if len(shape) >= 3 {
		axes = append(axes, 1)
	}
	if len(shape) >= 2 {
		axes = append(axes, len(shape)-1)
	}
	normB := norm(b)
	if !(normB > 0) {
		return nil
	}
	global := affineResidual(a, b, func(int) int { return 0 }, 1) / normB
	if !(global > limit) {
		return nil // one scale and offset: a scalar's mark, not a tensor's
	}
	for _, axis := range axes {
		c := shape[axis]
		inner := 1 // values per channel run in storage order
		faster := shape[axis+1:]
		if p.A.FortranOrder {
			faster = shape[:axis] // the first axis varies fastest
		}
		for _, d := range faster {
			inner *= d
		}
		if c < 2 || inner < 1 {
			continue
		}
		channel := func(i int) int { return (i / inner) % c }
		covered := min(c, (len(a)+inner-1)/inner)
		if covered < 2 || len(a)/covered < minPerChannel {
			continue
		}
		if rss := affineResidual(a, b, channel, c); rss/normB <= limit {
			return &channelFinding{step: p.Step, name: p.Name, axis: axis, channels: covered,
				perChannel: rss / normB, global: global, limit: limit, fit: 1 - rss/norm(sub(b, a))}
		}
	}
	return nil
}

// affineResidual returns ‖b − (α_g·a + β_g)‖ over the groups g =
// group(i) < n, α_g and β_g the least-squares fit of b on a within each
// group (β_g alone, the mean, where a is constant in the group). The
// fit comes from the groups' sums and the residual from a second pass
// over the values, which keeps it exact to rounding where the fit is
// (a residual from the sums alone would cancel).
func affineResidual(a, b vec, group func(int) int, n int) float64 {
	type fit struct{ n, sa, sb, saa, sab, alpha, beta float64 }
	s := make([]fit, n)
	for i, x := range a {
		g := &s[group(i)]
		g.n++
		g.sa += x
		g.sb += b[i]
		g.saa += x * x
		g.sab += x * b[i]
	}
	for i := range s {
		g := &s[i]
		if g.n == 0 {
			continue
		}
		ma, mb := g.sa/g.n, g.sb/g.n
		if vaa := g.saa - g.sa*ma; vaa > 0 {
			g.alpha = (g.sab - g.sa*mb) / vaa
		}
		g.beta = mb - g.alpha*ma
	}
	var rss float64
	for i, x := range a {
		g := &s[group(i)]
		r := b[i] - (g.alpha*x + g.beta)
		rss += r * r
	}
	return math.Sqrt(rss)
}
