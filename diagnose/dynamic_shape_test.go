package diagnose_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/diagnose"
)

// TestOneStepBreak diagnoses two runs that agree and then break at one
// step, neither with inputs or outputs dumped: an epoch's last batch of 6
// rows copied into the static batch of 32 breaks one step, the next one's
// gradients differing by 0.036 of the break's (a batch of another size); a
// Python if decided at capture keeps the loss's difference from its
// break on (a branch).
func TestOneStepBreak(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dir, first, evidence string
	}{
		{"userloops/resnet_bn/resnet_bn_partial_batch", diagnose.DynamicShape,
			"at step 1207 the gradients differ by 0.0364 of that: the graph computed another function at step 1206 alone"},
		{"corpus/mlp/mlp_captured_branch", diagnose.CapturedBranch, "step 3 breaks"},
	} {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			t.Parallel()
			_, rep := diagnoseRun(t, c.dir)
			if len(rep.Causes) == 0 || rep.Causes[0].ID != c.first {
				t.Fatalf("causes %+v, want %s first", rep.Causes, c.first)
			}
			if ev := strings.Join(rep.Causes[0].Evidence, "\n"); !strings.Contains(ev, c.evidence) {
				t.Errorf("evidence does not say %q:\n%s", c.evidence, ev)
			}
		})
	}
}

// TestOneStepMargins checks oneStepRatio against every labelled run of a
// branch decided at capture and every labelled partial batch: no branch
// is taken for one step's batch of another size (dynamic_shape named by
// the one-step evidence), and every partial batch is (or, where its
// outputs were dumped whole, by the shapes that differ).
func TestOneStepMargins(t *testing.T) {
	t.Parallel()
	labels, err := filepath.Glob(filepath.Join("..", "testdata", "*", "*", "label.json"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join("..", "testdata", "*", "*", "*", "label.json"))
	branches, partial := 0, 0
	for _, file := range append(labels, more...) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var lab struct {
			Kind   string   `json:"kind"`
			Causes []string `json:"causes"`
			Note   string   `json:"note"`
		}
		if err := json.Unmarshal(data, &lab); err != nil {
			t.Fatal(err)
		}
		isPartial := strings.Contains(lab.Note, "last batch of 6")
		if lab.Kind != "compare" || !slices.Contains(lab.Causes, "captured_branch") && !isPartial {
			continue
		}
		if isPartial && strings.Contains(lab.Note, "dumps every 4 steps") {
			continue // the partial batch's step is not dumped: TestSparseDumpsLocateNoBranch
		}
		dir := filepath.Dir(file)
		_, rep := diagnoseDirs(t, filepath.Join(dir, "eager"), filepath.Join(dir, "graph"))
		oneStep := len(rep.Causes) > 0 && rep.Causes[0].ID == diagnose.DynamicShape &&
			strings.Contains(strings.Join(rep.Causes[0].Evidence, "\n"), "alone, as a batch of another size")
		// a run that dumped its outputs whole shows the batch's size
		// itself: that is dynamic_shape by its shape, no margin involved
		byShape := len(rep.Causes) > 0 && rep.Causes[0].ID == diagnose.DynamicShape &&
			strings.Contains(strings.Join(rep.Causes[0].Evidence, "\n"), "differ in shape")
		switch {
		case isPartial:
			partial++
			if !oneStep && !byShape {
				t.Errorf("%s: a partial batch not named a one-step break: %+v", dir, rep.Causes)
			}
		default:
			branches++
			if oneStep {
				t.Errorf("%s: a branch taken for one step's batch of another size: %+v", dir, rep.Causes[0])
			}
		}
	}
	if branches < 8 || partial < 3 {
		t.Fatalf("%d branch runs and %d partial batches labelled, want at least 8 and 3", branches, partial)
	}
}
