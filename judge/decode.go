package judge

import (
	"fmt"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// FlipFact is a sequence whose greedy token differs between the runs at
// a step (compare.Flip), as decideTokens judged it: Limit the gap a near
// tie may have, NearTie whether both gaps are within it.
type FlipFact struct {
	Name string
	compare.Flip
	Limit   float64
	NearTie bool
}

// decideTokens decides the token pair t of a decoding step, measured
// with its logits (t.Decode), recording each flip in f. Greedy decoding
// picks the largest logit; where a sequence's two best logits are a
// rounding apart, the two runs may pick either, and from there the
// sequence follows another prefix legitimately (the rows parted at an
// earlier step are not compared: compare.DecodeJob.Parted). A row whose
// tokens differ is a near tie when each run's token is within rounding of
// its own best in both runs:
//
//	ℓ_A[a] − ℓ_A[b] ≤ L  and  ℓ_B[b] − ℓ_B[a] ≤ L,
//	L = Output·ε·max(|ℓ_A[a]|, |ℓ_A[b]|, |ℓ_B[a]|, |ℓ_B[b]|)
//
// with a, b the runs' tokens, ε the working epsilon (bfloat16's where
// every logit is a bfloat16 value: a bfloat16 model's logits saved as
// float32) and Output the output rule's constant: how many ε of its size
// rounding moves an output. A token chosen farther below the other run's
// best, or outside the vocabulary, is a departure, and fails the pair.
// This is the acceptance test of vLLM's greedy-decoding comparisons (each
// run's token among the other's top log-probabilities; stop comparing
// that sequence there), with "top" made a rounding bound.
func decideTokens(t *Pair, f *StepFacts, c Context) Decision {
	d := Decision{MaxRelL2: t.Settings.MaxRelL2, MaxMismatchFraction: t.Settings.MaxMismatchFraction}
	eps := c.Precision.Epsilon
	if t.Decode.BFloat16 {
		eps = max(eps, tolerances.Epsilon(loaders.BFloat16))
	}
	if len(t.Decode.Flips) == 0 {
		d.judged(RuleTokenGap, 0, c.Rules.Output*eps) // the tokens are equal
	}
	for _, fl := range t.Decode.Flips {
		limit := c.Rules.Output * eps * fl.Scale
		near := fl.GapA <= limit && fl.GapB <= limit
		d.judged(RuleTokenGap, max(fl.GapA, fl.GapB), limit)
		f.Flips = append(f.Flips, FlipFact{Name: t.Name, Flip: fl, Limit: limit, NearTie: near})
		if !near {
			d.Reasons = append(d.Reasons, fmt.Sprintf("row %d: token %d vs %d, not a near tie: the compared run's token is %.3g below the reference's best in its logits, the reference's %.3g below the compared run's best (limit %.3g = %g·ε·%.3g, the largest of the two tokens' logits)",
				fl.Row, fl.TokenA, fl.TokenB, fl.GapA, fl.GapB, limit, c.Rules.Output, fl.Scale))
		}
	}
	settle(t, &d)
	return d
}
