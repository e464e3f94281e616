package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// maxAllocPerBadInput bounds what reading one hostile input may allocate:
// files that declare gigabytes (zip bombs, huge shapes and header lengths)
// must be refused before memory is sized from the declaration. The largest
// honest allocation in the corpus is the 1 MiB line buffer of a JSON-lines
// curve.
const maxAllocPerBadInput = 32 << 20

// badInputCommand returns the command that reads a hostile input: a policy
// goes to compare --policy, a curve file to curve, a tensor file or a run
// directory to inspect.
func badInputCommand(path string) []string {
	switch ext := filepath.Ext(path); ext {
	case ".yaml":
		return []string{"compare", "--policy", path, "../../testdata/runs/tree", "../../testdata/runs/tree"}
	case ".csv", ".jsonl", ".tfevents":
		return []string{"curve", path, path}
	}
	return []string{"inspect", path}
}

// TestBadInputCorpus reads every file of testdata/bad (and every run
// directory of testdata/bad/runs) with the command that would meet it, and
// checks what a user sees against testdata/bad/NAME.golden: exit status 2,
// a message that names the file and the problem, no panic, and a bounded
// allocation. Not parallel: the allocation is read from the process's
// counters, which other tests would add to.
func TestBadInputCorpus(t *testing.T) {
	files, err := filepath.Glob("../../testdata/bad/*")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := filepath.Glob("../../testdata/bad/runs/*")
	if err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for _, p := range append(files, runs...) {
		if strings.HasSuffix(p, ".md") || filepath.Base(p) == "runs" {
			continue
		}
		inputs = append(inputs, p)
	}
	if len(inputs) < 40 {
		t.Fatalf("%d hostile inputs, want at least 40", len(inputs))
	}
	formats := map[string]bool{}
	for _, p := range inputs {
		name := filepath.Base(p)
		formats[filepath.Ext(p)] = true
		t.Run(name, func(t *testing.T) {
			args := badInputCommand(p)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			code, stdout, stderr := run(args...)
			runtime.ReadMemStats(&after)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(stdout+stderr, name) {
				t.Errorf("the message does not name %s:\n%s%s", name, stdout, stderr)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxAllocPerBadInput {
				t.Errorf("allocated %d MiB reading it", alloc>>20)
			}
			got := fmt.Sprintf("$ graphdiff %s\n-- exit %d --\n-- stdout --\n%s-- stderr --\n%s",
				strings.Join(args, " "), code, stdout, stderr)
			golden := name
			if strings.Contains(p, "/runs/") {
				golden = "run_" + name
			}
			checkGolden(t, filepath.Join("testdata", "bad", golden+".golden"), got)
		})
	}
	for _, ext := range []string{".npy", ".npz", ".safetensors", ".pt", ".yaml", ".csv", ".jsonl", ".tfevents", ""} {
		if !formats[ext] {
			t.Errorf("no hostile %q input", ext)
		}
	}
}
