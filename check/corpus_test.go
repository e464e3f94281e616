package check

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// label is the part of a scenario's label.json (../shared/score/README.md)
// the corpus test reads.
type label struct {
	Family       string   `json:"family"`
	Verdict      string   `json:"verdict"`
	Causes       []string `json:"causes"`
	Step         *int     `json:"first_divergent_step"`
	ComputeDType string   `json:"compute_dtype"`
	Hard         bool     `json:"hard"`
}

// TestCorpus checks every labelled scenario of testdata/corpus and
// testdata/scenarios (real eager-vs-CUDA-graph runs, in .npy,
// safetensors and torch.save dumps): each loads and compares without an
// unreadable input; every correct run passes with no cause but
// precision_noise and no warning but noise_drift (so --strict passes it
// too); every bug but the hard ones fails, at the step its label
// observed, with a top cause its label accepts, and no wrong cause is
// named with confidence 0.75 or more. Run with -v for the tally per
// family.
func TestCorpus(t *testing.T) {
	t.Parallel()
	var files []string
	for _, dir := range []string{"corpus", "scenarios"} {
		err := filepath.WalkDir(fixture(dir), func(path string, d os.DirEntry, err error) error {
			if err == nil && d.Name() == "label.json" {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 100 {
		t.Fatalf("%d labelled scenarios, want the corpus's 82 and the 29 scenarios", len(files))
	}
	type tally struct{ correct, passed, bugs, exact, cause int }
	byFamily := map[string]*tally{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var l label
		if err := json.Unmarshal(data, &l); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		dir := filepath.Dir(f)
		var opts Options
		if l.ComputeDType != "" {
			if opts.Resolver.Overrides.ComputeDType, err = loaders.ParseDType(l.ComputeDType); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
		c, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), opts)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if c.Verdict == judge.Error {
			t.Errorf("%s: unreadable inputs: %v", dir, c.AllErrors())
			continue
		}
		tl := byFamily[l.Family]
		if tl == nil {
			tl = &tally{}
			byFamily[l.Family] = tl
		}
		switch {
		case l.Verdict == "pass":
			tl.correct++
			if c.Verdict == judge.Pass {
				tl.passed++
			} else {
				t.Errorf("%s: a correct run fails at step %d, %s: %v", dir, c.FirstDivergence.Step, c.FirstDivergence.Name, c.FirstDivergence.Reasons)
			}
			for _, cs := range c.Causes {
				if cs.ID != diagnose.PrecisionNoise {
					t.Errorf("%s: a correct run gets the cause %s (%.2f): %v", dir, cs.ID, cs.Confidence, cs.Evidence)
				}
			}
			for _, w := range c.Warnings {
				if w.ID != diagnose.NoiseDrift {
					t.Errorf("%s: a correct run gets the warning %s (%.2f): %v", dir, w.ID, w.Confidence, w.Evidence)
				}
			}
		case !l.Hard:
			tl.bugs++
			if c.Verdict != judge.Fail {
				t.Errorf("%s: a %v bug passed", dir, l.Causes)
			}
			switch {
			case c.FirstDivergence == nil:
				t.Errorf("%s: no first divergence", dir)
			case c.FirstDivergence.Step != *l.Step:
				t.Errorf("%s: first divergence at step %d (%s), want %d", dir, c.FirstDivergence.Step, c.FirstDivergence.Name, *l.Step)
			default:
				tl.exact++
			}
			switch {
			case len(c.Causes) > 0 && slices.Contains(l.Causes, c.Causes[0].ID):
				tl.cause++
			case len(c.Causes) == 0:
				t.Errorf("%s: no cause, want %v", dir, l.Causes)
			default:
				top := c.Causes[0]
				t.Errorf("%s: top cause %s (%.2f), want %v: %v", dir, top.ID, top.Confidence, l.Causes, top.Evidence)
			}
			for _, cs := range c.Causes {
				if cs.Confidence >= 0.75 && !slices.Contains(l.Causes, cs.ID) {
					t.Errorf("%s: wrong cause %s named with confidence %.2f", dir, cs.ID, cs.Confidence)
				}
			}
		}
	}
	var families []string
	for f := range byFamily {
		families = append(families, f)
	}
	sort.Strings(families)
	for _, f := range families {
		tl := byFamily[f]
		t.Logf("%-12s correct runs passed %d/%d, bugs failed at their step %d/%d, with their cause on top %d/%d", f, tl.passed, tl.correct, tl.exact, tl.bugs, tl.cause, tl.bugs)
	}
}

// TestModelPrecision checks that a model kept in bfloat16 has its float32
// loss compared at bfloat16 (the precision the model computed it in),
// while a float32 model's loss stays at float32, and an explicit compute
// dtype still wins.
func TestModelPrecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scenario string
		compute  loaders.DType
		want     loaders.DType
	}{
		{"llama/llama_bf16_adamw_ok", loaders.Invalid, loaders.BFloat16},
		{"llama/llama_fp32_adam_ok", loaders.Invalid, loaders.Float32},
		{"llama/llama_bf16_adamw_ok", loaders.Float16, loaders.Float16}, // what the user says wins
	} {
		dir := fixture("corpus", tc.scenario)
		var opts Options
		opts.Resolver.Overrides.ComputeDType = tc.compute
		c := compareLoaded(load(t, filepath.Join(dir, "eager")), load(t, filepath.Join(dir, "graph")), nil, opts)
		losses := 0
		for _, p := range c.result.Tensors {
			if p.Kind != loaders.KindLoss || p.A == nil {
				continue
			}
			losses++
			if p.A.DType != loaders.Float32 || p.Settings.DType != tc.want {
				t.Errorf("%s (compute %s): %s step %d stored %s compared at %s, want %s",
					tc.scenario, tc.compute, p.Name, p.Step, p.A.DType, p.Settings.DType, tc.want)
			}
		}
		if losses == 0 {
			t.Errorf("%s: no loss", tc.scenario)
		}
	}
}

// TestDriftNamesTheKeyBias: in a correct bf16 AdamW run of the attention
// family, the parameter that drifts is the qkv bias, and the elements the
// drift names are mostly its key third (softmax ignores a constant shift
// of the keys, so their gradient is rounding noise), the largest always.
func TestDriftNamesTheKeyBias(t *testing.T) {
	t.Parallel()
	dir := fixture("corpus", "gpt2", "gpt2_bf16_adamw_ok")
	c, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != judge.Pass {
		t.Fatalf("verdict %s", c.Verdict)
	}
	named, key := 0, 0
	for _, s := range c.Steps {
		for _, d := range s.Drift {
			if d.Name != "params/body.qkv.bias" {
				t.Errorf("step %d: %s drifts", s.Step, d.Name)
			}
			third := int(d.Count / 3)
			for k, e := range d.Elements {
				named++
				if i := e.Index[0]; i >= third && i < 2*third {
					key++
				} else if k == 0 {
					t.Errorf("step %d: the largest difference is at element %d of %d, outside the key bias [%d, %d)", s.Step, i, d.Count, third, 2*third)
				}
			}
		}
	}
	if named == 0 || key < named*4/5 {
		t.Errorf("%d of the %d elements named are in the key bias", key, named)
	}
}
