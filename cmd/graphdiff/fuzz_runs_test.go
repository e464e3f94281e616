package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzCompareRuns drives whole comparisons, as a user runs them, of two
// run directories generated from the fuzz input (generate): .npy files of
// every dtype graphdiff reads from .npy, both byte orders, C and Fortran
// order, empty and 0-d shapes, every kind of tensor, one to four steps,
// values with NaN, ±Inf, subnormals, ±0 and integers beyond 2^53. The
// second run is a byte-for-byte copy of the first, the same values
// written another way (byte order, storage order, writer), or the first
// perturbed: elements changed, tensors and steps dropped or added, dtypes
// and shapes changed.
//
// Each input runs `graphdiff compare --format json` of the first run
// against itself, and of the first against the second with every other
// renderer writing a report file, and checks what a user would see:
//
//   - no panic, and no hang (a comparison over fuzzRunLimit crashes the
//     test binary, which keeps the input);
//   - the exit status is 0, 1 or 2 and is the JSON verdict's (pass 0, fail
//     1, error 2); a pass lists only matching pairs, any other status
//     fails the verdict, an unreadable pair makes it an error;
//   - a run compared with itself, or with a copy of it (the same bytes, or
//     the same values stored another way), passes: every pair matches,
//     except that a file graphdiff cannot read (float8 '|V1' without
//     --float8, as documented) makes it exit 2;
//   - every pair listed is a tensor of one of the runs, listed once, and
//     every tensor of either run is listed: one only in the reference run
//     is missing, one only in the other extra, one unreadable on a side an
//     error pair, never dropped; one that no run could read is an input
//     error naming its file instead (check/classify.go lists no pair of
//     which no side was read);
//   - a pair whose shapes differ is a shape mismatch;
//   - integer and bool pairs are exact: any element whose integer value
//     differs fails the pair, equal values match — but a decoding step's
//     tokens (beside logits, bit 4 of the flags), which may differ where
//     the report lists a near tie of them at that step or before;
//   - NaN at different positions (numpy's isnan: a complex element is NaN
//     when either part is) fails the pair, and so does, in a pair of one
//     dtype, an infinity that the other side does not hold in the same
//     place with the same sign (complex: the same value part by part);
//   - a pair stored in one dtype with the same bits on both sides matches,
//     unless it is a parameter whose previous step differs (its update
//     then differs, which the update rule may fail: judge/steps.go).
func FuzzCompareRuns(f *testing.F) {
	for _, s := range compareRunsSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := generate(data)
		dir := t.TempDir()
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		if err := g.write(a, b); err != nil {
			t.Fatal(err)
		}
		// no hang: a panic outside the test's goroutine ends the binary,
		// and the fuzzer keeps the input as a crasher
		watchdog := time.AfterFunc(fuzzRunLimit, func() {
			panic(fmt.Sprintf("FuzzCompareRuns: the comparisons of an input of %d bytes ran over %v", len(data), fuzzRunLimit))
		})
		defer watchdog.Stop()

		code, rep, stderr := compareJSON(t, g.flags(), a, a)
		checkVerdict(t, "A vs A", code, rep, stderr)
		checkIdentical(t, "A vs A", g, g.a, code, rep)

		reports := filepath.Join(dir, "report.")
		var args []string
		for _, format := range otherFormats {
			args = append(args, "--report", format+"="+reports+format)
		}
		code, rep, stderr = compareJSON(t, append(g.flags(), args...), a, b)
		checkVerdict(t, "A vs B", code, rep, stderr)
		if rep != nil {
			checkReports(t, reports, rep.Verdict)
		}
		if g.variant != perturbB {
			checkIdentical(t, "A vs B ("+g.variant.String()+")", g, g.b, code, rep)
			return
		}
		checkPerturbed(t, g, rep)
	})
}

// otherFormats are the formats FuzzCompareRuns writes report files in,
// beside JSON on stdout.
var otherFormats = []string{"text", "junit", "markdown", "html"}

// checkReports checks that the report files were written, the text
// report with the verdict first.
func checkReports(t *testing.T, reports, verdict string) {
	t.Helper()
	for _, format := range otherFormats {
		b, err := os.ReadFile(reports + format)
		if err != nil || len(b) == 0 {
			t.Errorf("A vs B: the %s report was not written: %v", format, err)
			continue
		}
		if format == "text" && !strings.HasPrefix(string(b), strings.ToUpper(verdict)+"  ") {
			t.Errorf("A vs B: verdict %s, the text report says %.40q", verdict, b)
		}
	}
}

// fuzzRunLimit is how long the comparisons of one input may take: they
// take milliseconds; a minute leaves room for a loaded machine.
const fuzzRunLimit = time.Minute

// compareReport is what the JSON report says, in the words of its
// contract (DESIGN.md, "Output contract").
type compareReport struct {
	Verdict         string `json:"verdict"`
	NothingCompared string `json:"nothing_compared"`
	Tensors         []struct {
		Name    string   `json:"name"`
		Step    *int     `json:"step"`
		Kind    string   `json:"kind"`
		Status  string   `json:"status"`
		DType   string   `json:"dtype"`
		Shape   []int    `json:"shape"`
		Reasons []string `json:"reasons"`
		Error   string   `json:"error"`
	} `json:"tensors"`
	Errors []struct {
		Path    string `json:"path"`
		Message string `json:"message"`
	} `json:"errors"`
	Steps []struct {
		Step  *int `json:"step"`
		Flips []struct {
			Name    string `json:"name"`
			NearTie bool   `json:"near_tie"`
		} `json:"flips"`
	} `json:"steps"`
}

// nearTieBy reports whether the report lists a near tie of the tokens
// named name at step or before: a decoding whose sequences parted there
// passes tokens that differ from then on.
func (r *compareReport) nearTieBy(name string, step int) bool {
	for _, s := range r.Steps {
		if s.Step == nil || *s.Step > step {
			continue
		}
		for _, f := range s.Flips {
			if f.Name == name && f.NearTie {
				return true
			}
		}
	}
	return false
}

// compareJSON runs graphdiff compare --format json on a and b with the
// flags given, and returns the exit status, the report (nil when nothing
// was printed) and stderr.
func compareJSON(t *testing.T, flags []string, a, b string) (int, *compareReport, string) {
	t.Helper()
	args := append([]string{"compare", "--format", "json"}, flags...)
	code, stdout, stderr := run(append(args, a, b)...)
	if stdout == "" {
		return code, nil, stderr
	}
	rep := new(compareReport)
	if err := json.Unmarshal([]byte(stdout), rep); err != nil {
		t.Fatalf("%v: not a JSON report: %v\n%s", args, err, stdout)
	}
	return code, rep, stderr
}

// checkVerdict checks that the exit status is the verdict's and that the
// verdict is its pairs'.
func checkVerdict(t *testing.T, what string, code int, rep *compareReport, stderr string) {
	t.Helper()
	if code < 0 || code > 2 {
		t.Fatalf("%s: exit %d, want 0, 1 or 2\n%s", what, code, stderr)
	}
	if rep == nil {
		if code != exitError || stderr == "" {
			t.Fatalf("%s: no report, exit %d, stderr %q: want exit 2 and a reason", what, code, stderr)
		}
		return
	}
	want := map[string]int{"pass": exitPass, "fail": exitDiff, "error": exitError}
	if w, ok := want[rep.Verdict]; !ok || w != code {
		t.Fatalf("%s: verdict %q with exit %d\n%s", what, rep.Verdict, code, stderr)
	}
	errorPair := false
	for _, p := range rep.Tensors {
		switch {
		case rep.Verdict == "pass" && p.Status != "match":
			t.Errorf("%s: verdict pass with %s at step %s %s", what, p.Name, stepName(p.Step), p.Status)
		case p.Status == "error":
			errorPair = true
		case p.Status != "match" && rep.Verdict != "fail" && rep.Verdict != "error":
			t.Errorf("%s: verdict %s with %s at step %s %s", what, rep.Verdict, p.Name, stepName(p.Step), p.Status)
		}
	}
	if errorPair && rep.Verdict != "error" {
		t.Errorf("%s: verdict %s with an unreadable pair", what, rep.Verdict)
	}
	if rep.Verdict == "error" && !errorPair && len(rep.Errors) == 0 && rep.NothingCompared == "" {
		t.Errorf("%s: verdict error with no unreadable pair, no error and nothing said", what)
	}
}

func stepName(step *int) string {
	if step == nil {
		return "none"
	}
	return strconv.Itoa(*step)
}

// listed returns the report's pairs by step and name, failing on a pair
// listed twice.
func listed(t *testing.T, what string, rep *compareReport) map[tensorKey]int {
	t.Helper()
	out := map[tensorKey]int{}
	for i, p := range rep.Tensors {
		k := tensorKey{step: noStep, name: p.Name}
		if p.Step != nil {
			k.step = *p.Step
		}
		if _, dup := out[k]; dup {
			t.Errorf("%s: %s at step %d listed twice", what, k.name, k.step)
		}
		out[k] = i
	}
	return out
}

// checkIdentical checks a comparison of g.a against same, the same
// tensors (g.a itself, or g.b copied from it): every readable tensor
// listed as a match, and exit 0, or 2 where a file cannot be read.
func checkIdentical(t *testing.T, what string, g *genRuns, same []*genTensor, code int, rep *compareReport) {
	t.Helper()
	if rep == nil {
		t.Fatalf("%s: no report (exit %d)", what, code)
	}
	pairs := checkListed(t, what, g, rep, g.a, same)
	wantCode := exitPass
	for _, x := range same {
		if !g.readable(x) {
			wantCode = exitError
			continue
		}
		i, ok := pairs[x.key()]
		if !ok {
			continue // checkListed said so
		}
		p := rep.Tensors[i]
		if p.Kind != x.kind || p.DType != x.dt.name || !slices.Equal(p.Shape, x.shape) {
			t.Errorf("%s: %s at step %d is listed as a %s, %s %v; want a %s, %s %v", what, x.name, x.step,
				p.Kind, p.DType, p.Shape, x.kind, x.dt.name, x.shape)
		}
		if p.Status != "match" {
			t.Errorf("%s: %s at step %d (%s %v, %s): %s %q, want match", what, x.name, x.step, x.dt.name, x.shape, x.layout(),
				p.Status, p.Reasons)
		}
	}
	if code != wantCode {
		t.Errorf("%s: exit %d, want %d", what, code, wantCode)
	}
}

// checkListed checks that every tensor of the runs is in the report
// once, and returns the listed pairs by key: a tensor is listed as a
// pair, except one that no run holding it could read, which is listed as
// an input error naming its file (check/classify.go: such a pair is
// unlisted, its sides are discovery's errors). No pair is listed that
// neither run holds.
func checkListed(t *testing.T, what string, g *genRuns, rep *compareReport, runs ...[]*genTensor) map[tensorKey]int {
	t.Helper()
	pairs := listed(t, what, rep)
	readable := map[tensorKey]bool{}
	held := map[tensorKey]bool{}
	for _, run := range runs {
		for _, x := range run {
			held[x.key()] = true
			readable[x.key()] = readable[x.key()] || g.readable(x)
		}
	}
	for k := range pairs {
		if !held[k] {
			t.Errorf("%s: %s at step %d is listed but in neither run", what, k.name, k.step)
		}
	}
	for _, run := range runs {
		for _, x := range run {
			_, ok := pairs[x.key()]
			switch {
			case !ok && readable[x.key()]:
				t.Errorf("%s: %s at step %d (%s %v) is not listed", what, x.name, x.step, x.dt.name, x.shape)
			case !ok && !anyErrorNames(rep, x.file()):
				t.Errorf("%s: %s at step %d cannot be read, and neither a pair nor an error names it", what, x.name, x.step)
			}
		}
	}
	return pairs
}

// anyErrorNames reports whether an error of the report names file.
func anyErrorNames(rep *compareReport, file string) bool {
	for _, e := range rep.Errors {
		if strings.HasSuffix(e.Path, file) {
			return true
		}
	}
	return false
}

// checkPerturbed checks a comparison of g.a against g.b, its perturbed
// copy, by what each pair's two sides hold.
func checkPerturbed(t *testing.T, g *genRuns, rep *compareReport) {
	t.Helper()
	if rep == nil {
		return // exit 2 with a reason: checked by checkVerdict
	}
	const what = "A vs B"
	pairs := checkListed(t, what, g, rep, g.a, g.b)
	as, bs := byKey(g.a), byKey(g.b)
	for k, i := range pairs {
		checkPair(t, g, as[k], bs[k], rep.Tensors[i].Status, rep.Tensors[i].Reasons, rep.nearTieBy)
	}
}

// checkPair checks the status of the pair of a and b (either nil where
// its run lacks the tensor).
func checkPair(t *testing.T, g *genRuns, a, b *genTensor, status string, reasons []string, nearTieBy func(string, int) bool) {
	t.Helper()
	x := a
	if x == nil {
		x = b
	}
	fail := func(why, want string) {
		t.Errorf("A vs B: %s at step %d: %s %q, want %s: %s\n  A: %s\n  B: %s", x.name, x.step, status, reasons, want, why,
			a.describe(), b.describe())
	}
	switch {
	case a != nil && !g.readable(a), b != nil && !g.readable(b):
		if status != "error" {
			fail("a side cannot be read", "error")
		}
	case b == nil:
		if status != "missing" {
			fail("only in A", "missing")
		}
	case a == nil:
		if status != "extra" {
			fail("only in B", "extra")
		}
	case !slices.Equal(a.shape, b.shape):
		if status != "shape_mismatch" {
			fail("shapes differ", "shape_mismatch")
		}
	case a.dt.exact() && b.dt.exact():
		if same := slices.Equal(a.integers(), b.integers()); same && status != "match" {
			fail("integer values equal", "match")
		} else if !same && status == "match" && !nearTieBy(x.name, x.step) {
			fail("integer values differ, and no near tie of a decoding parted them", "a failing status")
		}
	case !slices.Equal(a.nanMask(), b.nanMask()):
		if status == "match" {
			fail("NaN at different positions", "a failing status")
		}
	case a.dt == b.dt && infinitiesDiffer(a, b):
		if status == "match" {
			fail("infinities that differ", "a failing status")
		}
	case a.dt == b.dt && bytes.Equal(a.data, b.data) && g.sameHistory(a, b):
		if status != "match" {
			fail("the same bits in the same dtype", "match")
		}
	}
}
