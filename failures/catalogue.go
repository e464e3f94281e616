package failures

// Role says what a matched class is in the story of a failure: a Cause is
// something the user's code did; a Consequence is the CUDA error it led
// to. Causes are told first.
type Role int

const (
	// Cause is a class naming what the code did (an .item(), a generator,
	// a thread).
	Cause Role = iota
	// Consequence is a class naming the CUDA error that followed.
	Consequence
)

func (r Role) String() string {
	if r == Cause {
		return "cause"
	}
	return "consequence"
}

// Class is one failure class of the catalogue: a stable ID, a title, what
// the failure means, how to fix it, and the pages its facts come from.
type Class struct {
	ID      string
	Title   string
	Role    Role
	Meaning string
	Fix     string
	Sources []string
	// Subsumes names classes this one makes redundant when both match: a
	// more specific cause over a general one.
	Subsumes []string
}

// Pages the catalogue's facts come from.
const (
	srcGuide     = "https://docs.nvidia.com/dl-cuda-graph/troubleshooting/capture-failures.html"
	srcChecklist = "https://docs.nvidia.com/dl-cuda-graph/torch-cuda-graph/quick-checklist.html"
	srcLimits    = "https://docs.nvidia.com/dl-cuda-graph/cuda-graph-basics/constraints.html"
	srcGraph     = "https://docs.pytorch.org/docs/stable/generated/torch.cuda.graphs.graph.html"
	srcGenerator = "https://docs.pytorch.org/docs/stable/generated/torch.Generator.html"
	srcCodes     = "https://github.com/NVIDIA/cuda-python/pull/458"
	srcImplicit  = "https://github.com/gittensor-ai-lab/sparkinfer/pull/968"
	srcCkpt      = "https://github.com/pytorch/pytorch/issues/83148"
	srcCkptRNG   = "https://github.com/pytorch/pytorch/issues/162504"
	srcDDPNotes  = "https://docs.pytorch.org/docs/stable/notes/cuda.html#usage-with-distributeddataparallel"
	srcWatchdog  = "https://github.com/pytorch/pytorch/pull/102542"
	srcNCCL      = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/usage/cudagraph.html"
)

// Classes is the catalogue, causes first, each group in the order a match
// is told: the more specific class before the more general.
var Classes = []Class{
	{
		ID: "checkpoint_rng", Title: "activation checkpointing saves or restores the CUDA RNG state during capture", Role: Cause,
		Meaning: "torch.utils.checkpoint with preserve_rng_state=True (the default) reads the CUDA RNG state\n" +
			"in the forward and sets it again before recomputing in the backward, so that dropout draws\n" +
			"the same mask twice. Reading or setting a generator's seed or state is not allowed while a\n" +
			"graph is being captured: PyTorch stops with \"Cannot call CUDAGeneratorImpl::... during CUDA\n" +
			"graph capture\". PyTorch 2.11 on an H100 ran both checkpointing snippets of\n" +
			"testdata/gen/capture_errors.py without an error (testdata/gen/capture_errors.log): the\n" +
			"message comes from earlier versions.",
		Fix: "Pass preserve_rng_state=False when the checkpointed block draws no random numbers. If it does\n" +
			"(dropout), use a checkpoint that keeps RNG state with the graph-safe generator API\n" +
			"(Generator.graphsafe_get_state / graphsafe_set_state) instead of torch.cuda.get_rng_state,\n" +
			"or keep the checkpointed region out of the captured part. Check your PyTorch version's\n" +
			"release notes: capture support for checkpointing's RNG handling has been changing.",
		Sources:  []string{srcCkpt, srcCkptRNG, srcGenerator},
		Subsumes: []string{"rng_state_in_capture"},
	},
	{
		ID: "rng_state_in_capture", Title: "the CUDA RNG state is read or set during capture", Role: Cause,
		Meaning: "torch.cuda.get_rng_state, set_rng_state, manual_seed or seed were called while a graph was\n" +
			"being captured. During capture the generator keeps its state for the graph (seed and offset\n" +
			"are read on the device when the graph replays), so the host-side state cannot be read or\n" +
			"replaced: PyTorch refuses with \"Cannot call CUDAGeneratorImpl::... during CUDA graph capture\".\n" +
			"PyTorch 2.11 on an H100 ran get_rng_state and set_rng_state during capture without an error\n" +
			"(testdata/gen/capture_errors.log): the message comes from earlier versions.",
		Fix: "Seed and save RNG state before the capture, outside torch.cuda.graph. Inside the captured\n" +
			"region, use Generator.graphsafe_get_state() and graphsafe_set_state() when a state must be\n" +
			"saved and restored.",
		Sources: []string{srcGenerator, srcCkptRNG, srcGuide},
	},
	{
		ID: "generator_unregistered", Title: "a CUDA generator the graph does not know is used during capture", Role: Cause,
		Meaning: "A random op drew from a torch.Generator other than the device's default one, and that\n" +
			"generator was not registered with the graph being captured. Only registered generators\n" +
			"advance their offset inside the graph; PyTorch stops with \"Attempt to increase offset for a\n" +
			"CUDA generator not in capture mode\" (older versions: \"philox_cuda_state for an unexpected\n" +
			"CUDA generator used during capture\").",
		Fix: "Register the generator before capturing: g.register_generator_state(gen) on the\n" +
			"torch.cuda.CUDAGraph (torch.cuda.graph and make_graphed_callables capture into one), or draw\n" +
			"from the default generator inside the captured region.",
		Sources: []string{srcGenerator, srcGuide},
	},
	{
		ID: "ddp_capture", Title: "DistributedDataParallel is captured without the setup graphs need", Role: Cause,
		Meaning: "DDP's reducer or NCCL communicator was used during capture in a state capture cannot take:\n" +
			"DDP built on the default stream (its buckets and AccumulateGrad hooks then refer to work\n" +
			"outside the capture), too few eager iterations before capture, or the NCCL watchdog\n" +
			"querying events recorded in the capturing stream.",
		Fix: "Build DDP inside a side-stream context (s = torch.cuda.Stream(); with torch.cuda.stream(s):\n" +
			"model = DDP(model)), run the eager warm-up iterations PyTorch's notes ask for before\n" +
			"capturing (at least 11 with DDP), and on PyTorch before 2.2 set\n" +
			"TORCH_NCCL_ASYNC_ERROR_HANDLING=0 before init_process_group so the watchdog leaves captured\n" +
			"work alone. Capture with one GPU per process.",
		Sources: []string{srcChecklist, srcDDPNotes, srcWatchdog, srcNCCL},
	},
	{
		ID: "background_thread", Title: "another thread (pinned memory, a data loader) uses CUDA during capture", Role: Cause,
		Meaning: "torch.cuda.graph captures with capture_error_mode=\"global\" by default: a capture-unsafe\n" +
			"CUDA call from any thread of the process (an allocation, an event query, pinning host\n" +
			"memory, which queries events behind the scenes) fails and invalidates the capture. A\n" +
			"DataLoader with pin_memory=True runs such a thread.",
		Fix: "Keep other threads off CUDA while capturing: capture before starting the loader's\n" +
			"iterator or after draining it, or disable pin_memory for the captured phase. If the\n" +
			"thread's work is independent of the capture, capture with\n" +
			"torch.cuda.graph(g, capture_error_mode=\"thread_local\") so only the capturing thread is\n" +
			"checked.",
		Sources: []string{srcGraph, srcChecklist, srcGuide},
	},
	{
		ID: "host_sync", Title: "the CPU waits for the GPU inside the captured region", Role: Cause,
		Meaning: "A call that makes the CPU wait for a GPU result (.item(), .cpu(), .tolist(), .numpy(),\n" +
			"print of a CUDA tensor, torch.cuda.synchronize(), stream or event synchronize(), ops\n" +
			"whose output size depends on the data such as nonzero) ran during capture. During capture\n" +
			"no kernel runs, so there is no result to wait for: CUDA refuses the synchronisation\n" +
			"(cudaErrorStreamCaptureUnsupported) and the capture is invalidated.",
		Fix: "Move the call out of the captured region: read losses and metrics after replay() from the\n" +
			"static output tensors, keep branches that depend on tensor values outside the graph (or\n" +
			"compute both sides with torch.where), and print after the capture.",
		Sources: []string{srcGuide, srcChecklist, srcLimits},
	},
	{
		ID: "capture_unjoined", Title: "work forked onto a side stream was not joined back before capture ended (904)", Role: Consequence,
		Meaning: "cudaErrorStreamCaptureUnjoined: the capture forked work onto another stream\n" +
			"(side.wait_stream(capturing stream), then work on side) and ended while that work had\n" +
			"not been joined back into the capturing stream.",
		Fix: "Before the capture ends, make the capturing stream wait for every stream it forked:\n" +
			"torch.cuda.current_stream().wait_stream(side) after the side-stream work.",
		Sources: []string{srcCodes, srcGuide},
	},
	{
		ID: "capture_isolation", Title: "the capture depends on work outside it (905)", Role: Consequence,
		Meaning: "cudaErrorStreamCaptureIsolation: a dependency would cross the boundary of the capture,\n" +
			"as when the capturing stream waits on an event or a stream whose work was launched\n" +
			"outside the capture. Every stream used during capture must branch from the capturing\n" +
			"stream.",
		Fix: "Synchronise with outside work before the capture begins (wait_stream / wait_event before\n" +
			"torch.cuda.graph), and inside it fork side streams from the capturing stream only.",
		Sources: []string{srcCodes, srcGuide},
	},
	{
		ID: "capture_implicit", Title: "the legacy default stream was touched while a blocking stream captured (906)", Role: Consequence,
		Meaning: "cudaErrorStreamCaptureImplicit: work was issued on the legacy default stream while a\n" +
			"blocking stream was capturing; the default stream synchronises implicitly with blocking\n" +
			"streams, a dependency a capture cannot hold.",
		Fix: "Do not use torch.cuda.default_stream() (or libraries that launch on stream 0) during\n" +
			"capture; capture on a non-blocking side stream (torch.cuda.graph's own, or\n" +
			"torch.cuda.Stream()), and make extensions use PyTorch's current stream.",
		Sources: []string{srcCodes, srcImplicit, srcLimits},
	},
	{
		ID: "capture_unsupported", Title: "an operation not permitted while a stream captures (900)", Role: Consequence,
		Meaning: "cudaErrorStreamCaptureUnsupported: a CUDA call that cannot be recorded into a graph\n" +
			"ran during capture: a synchronisation, a stream or event query, a synchronous copy, or,\n" +
			"in the default global capture mode, a capture-unsafe call from another thread.",
		Fix: "Find the call in the traceback's last frame of your code and move it before or after\n" +
			"the capture; replace stream.query()/event.query() with waits outside the captured\n" +
			"region.",
		Sources: []string{srcCodes, srcGuide, srcChecklist},
	},
	{
		ID: "capture_invalidated", Title: "the capture was invalidated by an earlier error (901)", Role: Consequence,
		Meaning: "cudaErrorStreamCaptureInvalidated: an earlier illegal operation during this capture\n" +
			"invalidated it, and every later call on the capture, including ending it, fails. This\n" +
			"error is the consequence; the cause is the first error of the capture, which may have\n" +
			"been caught and hidden, or raised in another thread.",
		Fix: "Look for the first CUDA error of the capture (earlier in the log, another thread, an\n" +
			"except clause that swallowed it) and fix that; rerunning with the capture's body outside\n" +
			"any try/except shows it.",
		Sources: []string{srcCodes, srcGuide},
	},
}

// ClassByID returns the catalogue's class with the given ID.
func ClassByID(id string) (Class, bool) {
	for _, c := range Classes {
		if c.ID == id {
			return c, true
		}
	}
	return Class{}, false
}
