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
	var found []Match
	for _, c := range Classes {
		if m, ok := matchClass(c, text, tb, hits); ok {
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
	"checkpoint_rng": true, "ddp_capture": true, "background_thread": true, "host_sync": true,
}

// matchClass finds the evidence of class c in the text.
func matchClass(c Class, text string, tb Traceback, hits []codeHit) (Match, bool) {
	if c.Role == Consequence {
		for _, h := range hits {
			if h.Code.Class == c.ID {
				return Match{Class: c, Evidence: []string{fmt.Sprintf("%q: %s", h.Seen, h.Code.label())}, block: h.Block}, true
			}
		}
		return Match{}, false
	}
	if c.ID == "checkpoint_rng" {
		return matchCheckpoint(c, text, tb, hits)
	}
	m := Match{Class: c, block: -1}
	for bi, b := range tb.Blocks {
		for _, ev := range evidenceIn(b, causePatterns[c.ID]) {
			if m.block < 0 {
				m.block = bi
			}
			m.Evidence = append(m.Evidence, ev)
		}
	}
	if len(m.Evidence) == 0 {
		return Match{}, false
	}
	if c.ID == "rng_state_in_capture" && !hasMessage(m.Evidence) {
		if _, ok := inCapture(tb, hits); !ok {
			return Match{}, false
		}
	}
	if needsCapture[c.ID] {
		seen, ok := inCapture(tb, hits)
		if !ok {
			return Match{}, false
		}
		if seen != "" {
			m.Evidence = append(m.Evidence, fmt.Sprintf("capture under way: %q", seen))
		}
	}
	return m, true
}

// matchCheckpoint needs both: RNG state refused during capture, and
// checkpointing in the traceback.
func matchCheckpoint(c Class, text string, tb Traceback, hits []codeHit) (Match, bool) {
	rng, ok := matchClass(Class{ID: "rng_state_in_capture", Role: Cause}, text, tb, hits)
	if !ok {
		return Match{}, false
	}
	m := Match{Class: c, block: rng.block}
	for _, b := range tb.Blocks {
		m.Evidence = append(m.Evidence, evidenceIn(b, causePatterns[c.ID])...)
	}
	if len(m.Evidence) == 0 {
		return Match{}, false
	}
	m.Evidence = append(rng.Evidence, m.Evidence...)
	return m, true
}

func hasMessage(evidence []string) bool {
	for _, e := range evidence {
		if strings.HasPrefix(e, "message:") {
			return true
		}
	}
	return false
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
