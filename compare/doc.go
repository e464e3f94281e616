// Package compare is the engine: a pair of tensors in, a value of numbers
// out. It owns the comparison of paired tensors (Pairs: Job in, Outcome
// with Metrics out) and the summary statistics of one tensor (Summarize),
// with everything that makes them fast: the float32, 16-bit and mixed
// kernels (assembly on amd64 with AVX2 and AVX-512, plain Go elsewhere and
// with -tags purego), the lane sums, the error histogram, ULP distances,
// memory-mapped sources and chunking. It decides nothing: verdicts are
// package judge's, from the values it returns.
//
// Statistics are computed in one streaming pass per tensor, over buffers
// of decoded values, with float64 accumulators: memory does not grow with
// tensor size. Large tensors that can be read at any offset are split into
// chunks compared in parallel and merged in chunk order, so results are
// identical whatever the number of workers. An element is beyond the
// tolerance when tolerances.Tolerance.Beyond says so (|a−b| > atol +
// rtol·|a|, a the reference); every kernel is tested against that
// function.
package compare
