package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEdgeRuns compares the runs of testdata/edge (testdata/gen/
// edge_fixtures.py), whose answers are known by construction, as a user
// would, and checks the verdict, the exit status, and what decided it:
// float64 parameters whose updates float32 cannot resolve are measured in
// float64 (a doubled learning rate fails by the updates, a correct run
// passes), 64-bit integers are compared exactly (2^62 + 1 is not 2^62,
// though float64 holds both as one value), whatever their storage orders
// and integer dtypes (an int64 against a uint64), and empty and 0-d tensors
// compare like any other, in every format and in shards.
func TestEdgeRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		run     string
		code    int
		verdict string
		// failing lists "step name" of pairs that must fail, each with a
		// reason holding reason.
		failing []string
		reason  string
	}{
		{run: "f64_ok", code: 0, verdict: "pass"},
		{run: "f64_lr", code: 1, verdict: "fail", failing: []string{"1 params/fc.weight", "1 params/fc.bias", "2 params/fc.weight"},
			reason: "its update is 2× the reference run's"},
		{run: "empty", code: 0, verdict: "pass"},
		{run: "ints_ok", code: 0, verdict: "pass"},
		{run: "ints_off", code: 1, verdict: "fail", failing: []string{"1 outputs/tokens", "1 outputs/hashes"},
			reason: "beyond rtol 0, atol 0"},
		{run: "ints_orders_ok", code: 0, verdict: "pass"},
		{run: "ints_orders_off", code: 1, verdict: "fail", failing: []string{"1 outputs/tokens", "1 outputs/hashes"},
			reason: "beyond rtol 0, atol 0"},
		{run: "ints_mixed_ok", code: 0, verdict: "pass"},
		{run: "ints_mixed_off", code: 1, verdict: "fail", failing: []string{"1 outputs/tokens", "1 outputs/hashes"},
			reason: "beyond rtol 0, atol 0"},
	} {
		t.Run(tc.run, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("..", "..", "testdata", "edge", tc.run)
			a, b := filepath.Join(dir, "eager"), filepath.Join(dir, "graph")
			code, stdout, stderr := run("compare", a, b, "--format", "json")
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			var rep struct {
				Verdict string `json:"verdict"`
				Tensors []struct {
					Name    string   `json:"name"`
					Step    *int     `json:"step"`
					Status  string   `json:"status"`
					Reasons []string `json:"reasons"`
					Shape   []int    `json:"shape"`
				} `json:"tensors"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s", rep.Verdict, tc.verdict)
			}
			status := map[string]string{}
			reasons := map[string]string{}
			for _, p := range rep.Tensors {
				key := p.Name
				if p.Step != nil {
					key = strconv.Itoa(*p.Step) + " " + p.Name
				}
				status[key], reasons[key] = p.Status, strings.Join(p.Reasons, "; ")
			}
			for _, key := range tc.failing {
				if status[key] != "mismatch" || !strings.Contains(reasons[key], tc.reason) {
					t.Errorf("%s: %s (%s), want a mismatch saying %q", key, status[key], reasons[key], tc.reason)
				}
			}
			if tc.run == "empty" && status["0 params/empty"] != "match" {
				t.Errorf("the empty parameter: %q, want match", status["0 params/empty"])
			}
			for _, format := range []string{"text", "junit", "markdown", "html"} {
				if c, _, e := run("compare", a, b, "--format", format); c != tc.code {
					t.Errorf("--format %s: exit %d, want %d\n%s", format, c, tc.code, e)
				}
			}
			if c, _, e := run("compare", a, b, "--shard", "2/2", "--format", "json"); c > 1 {
				t.Errorf("--shard 2/2: exit %d\n%s", c, e)
			}
			// integers are exact: a baseline as far from the reference as
			// the compared run (the compared run itself) excuses nothing
			if c, _, e := run("compare", "--baseline", b, a, b); strings.HasPrefix(tc.run, "ints") && c != tc.code {
				t.Errorf("--baseline %s: exit %d, want %d\n%s", b, c, tc.code, e)
			}
		})
	}
}

// TestBaselineIsCheckedBeforeTrusted compares the runs of
// testdata/edge/baseline with each baseline: a second sample of the same
// noise lets a noisy but correct run pass and still fails a stale output;
// a baseline of 3e38 everywhere, one that pairs with nothing and an empty
// directory widen no limit, and the report says why each cannot serve.
func TestBaselineIsCheckedBeforeTrusted(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "testdata", "edge", "baseline")
	empty := t.TempDir()
	for _, tc := range []struct {
		name, baseline, graph string
		code                  int
		// says is what the text report's baseline line holds ("" for no
		// line); farther the steps the JSON lists as not served.
		says    string
		paired  int
		farther []int
	}{
		{"alone", "", "graph_ok", exitDiff, "", 0, nil},
		{"noise", "baseline", "graph_ok", exitPass, "", 3, []int{}},
		{"noise_stale", "baseline", "graph_stale", exitDiff, "", 3, []int{}},
		{"garbage", "garbage", "graph_ok", exitDiff, "cannot serve at steps 0, 1, 2: farther from the reference", 3, []int{0, 1, 2}},
		{"garbage_stale", "garbage", "graph_stale", exitDiff, "cannot serve at steps 0, 1, 2", 3, []int{0, 1, 2}},
		{"other", "other", "graph_ok", exitDiff, "holds none of the 3 pairs compared", 0, []int{}},
		{"empty", "", "graph_ok", exitDiff, "holds none of the 3 pairs compared", 0, []int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var args []string
			switch {
			case tc.name == "empty":
				args = []string{"--baseline", empty}
			case tc.baseline != "":
				args = []string{"--baseline", filepath.Join(dir, tc.baseline)}
			}
			args = append(args, filepath.Join(dir, "eager"), filepath.Join(dir, tc.graph))
			code, stdout, stderr := run(append([]string{"compare"}, args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, stdout, stderr)
			}
			line := ""
			for _, l := range strings.Split(stdout, "\n") {
				if strings.HasPrefix(l, "baseline ") {
					line = l
				}
			}
			if tc.says == "" && line != "" || !strings.Contains(line, tc.says) {
				t.Errorf("baseline line %q, want one saying %q", line, tc.says)
			}
			_, js, _ := run(append([]string{"compare", "--format", "json"}, args...)...)
			var rep struct {
				Baseline *struct {
					Paired       int   `json:"paired"`
					Compared     int   `json:"compared"`
					FartherSteps []int `json:"farther_steps"`
				} `json:"baseline"`
			}
			if err := json.Unmarshal([]byte(js), &rep); err != nil {
				t.Fatal(err)
			}
			switch {
			case len(args) == 2 && rep.Baseline != nil:
				t.Errorf("no baseline given, the report describes one: %+v", rep.Baseline)
			case len(args) == 4 && (rep.Baseline == nil || rep.Baseline.Paired != tc.paired || rep.Baseline.Compared != 3 ||
				!slices.Equal(rep.Baseline.FartherSteps, tc.farther)):
				t.Errorf("baseline %+v, want %d of 3 paired, farther at %v", rep.Baseline, tc.paired, tc.farther)
			}
		})
	}
}

// TestPrecisionFromValues: a pure-bfloat16 run saved with .float() (float32
// files whose values all have zero low 16 bits; testdata/userloops) is
// judged as a bfloat16 model and the report says so in text, Markdown and
// JSON; a float32 run is not.
func TestPrecisionFromValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dir  string
		from bool
	}{
		{"../../testdata/userloops/unet_gn/unet_gn_resume_bf16_ema_ok", true},
		{"../../testdata/userloops/moe/moe_recipe_top2_fp32_ok", false},
	} {
		a, b := filepath.Join(tc.dir, "eager"), filepath.Join(tc.dir, "graph")
		_, js, stderr := run("compare", "--format", "json", a, b)
		var rep struct {
			FromValues bool `json:"model_dtype_from_values"`
		}
		if err := json.Unmarshal([]byte(js), &rep); err != nil {
			t.Fatalf("%s: %v\n%s", tc.dir, err, stderr)
		}
		_, text, _ := run("compare", a, b)
		_, md, _ := run("compare", "--format", "markdown", a, b)
		says := strings.Contains(text, "float32 files holding bfloat16 values") && strings.Contains(md, "**Precision:**")
		if rep.FromValues != tc.from || says != tc.from {
			t.Errorf("%s: model_dtype_from_values %v, text and Markdown say so %v; want %v", tc.dir, rep.FromValues, says, tc.from)
		}
	}
}
