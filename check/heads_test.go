package check

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/graphdiff/graphdiff/diagnose"
)

// TestHeadsFromTheComparison checks every scenario twice: once with the
// samples' leading values kept by the comparison, once reading them all
// from the files. The comparisons are the same, and the comparison kept
// the heads of most planned pairs.
func TestHeadsFromTheComparison(t *testing.T) {
	defer func(old bool) { keepHeads = old }(keepHeads)
	files, err := filepath.Glob(fixture("scenarios", "*", "scenario.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios (%v)", err)
	}
	kept, planned := 0, 0
	for _, file := range files {
		dir := filepath.Dir(file)
		pathA, pathB := filepath.Join(dir, "eager"), filepath.Join(dir, "graph")
		keepHeads = false
		read, err := Runs(pathA, pathB, Options{})
		if err != nil {
			t.Fatal(err)
		}
		keepHeads = true
		got, err := Runs(pathA, pathB, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Causes, read.Causes) || !reflect.DeepEqual(got.Warnings, read.Warnings) {
			t.Errorf("%s: with the comparison's heads\n%+v\nreading the files\n%+v", dir, got.Causes, read.Causes)
		}
		c := compareLoaded(load(t, pathA), load(t, pathB), nil, Options{})
		for _, w := range diagnose.PlanSamples(c.result.Tensors) {
			planned++
			if o, ok := c.kept[w.Pair]; ok && len(o.HeadA) >= w.N {
				kept++
			}
		}
	}
	t.Logf("heads kept for %d of %d planned pairs", kept, planned)
	if planned == 0 || kept < planned*9/10 {
		t.Errorf("heads kept for %d of %d planned pairs", kept, planned)
	}
}
