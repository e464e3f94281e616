package check

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/loaders"
)

// TestHeadsFromTheComparison checks every scenario twice: once with the
// samples' leading values kept by the comparison, once reading them all
// from the files. The comparisons are the same, and the comparison kept
// the heads of most planned pairs: with every file read first, and read a
// part at a time, where the plan is made before most pairs are read
// (parts of one pair: all but the first).
func TestHeadsFromTheComparison(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(fixture("scenarios", "*", "scenario.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios (%v)", err)
	}
	kept, planned := map[int]int{}, map[int]int{} // by part size
	for _, file := range files {
		dir := filepath.Dir(file)
		pathA, pathB := filepath.Join(dir, "eager"), filepath.Join(dir, "graph")
		read, err := Runs(pathA, pathB, Options{keepNoHeads: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Runs(pathA, pathB, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Causes, read.Causes) || !reflect.DeepEqual(got.Warnings, read.Warnings) {
			t.Errorf("%s: with the comparison's heads\n%+v\nreading the files\n%+v", dir, got.Causes, read.Causes)
		}
		for _, parts := range []int{0, 1, 1024} { // 0: every file read first
			c := compareLoaded(load(t, pathA), load(t, pathB), nil, Options{})
			if parts > 0 {
				a, errA := loaders.LoadDeferred(pathA, loaders.Options{})
				b, errB := loaders.LoadDeferred(pathB, loaders.Options{})
				if errA != nil || errB != nil {
					t.Fatal(errA, errB)
				}
				var err error
				if c, err = runSteps(a, b, nil, Options{partPairs: parts}); err != nil {
					continue // compared again with every file read first, as above
				}
			}
			for _, w := range diagnose.PlanSamples(c.result.Tensors) {
				planned[parts]++
				if len(c.kept[w.Index].a) >= w.N {
					kept[parts]++
				}
			}
		}
	}
	for parts, n := range planned {
		t.Logf("parts of %d pairs: heads kept for %d of %d planned pairs", parts, kept[parts], n)
		if n == 0 || kept[parts] < n*9/10 {
			t.Errorf("parts of %d pairs: heads kept for %d of %d planned pairs", parts, kept[parts], n)
		}
	}
}
