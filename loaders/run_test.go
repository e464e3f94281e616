package loaders

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"
	"weak"
)

// entryRow is what discovery made of one tensor, as the tests state it.
type entryRow struct {
	file, name string
	step       int
	kind       Kind
}

func rows(run *Run) []entryRow {
	var out []entryRow
	for _, e := range run.Entries {
		file := e.File
		if e.Member != "" {
			file += ":" + e.Member
		}
		out = append(out, entryRow{file, e.Name, e.Step, e.Kind})
	}
	return out
}

func checkRows(t *testing.T, got, want []entryRow) {
	t.Helper()
	g := fmt.Sprint(got)
	w := fmt.Sprint(want)
	if g != w {
		t.Errorf("entries:\n got %s\nwant %s", strings.ReplaceAll(g, "} {", "}\n     {"), strings.ReplaceAll(w, "} {", "}\n     {"))
	}
}

// TestLoadTree discovers the layout of testdata/runs/tree (step directories
// spelt three ways, a shard directory, a container, nested names, a
// manifest and a non-tensor file), as testdata/runs/README.md tabulates it.
func TestLoadTree(t *testing.T) {
	t.Parallel()
	run, err := Load(fixture("runs", "tree"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Errors) > 0 {
		t.Fatalf("errors: %v", run.Errors)
	}
	checkRows(t, rows(run), []entryRow{
		{"losses.npy", "losses", NoStep, KindLoss},
		{"params/layer1/w.npy", "params/layer1/w", NoStep, KindParam},
		{"step_000000/loss.npy", "loss", 0, KindLoss},
		{"step_000000/grads/fc1.weight.npy", "grads/fc1.weight", 0, KindGrad},
		{"rank_0/step_000000/grads/w.npy", "rank_0/grads/w", 0, KindGrad},
		{"step_000000/params/fc1.weight.npy", "params/fc1.weight", 0, KindParam},
		{"step_000000/inputs/x.npy", "inputs/x", 0, KindInput},
		{"step_000001/loss.npy", "loss", 1, KindLoss},
		{"step_000001/grads/fc1.weight.npy", "grads/fc1.weight", 1, KindGrad},
		{"step_000001/params/fc1.weight.npy", "params/fc1.weight", 1, KindParam},
		{"step_000001/inputs/x.npy", "inputs/x", 1, KindInput},
		{"step_000001/state.npz:fc2.bias.npy", "state/fc2.bias", 1, KindTensor},
		{"step_000001/state.npz:fc2.weight.npy", "state/fc2.weight", 1, KindTensor},
		{"step_2/loss.npy", "loss", 2, KindLoss},
		{"iter3/loss.npy", "loss", 3, KindLoss},
	})
	if run.Manifest == nil || run.Manifest.Run.Name != "tree" || run.Manifest.Run.ComputeDType != "float32" {
		t.Errorf("manifest %+v", run.Manifest)
	}
	for _, e := range run.Entries {
		want := Invalid
		if e.File == "step_000000/grads/fc1.weight.npy" {
			want = BFloat16 // the manifest says it was bfloat16 before saving
		}
		if e.Original != want || e.DType != Float32 {
			t.Errorf("%s: dtype %s original %s", e.File, e.DType, e.Original)
		}
	}
}

// TestLoadFlat takes steps from file names: a keyword suffix always, a
// bare number only when the same stem has two or more numbers.
func TestLoadFlat(t *testing.T) {
	t.Parallel()
	run, err := Load(fixture("runs", "flat"), Options{})
	if err != nil || len(run.Errors) > 0 {
		t.Fatal(err, run.Errors)
	}
	checkRows(t, rows(run), []entryRow{
		{"layer_0.npy", "layer_0", NoStep, KindTensor},
		{"loss_step0.npy", "loss", 0, KindLoss},
		{"fc1.weight.0.npy", "fc1.weight", 0, KindTensor},
		{"loss_step1.npy", "loss", 1, KindLoss},
		{"fc1.weight.1.npy", "fc1.weight", 1, KindTensor},
		{"fc1.weight.2.npy", "fc1.weight", 2, KindTensor},
		{"bias-iter7.npy", "bias", 7, KindTensor},
	})
}

// TestLoadContainer names a container's members by member name alone when
// the container is loaded by itself.
func TestLoadContainer(t *testing.T) {
	t.Parallel()
	run, err := Load(fixture("npz", "stored.npz"), Options{})
	if err != nil || len(run.Errors) > 0 {
		t.Fatal(err, run.Errors)
	}
	checkRows(t, rows(run), []entryRow{
		{"stored.npz:loss.npy", "loss", NoStep, KindLoss},
		{"stored.npz:grads/fc1.weight.npy", "grads/fc1.weight", NoStep, KindGrad},
		{"stored.npz:params/fc1.weight.npy", "params/fc1.weight", NoStep, KindParam},
		{"stored.npz:mask.npy", "mask", NoStep, KindTensor},
		{"stored.npz:step_count.npy", "step_count", NoStep, KindTensor},
	})
}

// copyFixture copies a numpy-written fixture file into dir/rel.
func copyFixture(t *testing.T, src, dir, rel string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoadBadFilesInRun checks that one unreadable file, a broken link, a
// symlink loop and a duplicate name are each reported, naming the file,
// while every other tensor is still listed.
func TestLoadBadFilesInRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFixture(t, fixture("npy", "f4.npy"), dir, "step_1/loss.npy")
	copyFixture(t, fixture("npy", "f4.npy"), dir, "step_1/grads/w.npy")
	copyFixture(t, fixture("bad", "truncated.npy"), dir, "step_1/grads/bad.npy")
	copyFixture(t, fixture("npy", "f4.npy"), dir, "step_2/loss.npy")
	copyFixture(t, fixture("npy", "f4.npy"), dir, "loss_step2.npy") // same name and step as step_2/loss.npy
	if err := os.Symlink("..", filepath.Join(dir, "step_1", "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere.npy", filepath.Join(dir, "step_2", "dangling.npy")); err != nil {
		t.Fatal(err)
	}
	run, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Subdirectories are read before the files beside them, so
	// step_2/loss.npy comes first and loss_step2.npy is the duplicate.
	checkRows(t, rows(run), []entryRow{
		{"step_1/loss.npy", "loss", 1, KindLoss},
		{"step_1/grads/w.npy", "grads/w", 1, KindGrad},
		{"step_2/loss.npy", "loss", 2, KindLoss},
	})
	var msgs []string
	for _, e := range run.Errors {
		msgs = append(msgs, e.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		filepath.Join(dir, "step_1", "grads", "bad.npy") + ": shape (100,) of <f4 needs 400 data bytes",
		filepath.Join(dir, "step_1", "loop") + ": symbolic link loop",
		filepath.Join(dir, "step_2", "dangling.npy") + ": broken symbolic link",
		filepath.Join(dir, "loss_step2.npy") + `: tensor "loss" at step 2 also comes from step_2/loss.npy`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("errors do not say %q:\n%s", want, all)
		}
	}
	if len(run.Errors) != 4 {
		t.Errorf("%d errors, want 4", len(run.Errors))
	}
}

// TestUnreadableDirectory reports a directory that cannot be listed and
// still lists the tensors beside it. Permissions do not stop root, so as
// root the test simulates the failure with a path that is not a directory.
func TestUnreadableDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFixture(t, fixture("npy", "f4.npy"), dir, "step_0/loss.npy")
	copyFixture(t, fixture("npy", "f4.npy"), dir, "step_1/loss.npy")
	locked := filepath.Join(dir, "step_1")
	d := &discovery{run: &Run{Root: dir}}
	if os.Geteuid() == 0 {
		if err := d.walk(filepath.Join(locked, "loss.npy"), "step_1", nil); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o755)
		run, err := Load(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		d.run = run
		if len(run.Entries) != 1 || run.Entries[0].File != "step_0/loss.npy" {
			t.Errorf("entries %v", rows(run))
		}
	}
	if len(d.run.Errors) != 1 || !strings.Contains(d.run.Errors[0].Error(), ": cannot read directory: ") ||
		!strings.HasPrefix(d.run.Errors[0].Error(), locked) {
		t.Errorf("errors %v", d.run.Errors)
	}
	if _, err := Load(filepath.Join(dir, "missing"), Options{}); err == nil || !strings.Contains(err.Error(), "missing: stat: no such file or directory") {
		t.Errorf("missing root: %v", err)
	}
}

// TestJoinsAsJoinDoes checks the walk's joins against path.Join and
// filepath.Join for roots given in every form and names of every kind.
func TestJoinsAsJoinDoes(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"", ".", "..", "/", "a", "a/", "./a", "a/./b", "a//b", "../a", "/x/y", "a/..", "/r/x/y", "r/b/a"} {
		for _, name := range []string{"", ".", "..", "x.npy", ".npy", "..npy", "a/b", "x y"} {
			if got, want := joinClean(path.Clean(dir), name), path.Join(path.Clean(dir), name); got != want {
				t.Errorf("joinClean(%q, %q) = %q, want %q", path.Clean(dir), name, got, want)
			}
			clean := filepath.Clean(dir) == dir
			full := joinFile(dir, name, clean)
			if want := filepath.Join(dir, name); full != want {
				t.Errorf("joinFile(%q, %q, %v) = %q, want %q", dir, name, clean, full, want)
			}
			for _, under := range []string{path.Clean(dir), "", ".", "a", "b/a", "y", "x/y"} {
				for _, x := range []string{name, stem(name), "x", "", "."} {
					if got, want := joinIn(full, name, under, x), joinClean(under, x); got != want {
						t.Errorf("joinIn(%q, %q, %q, %q) = %q, want %q", full, name, under, x, got, want)
					}
				}
			}
		}
	}
}

// TestJoinInSharesThePath checks that the names of a file in the usual
// layout are parts of its path, not strings of their own: a run of many
// small files keeps one string per file.
func TestJoinInSharesThePath(t *testing.T) {
	t.Parallel()
	full := "/runs/a/step_000123/grads/layer_07.weight.npy"
	f := "layer_07.weight.npy"
	start := uintptr(unsafe.Pointer(unsafe.StringData(full)))
	for _, c := range []struct{ dir, x, want string }{
		{"step_000123/grads", f, "step_000123/grads/layer_07.weight.npy"},
		{"grads", "layer_07.weight", "grads/layer_07.weight"},
		{"", "layer_07.weight", "layer_07.weight"},
		{"grads", "layer_07", "grads/layer_07"}, // a step suffix cut off the stem
	} {
		got := joinIn(full, f, c.dir, c.x)
		p := uintptr(unsafe.Pointer(unsafe.StringData(got)))
		if got != c.want || p < start || p+uintptr(len(got)) > start+uintptr(len(full)) {
			t.Errorf("joinIn(%q, %q) = %q (part of the path: %v), want %q, part of the path", c.dir, c.x, got,
				p >= start && p+uintptr(len(got)) <= start+uintptr(len(full)), c.want)
		}
	}
}

// heldEntry loads a run of one small .npy file deferred and resolves it:
// its entry holds the file's bytes.
func heldEntry(t *testing.T) *Entry {
	t.Helper()
	dir := t.TempDir()
	copyFixture(t, fixture("npy", "f4.npy"), dir, "step_1/grads/w.npy")
	run, err := LoadDeferred(dir, Options{})
	if err != nil || len(run.Entries) != 1 {
		t.Fatalf("%v, %d entries", err, len(run.Entries))
	}
	e := run.Entries[0]
	if err := Resolve(run.Entries)[0]; err != nil || !e.Held() {
		t.Fatalf("resolve: %v, held %v", err, e.Held())
	}
	return e
}

// TestReleasedDataIsPoisoned checks what every test that compares
// deferred runs relies on: in a test binary, data read after Release is
// 0xFF bytes (NaNs), not the file's, so such a read makes a comparison
// differ. Not parallel: another test's Resolve could take the buffer
// from the pool and fill it before it is looked at.
func TestReleasedDataIsPoisoned(t *testing.T) {
	e := heldEntry(t)
	b, ok := e.HeldBytes(0, e.Len())
	if !ok || bytes.Count(b, []byte{0xFF}) == len(b) {
		t.Fatalf("held bytes %x: want the file's", b)
	}
	e.Release()
	if n := bytes.Count(b, []byte{0xFF}); n != len(b) {
		t.Errorf("%d of %d bytes read after Release are 0xFF, want all", n, len(b))
	}
}

// TestReleaseFreesHeldData checks that a released entry's held bytes can be
// collected while the entry lives on (once the pool they are recycled
// through is emptied by two collections): a comparison keeps every entry
// to the end, and holds a step's files at a time only if Release lets
// them go. Not parallel: another test's Resolve could take the buffer from
// the pool and keep it.
func TestReleaseFreesHeldData(t *testing.T) {
	e := heldEntry(t)
	b, ok := e.HeldBytes(0, e.Len())
	if !ok || len(b) == 0 {
		t.Fatal("no held bytes")
	}
	w := weak.Make(&b[0])
	b = nil
	e.Release()
	runtime.GC()
	runtime.GC()
	if w.Value() != nil {
		t.Error("held bytes still reachable after Release")
	}
	if e.Held() || e.Len() == 0 {
		t.Errorf("after Release: held %v, %d elements", e.Held(), e.Len())
	}
	runtime.KeepAlive(e)
}

// TestFoundCountsTheTensorFiles checks that Options.Found is told of every
// tensor file the walk finds, in Load and LoadDeferred alike: graphdiff
// sizes its heap from it while a run is listed.
func TestFoundCountsTheTensorFiles(t *testing.T) {
	t.Parallel()
	root := fixture("runs", "tree")
	want := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && FormatOf(p) != "" {
			want++
		}
		return err
	})
	if err != nil || want < 10 {
		t.Fatalf("%v: %d tensor files in %s", err, want, root)
	}
	for name, load := range map[string]func(string, Options) (*Run, error){"Load": Load, "LoadDeferred": LoadDeferred} {
		var calls, found int
		if _, err := load(root, Options{Found: func(n int) { calls++; found += n }}); err != nil {
			t.Fatal(err)
		}
		if found != want || calls < 2 {
			t.Errorf("%s: Found told of %d files in %d calls, want %d files, a call per directory", name, found, calls, want)
		}
	}
}

// TestDuplicateWithKindSet lists a tensor twice at a step, once with its
// kind set by the manifest: the second file is still the duplicate,
// although the two entries sort apart (by kind) and come in order.
func TestDuplicateWithKindSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFixture(t, fixture("npy", "f4.npy"), dir, "step_2/loss.npy")
	copyFixture(t, fixture("npy", "f4.npy"), dir, "loss_step2.npy")
	manifest := `{"graphdiff_manifest": 1, "tensors": [{"path": "loss_step2.npy", "kind": "tensor"}]}`
	if err := os.WriteFile(filepath.Join(dir, ManifestName), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, load := range map[string]func(string, Options) (*Run, error){"Load": Load, "LoadDeferred": LoadDeferred} {
		run, err := load(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, rows(run), []entryRow{{"step_2/loss.npy", "loss", 2, KindLoss}})
		want := filepath.Join(dir, "loss_step2.npy") + `: tensor "loss" at step 2 also comes from step_2/loss.npy; rename one`
		if len(run.Errors) != 1 || run.Errors[0].Error() != want {
			t.Errorf("%s: errors %v, want %q", name, run.Errors, want)
		}
	}
}

// TestStepNamedContainers: a flat directory of per-step containers named
// only by their step (step_1000.pt, step_1001.pt as torch.save writes them
// in a loop; iter-3.npz) names their members alone, so that "grads/w" of
// step_1000.pt pairs with "grads/w" of another run's step directory; a
// container whose stem says something else (state_7.pt) keeps it as a
// prefix.
func TestStepNamedContainers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyTo := func(from, to string) {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pt := filepath.Join("..", "testdata", "pt", "nested.pt")
	npz := filepath.Join("..", "testdata", "npz", "stored.npz")
	copyTo(pt, "step_1000.pt")
	copyTo(pt, "step_1001.pt")
	copyTo(npz, "iter-3.npz")
	copyTo(pt, "state_7.pt")
	copyTo(pt, "state_8.pt")
	r, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Kind{}
	for _, e := range r.Entries {
		got[fmt.Sprintf("%d %s", e.Step, e.Name)] = e.Kind
	}
	for key, kind := range map[string]Kind{
		"1000 grads/fc1.weight": KindGrad, "1001 params/fc1.bias": KindParam, "1000 loss": KindLoss,
		"3 grads/fc1.weight": KindGrad, "3 mask": KindTensor,
		"7 state/grads/fc1.weight": KindGrad, "8 state/loss": KindLoss,
	} {
		if got[key] != kind {
			t.Errorf("%s: kind %q, want %q (entries: %v)", key, got[key], kind, got)
		}
	}
	if len(r.Errors) > 0 {
		t.Errorf("errors: %v", r.Errors)
	}
}
