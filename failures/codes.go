package failures

import "strconv"

// Code is one of the CUDA runtime's stream-capture errors: its number, its
// name in the runtime API (cudaError_t), in the driver API (CUresult), and
// the string cudaGetErrorString returns for it, which is what PyTorch
// prints after "CUDA error: ".
type Code struct {
	Number int
	Name   string // cudaErrorStreamCapture...
	Driver string // CUDA_ERROR_STREAM_CAPTURE_...
	String string // cudaGetErrorString
	Class  string // the catalogue class the code explains
}

// Codes are the stream-capture errors graphdiff explains. Names, numbers
// and strings are the CUDA runtime's (cudaError_t in the CUDA Runtime API
// reference; the table of numbers, names and strings is quoted in
// https://github.com/NVIDIA/cuda-python/pull/458; 906's string as PyTorch
// and others print it in
// https://github.com/gittensor-ai-lab/sparkinfer/pull/968).
var Codes = []Code{
	{900, "cudaErrorStreamCaptureUnsupported", "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
		"operation not permitted when stream is capturing", "capture_unsupported"},
	{901, "cudaErrorStreamCaptureInvalidated", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
		"operation failed due to a previous error during capture", "capture_invalidated"},
	{904, "cudaErrorStreamCaptureUnjoined", "CUDA_ERROR_STREAM_CAPTURE_UNJOINED",
		"capturing stream has unjoined work", "capture_unjoined"},
	{905, "cudaErrorStreamCaptureIsolation", "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
		"dependency created on uncaptured work in another stream", "capture_isolation"},
	{906, "cudaErrorStreamCaptureImplicit", "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
		"operation would make the legacy stream depend on a capturing blocking stream", "capture_implicit"},
}

// CodeByNumber returns the capture error with number n.
func CodeByNumber(n int) (Code, bool) {
	for _, c := range Codes {
		if c.Number == n {
			return c, true
		}
	}
	return Code{}, false
}

func (c Code) label() string {
	return c.Name + " (" + strconv.Itoa(c.Number) + ")"
}
