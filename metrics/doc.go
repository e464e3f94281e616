// Package compare owns per-tensor metrics: the summary statistics of one
// tensor (Summarize, Inspect) now, and the comparison of paired tensors.
//
// Statistics are computed in one streaming pass per tensor, over buffers
// of decoded values, with float64 accumulators: memory does not grow with
// tensor size. Large tensors that can be read at any offset are split into
// chunks summarized in parallel and merged in chunk order, so results are
// identical whatever the number of workers.
package metrics
