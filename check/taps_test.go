package check

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestTapsCorpusModules compares every run of testdata/taps (graphed runs
// made on a GPU by testdata/gen/taps_gpu.py with module taps, each bug
// placed in a known module; labels observed against the same graphed run
// without the bug) and checks where in the model graphdiff says the runs
// part: exactly the labelled module on every bug, nothing on every correct
// run, whose verdict is pass.
func TestTapsCorpusModules(t *testing.T) {
	labels, err := filepath.Glob(filepath.Join("..", "testdata", "taps", "*", "label.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) < 12 {
		t.Fatalf("%d labelled tapped runs in testdata/taps, want at least 12", len(labels))
	}
	right, bugs := 0, 0
	for _, path := range labels {
		dir := filepath.Dir(path)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var lab struct {
				Verdict string  `json:"verdict"`
				Module  *string `json:"module"`
				Step    *int    `json:"first_divergent_step"`
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &lab); err != nil {
				t.Fatal(err)
			}
			c, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := c.Result
			if len(r.Taps) == 0 {
				t.Fatal("no taps read from the manifests")
			}
			if lab.Module == nil {
				if string(r.Verdict) != "pass" || r.FirstModule != nil {
					t.Errorf("correct run: verdict %s, first module %+v", r.Verdict, r.FirstModule)
				}
				return
			}
			bugs++
			if r.FirstModule == nil {
				t.Fatalf("bug placed in %s: no first module (all agree: %+v)", *lab.Module, r.ModulesAgree)
			}
			if got := r.FirstModule.Module.Name; got != *lab.Module {
				t.Errorf("first module %s, want %s", got, *lab.Module)
				return
			}
			right++
		})
	}
	t.Logf("module right on %d of %d bugs", right, bugs)
}
