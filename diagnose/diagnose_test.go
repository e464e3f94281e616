package diagnose

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
)

type scenario struct {
	Name string `json:"name"`
	Bug  string `json:"bug"`
}

func load(t *testing.T, path string) *loaders.Run {
	t.Helper()
	r, err := loaders.Load(path, loaders.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func diagnoseDirs(t *testing.T, a, b string) (*compare.Result, Report) {
	t.Helper()
	r := mustRuns(t, load(t, a), load(t, b), compare.Options{})
	return r, Diagnose(r)
}

// TestScenarios diagnoses every real eager-vs-graph pair in
// testdata/scenarios: each bug's top cause is its own, with confidence of
// at least 0.5; a correct run gets no cause but precision_noise and no
// warning. Run with -v for the accuracy table.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "scenarios", "*", "scenario.json"))
	if err != nil || len(files) < 29 {
		t.Fatalf("%d scenarios (%v)", len(files), err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var sc scenario
		if err := json.Unmarshal(data, &sc); err != nil {
			t.Fatal(err)
		}
		t.Run(sc.Name, func(t *testing.T) {
			dir := filepath.Dir(file)
			r, rep := diagnoseDirs(t, filepath.Join(dir, "eager"), filepath.Join(dir, "graph"))
			top, conf := "-", 0.0
			if len(rep.Causes) > 0 {
				top, conf = rep.Causes[0].ID, rep.Causes[0].Confidence
			}
			t.Logf("| %s | %s | %s | %s | %.2f |", sc.Name, sc.Bug, r.Verdict, top, conf)
			if r.Verdict == compare.Pass {
				for _, c := range rep.Causes {
					if c.ID != PrecisionNoise {
						t.Errorf("passing run has cause %s", c.ID)
					}
				}
				if len(rep.Warnings) > 0 && sc.Bug == "none" {
					t.Errorf("correct run has warnings: %+v", rep.Warnings)
				}
				return
			}
			if sc.Bug == "none" {
				t.Fatalf("correct run failed")
			}
			if top != sc.Bug || conf < 0.5 {
				t.Errorf("top cause %s (%.2f), want %s; all: %+v", top, conf, sc.Bug, rep.Causes)
			}
			c := rep.Causes[0]
			if len(c.Evidence) == 0 || c.Fix == "" {
				t.Errorf("cause without evidence or fix: %+v", c)
			}
		})
	}
}

// TestWarningInsideTolerance uses the first five steps of lr_decay_tiny,
// where the graph's frozen learning rate makes every update 1.0001–1.0004×
// the eager one but all tensors stay inside the thresholds: the verdict
// passes and a captured_scalar warning names the factor.
func TestWarningInsideTolerance(t *testing.T) {
	src := filepath.Join("..", "testdata", "scenarios", "lr_decay_tiny")
	dirs := [2]string{}
	for i, run := range []string{"eager", "graph"} {
		dirs[i] = t.TempDir()
		for step := 0; step <= 4; step++ {
			name := "step_00000" + string(rune('0'+step))
			copyDir(t, filepath.Join(src, run, name), filepath.Join(dirs[i], name))
		}
	}
	r, rep := diagnoseDirs(t, dirs[0], dirs[1])
	if r.Verdict != compare.Pass {
		t.Fatalf("verdict %s, first divergence %+v", r.Verdict, r.FirstDivergence)
	}
	if len(rep.Warnings) != 1 || rep.Warnings[0].ID != CapturedScalar {
		t.Fatalf("warnings %+v", rep.Warnings)
	}
	if ev := strings.Join(rep.Warnings[0].Evidence, "\n"); !strings.Contains(ev, "× 1.0001") {
		t.Errorf("evidence does not give the factor:\n%s", ev)
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// TestMissingDumpsAreNamed checks that a diagnosis made from losses alone
// says which dumps would have made it surer.
func TestMissingDumpsAreNamed(t *testing.T) {
	dir := filepath.Join("..", "testdata", "scenarios", "captured_loss_weight")
	_, rep := diagnoseDirs(t, filepath.Join(dir, "eager"), filepath.Join(dir, "graph"))
	if len(rep.Causes) == 0 {
		t.Fatal("no cause")
	}
	if ev := strings.Join(rep.Causes[0].Evidence, "\n"); !strings.Contains(ev, "not dumped, and would make this surer: gradients, parameters") {
		t.Errorf("evidence:\n%s", ev)
	}
}

func TestExplain(t *testing.T) {
	ids := append([]string{PrecisionNoise}, causeIDs...)
	if len(Causes) != len(ids) {
		t.Errorf("%d explanations for %d IDs", len(Causes), len(ids))
	}
	for _, id := range ids {
		e, ok := Explain(id)
		if !ok || e.Title == "" || e.What == "" || e.Signature == "" || e.Confirm == "" || e.Fix == "" {
			t.Errorf("%s: incomplete explanation %+v", id, e)
		}
	}
	if _, ok := Explain("cosmic_rays"); ok {
		t.Error("unknown ID explained")
	}
}

// mustRuns compares two runs with valid options.
func mustRuns(t testing.TB, a, b *loaders.Run, opts compare.Options) *compare.Result {
	t.Helper()
	r, err := compare.Runs(a, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHeadsFromTheComparison diagnoses every scenario twice: once with the
// samples' heads kept by the comparison (PlanHeads), once reading them from
// the files. The reports are the same, the heads were kept for most pairs,
// and diagnosis drops them.
func TestHeadsFromTheComparison(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "scenarios", "*", "scenario.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios (%v)", err)
	}
	kept, planned := 0, 0
	for _, file := range files {
		dir := filepath.Dir(file)
		a, b := load(t, filepath.Join(dir, "eager")), load(t, filepath.Join(dir, "graph"))
		read := Diagnose(mustRuns(t, a, b, compare.Options{}))
		r := mustRuns(t, a, b, compare.Options{PlanHeads: PlanHeads})
		for _, p := range r.Tensors {
			if p.HeadWant > 0 {
				planned++
				if len(p.HeadA) == p.HeadWant || int64(len(p.HeadA)) == p.A.Tensor.Len() {
					kept++
				}
			}
		}
		if got := Diagnose(r); !reflect.DeepEqual(got, read) {
			t.Errorf("%s: with the comparison's heads\n%+v\nreading the files\n%+v", dir, got, read)
		}
		for _, p := range r.Tensors {
			if p.HeadA != nil || p.HeadB != nil {
				t.Fatalf("%s: %s %d: heads kept after diagnosis", dir, p.Name, p.Step)
			}
		}
	}
	t.Logf("heads kept for %d of %d planned pairs", kept, planned)
	if planned == 0 || kept < planned*9/10 {
		t.Errorf("heads kept for %d of %d planned pairs", kept, planned)
	}
}
