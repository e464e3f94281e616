// Package judge owns the verdict: the status of each tensor pair, the
// verdict of a whole comparison and its first divergence, from metric
// values and the run's facts. It reads no file; its functions take values
// and return values, and never modify what they are given.
//
// A step is judged with all its tensors in hand (Step): gradients against
// the step's gradient scale and the drift built up before it, parameters
// by their update ratio over elements with healthy gradients, losses and
// outputs in units of the working epsilon (see Step for the formulas).
// Tensors those rules do not cover (inputs, parameters at their first
// dumped step, tensors whose max_rel_l2 the user set) are judged alone.
//
// A pair judged alone fails when (Tensor)
//
//	NaN/±Inf positions differ between the runs, or
//	rel_l2 > max_rel_l2, or
//	wilson(mismatched, count) > max_mismatch_fraction
//	  and rel_l2 > max_rel_l2 / 3
//
// where wilson(k, n) is the lower end of the one-sided 95% Wilson score
// interval of the fraction k/n (z = 1.645). Every decision records the
// rule that decided it, the measure that rule compared and the limit it
// compared it with (Decision.Rule, Measure, Limit; the Rule constants give
// each formula): Measure/Limit is at most 1 for a pair that passed and 1
// or more for one that failed by its numbers. A comparison's verdict (Run)
// is error when some input could not be read, else fail when some pair
// did not match, else pass.
package judge
