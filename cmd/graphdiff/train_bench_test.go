package main

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkTrainingDump compares a whole training dump, both layouts the
// dump helper writes, as a user runs graphdiff on it (JSON out). The dump
// is bench/train.sh's (GPT-2-small's 148 tensors, gradients and
// parameters, 3 steps, two runs, about 6 GB per layout): set
// GRAPHDIFF_BENCH_TRAIN to the directory train.sh made it in, holding
// npy/ and st/. Skipped without it.
func BenchmarkTrainingDump(b *testing.B) {
	dir := os.Getenv("GRAPHDIFF_BENCH_TRAIN")
	if dir == "" {
		b.Skip("GRAPHDIFF_BENCH_TRAIN is not set (bench/train.sh makes the dump)")
	}
	for _, layout := range []string{"npy", "st"} {
		b.Run(layout, func(b *testing.B) {
			d := filepath.Join(dir, layout)
			if _, err := os.Stat(filepath.Join(d, "graph")); err != nil {
				b.Skip(err)
			}
			for b.Loop() {
				if code, _, stderr := run("compare", filepath.Join(d, "eager"), filepath.Join(d, "graph"), "--format", "json"); code > 1 {
					b.Fatalf("exit %d: %s", code, stderr)
				}
			}
		})
	}
}
