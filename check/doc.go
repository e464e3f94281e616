// Package check is the pipeline: it loads two runs (and a baseline),
// pairs their tensors, decides the precision once, compares every pair
// (package compare), judges each step's pairs and the run (package
// judge), analyses the loss curves (package curve), reads the samples
// diagnosis plans and hands them over as a value (package diagnose),
// applies --strict, and returns a finished outcome.Comparison for the
// renderers (package report). Runs lists the stages in order; each pair's
// result is built once and not changed after. It also merges the results of a
// sharded comparison (Merge) and summarizes one run (Inspect).
//
// It is the one package that sequences the stages; each stage only turns
// values into values. Nothing here prints or exits: package cmd/graphdiff
// turns options into Options and a Comparison into output and an exit
// status.
package check
