package loaders

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseManifestErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, json, want string
	}{
		{"unknown key", `{"graphdiff_manifest": 1, "run": {"nme": "x"}}`, `unknown field "nme"`},
		{"version", `{"graphdiff_manifest": 2}`, `graphdiff reads version 1`},
		{"no version", `{"run": {}}`, `"graphdiff_manifest" is 0`},
		{"parent path", `{"graphdiff_manifest": 1, "tensors": [{"path": "../other/loss.npy"}]}`, "stay inside the run"},
		{"hidden parent", `{"graphdiff_manifest": 1, "tensors": [{"path": "a/../../loss.npy"}]}`, "stay inside the run"},
		{"absolute path", `{"graphdiff_manifest": 1, "tensors": [{"path": "/etc/passwd"}]}`, "stay inside the run"},
		{"no path", `{"graphdiff_manifest": 1, "tensors": [{"dtype": "bfloat16"}]}`, "no path"},
		{"bad dtype", `{"graphdiff_manifest": 1, "tensors": [{"path": "a.npy", "dtype": "bfloat17"}]}`, `unknown dtype "bfloat17"`},
		{"bad kind", `{"graphdiff_manifest": 1, "tensors": [{"path": "a.npy", "kind": "gradient"}]}`, `unknown kind "gradient"`},
		{"negative step", `{"graphdiff_manifest": 1, "tensors": [{"path": "a.npy", "step": -1}]}`, "negative step"},
		{"twice", `{"graphdiff_manifest": 1, "tensors": [{"path": "a.npy"}, {"path": "./a.npy"}]}`, "listed twice"},
		{"compute dtype", `{"graphdiff_manifest": 1, "run": {"compute_dtype": "tf32x"}}`, "run.compute_dtype"},
		{"trailing", `{"graphdiff_manifest": 1} {}`, "data after the JSON object"},
		{"not json", `graphdiff_manifest: 1`, "bad manifest"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestManifestOverrides applies a manifest to a run whose files need it:
// float8 stored as raw '<V1' bytes and as uint8, a bfloat16 tensor upcast to
// float32, and a file renamed into a step. A manifest entry for a file that
// is not there, and a dtype that cannot fit the stored data, are errors.
func TestManifestOverrides(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFixture(t, fixture("dtypes", "float8_e4m3fn_bits.npy"), dir, "step_0/scale.npy")
	copyFixture(t, fixture("npy", "u1.npy"), dir, "step_0/raw_e5m2.npy")
	copyFixture(t, fixture("npy", "f4.npy"), dir, "step_0/grads/w.npy")
	copyFixture(t, fixture("npy", "i4.npy"), dir, "step_0/count.npy")
	copyFixture(t, fixture("npy", "f8.npy"), dir, "extra/thing.npy")
	writeFile(t, filepath.Join(dir, ManifestName), `{
  "graphdiff_manifest": 1,
  "run": {"name": "m", "compute_dtype": "bf16"},
  "tensors": [
    {"path": "step_0/scale.npy", "dtype": "float8_e4m3fn"},
    {"path": "step_0/raw_e5m2.npy", "dtype": "e5m2", "kind": "param"},
    {"path": "step_0/grads/w.npy", "dtype": "bfloat16"},
    {"path": "step_0/count.npy", "dtype": "float16"},
    {"path": "extra/thing.npy", "name": "loss", "step": 5},
    {"path": "step_0/gone.npy", "dtype": "float16"}
  ]
}`)
	run, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*Entry{}
	for _, e := range run.Entries {
		got[e.File] = e
	}
	if e := got["step_0/scale.npy"]; e == nil || e.DType != Float8E4M3FN {
		t.Errorf("scale: %+v", e)
	}
	if e := got["step_0/raw_e5m2.npy"]; e == nil || e.DType != Float8E5M2 || e.Kind != KindParam || e.Descr != "|u1" {
		t.Errorf("raw_e5m2: %+v", e)
	}
	if e := got["step_0/grads/w.npy"]; e == nil || e.DType != Float32 || e.Original != BFloat16 {
		t.Errorf("grads/w: %+v", e)
	}
	if e := got["extra/thing.npy"]; e == nil || e.Name != "loss" || e.Step != 5 || e.Kind != KindLoss {
		t.Errorf("extra/thing: %+v", e)
	}
	if e := got["step_0/count.npy"]; e != nil {
		t.Errorf("int32 data taken as float16: %+v", e)
	}
	var msgs []string
	for _, e := range run.Errors {
		msgs = append(msgs, e.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"count.npy: dtype float16 (from the manifest) does not fit data stored as int32",
		"manifest.json: manifest lists step_0/gone.npy, which is not a tensor in the run",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("errors do not say %q:\n%s", want, all)
		}
	}
}

// TestManifestTaps reads the taps the dump helper records (run.taps, in
// forward order) and refuses a module named twice or not at all.
func TestManifestTaps(t *testing.T) {
	m, err := ParseManifest([]byte(`{"graphdiff_manifest": 1, "run": {"taps": {"modules": [{"name": "fc1", "type": "Linear"}, {"name": "drop", "type": "Dropout"}], "grads": true}}, "tensors": []}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Taps{Modules: []TapModule{{"fc1", "Linear"}, {"drop", "Dropout"}}, Grads: true}
	if !reflect.DeepEqual(m.Run.Taps, want) {
		t.Errorf("taps %+v, want %+v", m.Run.Taps, want)
	}
	for _, bad := range []string{`[{"name": "fc1"}, {"name": "fc1"}]`, `[{"type": "Linear"}]`} {
		_, err := ParseManifest([]byte(`{"graphdiff_manifest": 1, "run": {"taps": {"modules": ` + bad + `}}, "tensors": []}`))
		if err == nil || !strings.Contains(err.Error(), "run.taps.modules") {
			t.Errorf("taps %s: error %v, want one naming run.taps.modules", bad, err)
		}
	}
}
