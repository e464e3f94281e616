package diagnose

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// minPosterior is the least confidence at which a cause is named beside
// others: one chance in ten that it, and not a cause named with it, made
// the difference.
const minPosterior = 0.1

// posterior turns the strengths the detectors gave the causes they found
// into the probability that each is the one bug at work, and drops those
// below minPosterior.
//
// A detector's strength s_i is how strongly its signature, judged alone,
// shows its cause. The causes name mutually exclusive mechanisms for one
// break, so, with the detectors' signatures taken as independent and
// exactly one of the causes or none at work,
//
//	p_i = s_i · ∏_{j≠i} (1 − s_j) / Z,   Z = Σ_i s_i ∏_{j≠i} (1 − s_j) + ∏_j (1 − s_j).
//
// A cause found alone keeps its strength (p = s / (s + 1 − s)); one found
// beside a stronger one is explained away (0.5 beside 0.9 becomes 0.09,
// the 0.9 becomes 0.82); two found equally strong share (0.5 and 0.5 give
// 0.33 each). The order is unchanged (p_i is increasing in s_i). A
// strength of 1 is taken as 0.99 so that Z stays positive. Each cause
// whose confidence changed says so in its evidence, before its last line
// (the dump that would decide, which the text report shows of a cause
// listed as also possible).
//
// missing_steps is no mechanism of a break but a fact about the dumps
// (steps one run lacks), found beside whatever broke the numbers: it
// keeps its strength and explains nothing away.
func posterior(cs []Cause) []Cause {
	s := make([]float64, len(cs))
	n := 0
	for i, c := range cs {
		if c.ID != MissingSteps {
			s[i] = min(c.Confidence, 0.99)
			n++
		}
	}
	if n < 2 {
		return cs
	}
	w := make([]float64, len(cs))
	none := 1.0
	for j := range s {
		none *= 1 - s[j]
	}
	z := none
	for i := range s {
		w[i] = s[i] * none / (1 - s[i])
		z += w[i]
	}
	out := cs[:0:0]
	for i, c := range cs {
		if c.ID == MissingSteps {
			out = append(out, c)
			continue
		}
		p := math.Round(100*w[i]/z) / 100
		if p < minPosterior {
			continue
		}
		if p != c.Confidence {
			line := fmt.Sprintf("alone its signature gives %.2f; beside the other causes named, of which one made the difference, %.2f", c.Confidence, p)
			at := max(len(c.Evidence)-1, 0)
			c.Evidence = slices.Insert(slices.Clip(c.Evidence), at, line)
		}
		c.Confidence = p
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return ranksAbove(out[i], out[j]) })
	return out
}
