// Package curve owns loss-curve analysis: whether two runs' loss curves
// agree, where they part (a break, a NaN, or a drift past its limit) and
// what pattern the difference follows. Analyze takes two curves as loaded
// by package loaders and returns a Result value; the rules are stated on
// Options and Analyze.
package curve
