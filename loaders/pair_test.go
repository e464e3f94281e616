package loaders

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPairRuns pairs a run with a copy that lacks one tensor and has two
// more: every tensor appears in exactly one pair, none is dropped, and the
// pairs are in entry order.
func TestPairRuns(t *testing.T) {
	t.Parallel()
	a := t.TempDir()
	b := t.TempDir()
	for _, rel := range []string{"step_0/loss.npy", "step_0/grads/w.npy", "step_1/loss.npy", "step_1/grads/w.npy"} {
		copyFixture(t, fixture("npy", "f4.npy"), a, rel)
		copyFixture(t, fixture("npy", "f4.npy"), b, rel)
	}
	if err := os.Remove(filepath.Join(b, "step_1", "grads", "w.npy")); err != nil {
		t.Fatal(err)
	}
	copyFixture(t, fixture("npy", "f4.npy"), b, "step_1/params/w.npy")
	copyFixture(t, fixture("npy", "f4.npy"), b, "step_0/params/v.npy") // an extra before a's last step
	ra, err := Load(a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Load(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range PairRuns(ra, rb) {
		got = append(got, fmt.Sprintf("%d %s %s a=%v b=%v", p.Step, p.Kind, p.Name, p.A != nil, p.B != nil))
	}
	want := []string{
		"0 loss loss a=true b=true",
		"0 grad grads/w a=true b=true",
		"0 param params/v a=false b=true",
		"1 loss loss a=true b=true",
		"1 grad grads/w a=true b=false",
		"1 param params/w a=false b=true",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pairs\n got %q\nwant %q", got, want)
	}
}

// TestTruncatedAfterDiscovery shortens a file between listing and reading:
// the read fails with a message naming the file and the missing bytes.
func TestTruncatedAfterDiscovery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFixture(t, fixture("npy", "f4_big.npy"), dir, "big.npy")
	path := filepath.Join(dir, "big.npy")
	tn := openOne(t, path, Options{})
	if err := os.Truncate(path, 100_000); err != nil {
		t.Fatal(err)
	}
	r, err := tn.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]float64, 1<<16)
	for err == nil {
		_, err = r.Read(buf)
	}
	want := path + ": data ends after 99872 of 1200000 bytes"
	if got := err.Error(); len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("error %q, want it to start %q", got, want)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := tn.Open(); err == nil || err.Error() != path+": open: no such file or directory" {
		t.Errorf("vanished file: %v", err)
	}
}

// TestMergePairsAsByName pairs random runs both ways: wherever the one-pass
// merge answers, its pairs are pairByName's, pair for pair and in order.
// The runs have steps with and without numbers, names of every kind,
// tensors in one run only, duplicates, entries out of order, and kinds a
// manifest set against the name; the merge must also answer for most
// sorted runs without such kinds (else it would never be used).
func TestMergePairsAsByName(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"loss", "grads/w", "grads/b", "params/w", "params/b", "x", "outputs/y", "Grads/z"}
	kinds := []Kind{KindLoss, KindGrad, KindParam, KindTensor, KindOutput}
	run := func(set bool) *Run {
		r := &Run{}
		for range rng.IntN(12) {
			name := names[rng.IntN(len(names))]
			e := &Entry{Name: name, Step: rng.IntN(4) - 1, Kind: KindOf(name), Tensor: &Tensor{Name: name}}
			if set && rng.IntN(4) == 0 {
				e.Kind = kinds[rng.IntN(len(kinds))]
			}
			r.Entries = append(r.Entries, e)
		}
		if rng.IntN(5) > 0 {
			(&discovery{run: r}).finish()
		}
		return r
	}
	merged := 0
	for range 20000 {
		set := rng.IntN(3) == 0
		a, b := run(set), run(set)
		got, ok := mergePairs(a.Entries, b.Entries)
		if !ok {
			continue
		}
		if !set {
			merged++
		}
		if want := pairByName(a, b); !slices.Equal(got, want) {
			t.Fatalf("a %v\nb %v\nmerged  %v\nby name %v", rows(a), rows(b), got, want)
		}
	}
	if merged < 5000 {
		t.Errorf("the merge answered for %d sorted runs of names' kinds", merged)
	}
}
