package failures

import (
	"regexp"
	"strconv"
	"strings"
)

// Frame is one frame of a Python traceback: `File "F", line N, in FUNC`
// and, when the traceback shows it, the code on that line (stripped).
type Frame struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Function string `json:"function"`
	Code     string `json:"code,omitempty"`
}

// Block is one exception of a traceback: the line just before
// "Traceback (most recent call last):" (as "Exception in thread ...:"),
// its frames, outermost first, and the lines after the frames (the
// exception's type and message, and whatever followed until the next
// block).
type Block struct {
	Header  string
	Frames  []Frame
	Message string
}

// Traceback is a pasted text read as Python tracebacks: one Block per
// "Traceback (most recent call last):" (chained exceptions give several,
// the first raised first), or, for a text without one, a single Block
// holding the whole text as its Message.
type Traceback struct {
	Blocks []Block
}

var (
	frameLine = regexp.MustCompile(`^\s*File "([^"]+)", line (\d+), in (.+?)\s*$`)
	caretLine = regexp.MustCompile(`^\s*[\^~]+\s*$`)
)

const tracebackHead = "Traceback (most recent call last):"

// rankPrefix is what PyTorch's distributed runs put before every line of
// a process's traceback: "[rank0]: " (torch.distributed's exception hook)
// or "[default0]:" (torchrun's per-process log prefix, with the line
// right after it), or both, torchrun's first.
var rankPrefix = regexp.MustCompile(`^(?:\[rank\d+\]: ?|\[default\d+\]:)+`)

// Parse reads text as Python tracebacks. It never fails: lines it does not
// recognise are kept in the Message of the block they follow. A rank
// prefix before a line ([rank0]: , [default0]:) is read past.
func Parse(text string) Traceback {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = rankPrefix.ReplaceAllString(l, "")
	}
	var tb Traceback
	var cur *Block
	var msg []string
	flush := func() {
		if cur != nil {
			cur.Message = strings.TrimSpace(strings.Join(msg, "\n"))
			tb.Blocks = append(tb.Blocks, *cur)
		}
		msg = nil
	}
	inFrames := false
	for i, l := range lines {
		var frame []string
		if inFrames {
			frame = frameLine.FindStringSubmatch(l)
		}
		switch {
		case strings.TrimSpace(l) == tracebackHead:
			header := ""
			if i > 0 {
				header = strings.TrimSpace(lines[i-1])
			}
			if cur == nil && len(msg) > 0 { // text before the first traceback
				cur = &Block{}
			}
			flush()
			cur = &Block{Header: header}
			inFrames = true
		case cur == nil:
			msg = append(msg, l)
		case frame != nil:
			n, _ := strconv.Atoi(frame[2])
			cur.Frames = append(cur.Frames, Frame{File: frame[1], Line: n, Function: frame[3]})
		case inFrames && isFrameDetail(l) && len(cur.Frames) > 0:
			f := &cur.Frames[len(cur.Frames)-1]
			if f.Code == "" && !caretLine.MatchString(l) {
				f.Code = strings.TrimSpace(l)
			}
		default:
			inFrames = false
			msg = append(msg, l)
		}
	}
	if cur == nil {
		cur = &Block{}
	}
	flush()
	return tb
}

// isFrameDetail says whether l belongs to the frame above it: an indented
// line (the code, or the carets under it) that is not a frame itself.
func isFrameDetail(l string) bool {
	return strings.HasPrefix(l, "    ") && strings.TrimSpace(l) != ""
}

var (
	torchPath  = regexp.MustCompile(`(^|[/\\])torch[/\\]`)
	stdlibPath = regexp.MustCompile(`(^|[/\\])[Ll]ib[/\\]python3(\.\d+)?[/\\]|[/\\]lib[/\\]python\d+\.zip|^<frozen `)
)

// IsLibrary says whether a frame's file is inside PyTorch (a torch/
// directory), an installed package (site-packages, dist-packages) or the
// Python standard library (lib/python3.X/, <frozen ...>), and so not the
// user's own code.
func IsLibrary(file string) bool {
	switch {
	case strings.Contains(file, "site-packages"), strings.Contains(file, "dist-packages"):
		return true
	case torchPath.MatchString(file), stdlibPath.MatchString(file):
		return true
	}
	return false
}

// UserFrame returns the last frame of b that is the user's own code
// (IsLibrary false).
func (b Block) UserFrame() (Frame, bool) {
	for i := len(b.Frames) - 1; i >= 0; i-- {
		if !IsLibrary(b.Frames[i].File) {
			return b.Frames[i], true
		}
	}
	return Frame{}, false
}

// text is everything of b a pattern may match: header, frames' files and
// code, message.
func (b Block) text() string {
	var s strings.Builder
	s.WriteString(b.Header)
	s.WriteByte('\n')
	for _, f := range b.Frames {
		s.WriteString(f.File + " " + f.Function + "\n" + f.Code + "\n")
	}
	s.WriteString(b.Message)
	return s.String()
}
