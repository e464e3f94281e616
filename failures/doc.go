// Package failures explains CUDA-graph failures that are not numerical:
// errors raised while PyTorch captures a CUDA graph (the stream-capture
// errors 900–906 of the CUDA runtime, host synchronisations such as
// .item(), generators and RNG state, activation checkpointing, background
// threads and pinned memory, DistributedDataParallel set up on the wrong
// stream).
//
// It owns the catalogue (Classes: what each failure class means and how to
// fix it, with the pages the facts were taken from), the CUDA error codes
// and names (Codes), the reading of a pasted traceback (Parse: exception
// blocks, frames, the user's frame) and the matching (Explain).
//
// A class matches only on evidence found in the text: a CUDA error name,
// code or message string, a distinctive PyTorch message, a frame inside a
// PyTorch module, or a call in a frame's code line. Nothing is guessed: a
// text with no evidence is Unknown. When several classes match, causes
// (what the user's code did) rank before consequences (the CUDA error it
// led to), so an .item() inside capture followed by
// cudaErrorStreamCaptureInvalidated reads "host_sync, then
// capture_invalidated".
//
// The user frame is the last frame of a traceback whose file is not inside
// torch/, site-packages, dist-packages or the Python standard library,
// taken from the exception block that holds the first match's evidence.
//
// Every function here is pure: text in, values out.
package failures
