// Package diagnose names the most likely CUDA-graph bug behind a
// comparison, with the numbers that point to it and the fix.
//
// It looks at the whole comparison: every pair's metrics and statuses,
// the facts each step was judged with, and samples of both runs' raw
// values (the first elements of every tensor, the same positions at every
// step, up to 65,536 values per step and kind; buffers — parameters-kind
// tensors without a gradient — apart from parameters). The signatures it
// reads are those any training run leaves in its losses, gradients and
// parameters: which eager step the graph matches (input_lag), how much the
// graph changes from step to step against eager (stale_input), whether it
// adds the previous step's gradient (grad_accumulation) or repeats one
// buffer (output_aliasing), whether gradients or updates are a scale of
// eager's and where the scale acts (captured_scalar, reassigned_tensor),
// whether the loss agrees bit for bit while gradients do not
// (callables_accumulation), which parameters one run never moves
// (grads_zero_not_none), and whether the difference starts at the first
// step, the first replay or a later one. Inputs and outputs, when dumped,
// make a diagnosis surer; when the dumps cannot separate two causes, both
// are listed and the evidence names the dump that would. Each detector
// returns a cause with a strength in [0, 1] and evidence lines; detectors
// run in a fixed order and later ones discount what earlier ones explain,
// so that, say, values that never change count for output_aliasing rather
// than stale_input.
//
// Where a cause predicts numbers the dumps hold (the graph's step k is
// eager's k−1, its gradient the previous one plus eager's, its values
// eager's last, a scale of eager's, unchanging from step to step), the
// prediction is tested: its fit is the share of the graphed run's
// difference from eager it removes (fit.go), and a cause whose prediction
// removes nothing is not named. A strength grades how specific the
// signature is: 0.9 and above for signatures no other cause produces,
// around 0.75 for strong but shared ones, 0.55–0.65 for a cause that is
// what is left, or read from partial dumps, which the evidence then says.
// The causes found for one break are alternatives: the confidence
// reported is the probability that each is the one at work, given the
// strengths and one cause or none (posterior.go). When nothing is named,
// the Unexplained answer says where the runs part, what could still
// explain it and which dumps would tell (unexplained.go).
//
// On a passing comparison diagnose reports at most precision_noise (the
// differences are rounding) as a cause, and, as warnings, structured
// differences that stay inside the thresholds: gradients or parameter
// updates exactly proportional to the eager ones by a factor other than 1.
// The verdict is not changed by warnings; graphdiff compare --strict fails
// on them.
//
// Decoding dumps (logits and tokens per position, no gradients) are read
// through the decoding each step measured (judge.Pair.Decode: every row's
// tokens and logits' fingerprints), whose predictions are tested across
// steps in decode_position.go: logits that depend on the input token
// alone (a position frozen at capture), tokens that repeat (one input
// token fed at every step).
//
// Diagnose reads no file: the pipeline (package check) reads the leading
// values PlanSamples names and hands them over as Heads. Each cause lives
// in a file of its own (its ID, its explanation and its detector; helpers
// several detectors share are in signals.go), listed once in causeTable
// (causes.go), which sets the order the detectors run in and the order
// `graphdiff explain` lists them in.
package diagnose
