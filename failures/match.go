package failures

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Match is one class found in a text, with the evidence that found it:
// each line quotes what was seen and where.
type Match struct {
	Class    Class
	Evidence []string
	block    int // the exception block holding the first evidence
}

// Diagnosis is what Explain found in a text: the matching classes, causes
// first, and the user's frame of the first match's exception when the
// text is a traceback that shows one. No match means the text is not a
// failure graphdiff knows.
type Diagnosis struct {
	Matches   []Match
	UserFrame *Frame
}

// Recognized says whether any class matched.
func (d Diagnosis) Recognized() bool { return len(d.Matches) > 0 }

// Explain reads text (an error message, a CUDA error code or name, or a
// whole traceback) and names the failure classes its evidence shows,
// ranked: causes in catalogue order, then consequences in catalogue
// order; a class subsumed by another that matched is left out.
func Explain(text string) Diagnosis {
	tb := Parse(text)
	hits := codeHits(text, tb)
	words, capturing := inCapture(tb, hits)
	s := scan{tb: tb, hits: hits, capturing: capturing, captureWords: words}
	var found []Match
	for _, c := range Classes {
		if m, ok := matchClass(c, s); ok {
			found = append(found, m)
		}
	}
	found = dropSubsumed(found)
	d := Diagnosis{Matches: found}
	if len(found) > 0 {
		d.UserFrame = userFrame(tb, found[0].block)
	}
	return d
}

// scan is what Explain reads from a text once, before matching any class:
// the traceback, the capture error codes in it, and whether it shows a
// capture going on (captureWords: PyTorch's words for it, when no code
// shows it).
type scan struct {
	tb           Traceback
	hits         []codeHit
	capturing    bool
	captureWords string
}

// codeHit is a capture error code seen in block Block, with the words that
// showed it.
type codeHit struct {
	Code  Code
	Block int
	Seen  string
}

var (
	bareCode    = regexp.MustCompile(`^\s*(9\d\d)\s*$`)
	wordsCode   = regexp.MustCompile(`(?i)\b(?:cuda\s+)?error(?:\s+code)?\s*[:=#]?\s*(9\d\d)\b`)
	captureWord = regexp.MustCompile(`during CUDA graph capture|stream is capturing|cudaStreamCaptureStatus|CUDA graph capture`)
)

// codeHits finds the capture error codes in the text, by name, driver
// name, runtime string or number (the whole text a number, or "error
// 901", "CUDA error 901", "error code 901").
func codeHits(text string, tb Traceback) []codeHit {
	var hits []codeHit
	for bi, b := range tb.Blocks {
		t := b.text()
		for _, c := range Codes {
			for _, s := range []string{c.Name, c.Driver, c.String} {
				if strings.Contains(t, s) {
					hits = append(hits, codeHit{c, bi, s})
					break
				}
			}
		}
		for _, m := range wordsCode.FindAllStringSubmatch(t, -1) {
			n, _ := strconv.Atoi(m[1])
			if c, ok := CodeByNumber(n); ok && !hasCode(hits, n) {
				hits = append(hits, codeHit{c, bi, strings.TrimSpace(m[0])})
			}
		}
	}
	if m := bareCode.FindStringSubmatch(text); m != nil {
		n, _ := strconv.Atoi(m[1])
		if c, ok := CodeByNumber(n); ok && !hasCode(hits, n) {
			hits = append(hits, codeHit{c, 0, m[1]})
		}
	}
	return hits
}

func hasCode(hits []codeHit, n int) bool {
	for _, h := range hits {
		if h.Code.Number == n {
			return true
		}
	}
	return false
}

// inCapture says whether the text shows a graph capture going on: a
// capture error code, or PyTorch's words for capture.
func inCapture(tb Traceback, hits []codeHit) (string, bool) {
	if len(hits) > 0 {
		return "", true
	}
	for _, b := range tb.Blocks {
		if m := captureWord.FindString(b.text()); m != "" {
			return m, true
		}
	}
	return "", false
}

// A pattern is evidence a cause leaves in a traceback: a regular
// expression over the message, a frame's file, or a frame's code line,
// and the words that say what it means.
type pattern struct {
	where string // "message", "file", "code", "header"
	re    *regexp.Regexp
	says  string
}

var causePatterns = map[string][]pattern{
	"checkpoint_rng": {
		{"file", regexp.MustCompile(`(^|[/\\])torch[/\\]utils[/\\]checkpoint\.py$`), "a frame in torch/utils/checkpoint.py"},
		{"code", regexp.MustCompile(`\bcheckpoint(_sequential)?\(`), "a checkpoint(...) call"},
	},
	"rng_state_in_capture": {
		{"message", regexp.MustCompile(`Cannot call CUDAGeneratorImpl::\w+ during CUDA graph capture`), "PyTorch refuses a generator call during capture"},
		{"code", regexp.MustCompile(`\b(get_rng_state|set_rng_state|get_rng_state_all|set_rng_state_all|manual_seed|manual_seed_all|seed)\(`), "an RNG state call"},
	},
	"generator_unregistered": {
		{"message", regexp.MustCompile(`Attempt to increase offset for a CUDA generator not in capture mode`), "PyTorch's message for an unregistered generator"},
		{"message", regexp.MustCompile(`unexpected CUDA generator used during capture`), "PyTorch's message for a generator other than the default one"},
	},
	"ddp_capture": {
		{"file", regexp.MustCompile(`(^|[/\\])torch[/\\]nn[/\\]parallel[/\\]distributed\.py$`), "a frame in torch/nn/parallel/distributed.py"},
		{"message", regexp.MustCompile(`DistributedDataParallel|ProcessGroupNCCL|\bReducer\b|reducer\.cpp`), "DDP or NCCL named in the error"},
		{"code", regexp.MustCompile(`\bDistributedDataParallel\(|\bDDP\(`), "a DistributedDataParallel(...) call"},
	},
	"background_thread": {
		{"header", regexp.MustCompile(`^Exception in thread\b`), "the error was raised in another thread"},
		{"message", regexp.MustCompile(`(?i)pin memory thread|_pin_memory_loop`), "the DataLoader's pin-memory thread"},
		{"file", regexp.MustCompile(`(^|[/\\])torch[/\\]utils[/\\]data[/\\]_utils[/\\]pin_memory\.py$`), "a frame in the DataLoader's pin-memory thread"},
		{"code", regexp.MustCompile(`\.pin_memory\(`), "a .pin_memory() call"},
	},
	"host_sync": {
		{"code", regexp.MustCompile(`\.item\(\)`), ".item()"},
		{"code", regexp.MustCompile(`\.cpu\(\)|\.to\(\s*["']cpu["']`), ".cpu()"},
		{"code", regexp.MustCompile(`\.tolist\(\)`), ".tolist()"},
		{"code", regexp.MustCompile(`\.numpy\(\)`), ".numpy()"},
		{"code", regexp.MustCompile(`(^|[^.\w])print\(`), "print(...)"},
		{"code", regexp.MustCompile(`\.synchronize\(\)`), "a synchronize()"},
		{"code", regexp.MustCompile(`\bnonzero\(|\bmasked_select\(|\bunique\(`), "an op whose output size depends on the data"},
		{"file", regexp.MustCompile(`(^|[/\\])torch[/\\]_tensor_str\.py$`), "printing a tensor (torch/_tensor_str.py)"},
	},
}

// needsCapture lists causes whose patterns only count when the text also
// shows a capture (an .item() is no failure by itself).
var needsCapture = map[string]bool{
	"ddp_capture": true, "background_thread": true, "host_sync": true,
}

// matchClass finds the evidence of class c in the text.
func matchClass(c Class, s scan) (Match, bool) {
	if c.Role == Consequence {
		for _, h := range s.hits {
			if h.Code.Class == c.ID {
				return Match{Class: c, Evidence: []string{fmt.Sprintf("%q: %s", h.Seen, h.Code.label())}, block: h.Block}, true
			}
		}
		return Match{}, false
	}
	evidence, block := evidenceOver(s.tb, causePatterns[c.ID])
	if len(evidence) == 0 {
		return Match{}, false
	}
	switch {
	case c.ID == "checkpoint_rng":
		// Checkpointing counts only with the RNG state refused during
		// capture, whose evidence comes first and whose block it is.
		rng, ok := matchClass(Class{ID: "rng_state_in_capture", Role: Cause}, s)
		if !ok {
			return Match{}, false
		}
		return Match{Class: c, Evidence: append(rng.Evidence, evidence...), block: rng.block}, true
	case c.ID == "rng_state_in_capture" && !hasMessage(evidence) && !s.capturing:
		return Match{}, false
	case needsCapture[c.ID]:
		if !s.capturing {
			return Match{}, false
		}
		if s.captureWords != "" {
			evidence = append(evidence, fmt.Sprintf("capture under way: %q", s.captureWords))
		}
	}
	return Match{Class: c, Evidence: evidence, block: block}, true
}

func hasMessage(evidence []string) bool {
	for _, e := range evidence {
		if strings.HasPrefix(e, "message:") {
			return true
		}
	}
	return false
}

// evidenceOver returns the evidence pats find in every block of tb, and
// the index of the first block holding any.
func evidenceOver(tb Traceback, pats []pattern) ([]string, int) {
	var evidence []string
	block := -1
	for bi, b := range tb.Blocks {
		ev := evidenceIn(b, pats)
		if len(ev) > 0 && block < 0 {
			block = bi
		}
		evidence = append(evidence, ev...)
	}
	return evidence, block
}

// evidenceIn returns a line for each pattern that matches in b, once per
// pattern.
func evidenceIn(b Block, pats []pattern) []string {
	var out []string
	for _, p := range pats {
		switch p.where {
		case "message":
			if s := p.re.FindString(b.Message); s != "" {
				out = append(out, fmt.Sprintf("message: %q (%s)", s, p.says))
			}
		case "header":
			if p.re.MatchString(b.Header) {
				out = append(out, fmt.Sprintf("%q (%s)", b.Header, p.says))
			}
		case "file":
			for _, f := range b.Frames {
				if p.re.MatchString(f.File) {
					out = append(out, fmt.Sprintf("frame %s:%d in %s (%s)", f.File, f.Line, f.Function, p.says))
					break
				}
			}
		case "code":
			for i := len(b.Frames) - 1; i >= 0; i-- {
				f := b.Frames[i]
				if f.Code != "" && p.re.MatchString(f.Code) {
					out = append(out, fmt.Sprintf("%s:%d: %s (%s)", f.File, f.Line, f.Code, p.says))
					break
				}
			}
		}
	}
	return out
}

// dropSubsumed removes classes another match subsumes.
func dropSubsumed(found []Match) []Match {
	drop := map[string]bool{}
	for _, m := range found {
		for _, id := range m.Class.Subsumes {
			drop[id] = true
		}
	}
	var kept []Match
	for _, m := range found {
		if !drop[m.Class.ID] {
			kept = append(kept, m)
		}
	}
	return kept
}

// userFrame is the user frame of block bi, or else of the latest block
// that has one.
func userFrame(tb Traceback, bi int) *Frame {
	if bi >= 0 && bi < len(tb.Blocks) {
		if f, ok := tb.Blocks[bi].UserFrame(); ok {
			return &f
		}
	}
	for i := len(tb.Blocks) - 1; i >= 0; i-- {
		if f, ok := tb.Blocks[i].UserFrame(); ok {
			return &f
		}
	}
	return nil
}
