package loaders

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestPTFixtures reads files written by torch.save (Debian's PyTorch, CPU):
// a dict of tensors of several dtypes, nested dicts, a bfloat16
// state_dict, and views saved with their storages (Fortran strides, a
// storage offset, every other element), checking dtype, shape and every
// value in C order against what torch recorded.
func TestPTFixtures(t *testing.T) {
	t.Parallel()
	var exp struct {
		Files map[string]map[string]struct {
			DType  string            `json:"dtype"`
			Shape  []int             `json:"shape"`
			Values []json.RawMessage `json:"values"`
		} `json:"files"`
	}
	readJSON(t, fixture("pt", "expected.json"), &exp)
	if len(exp.Files) != 4 {
		t.Fatalf("%d files in expected.json", len(exp.Files))
	}
	for file, want := range exp.Files {
		t.Run(file, func(t *testing.T) {
			ts, errs, err := OpenFile(fixture("pt", file), Options{})
			if err != nil || len(errs) > 0 {
				t.Fatal(err, errs)
			}
			if len(ts) != len(want) {
				t.Errorf("%d tensors, want %d", len(ts), len(want))
			}
			for _, tn := range ts {
				w, ok := want[tn.Name]
				if !ok {
					t.Errorf("unexpected tensor %q", tn.Name)
					continue
				}
				if tn.DType.String() != w.DType || !(reflect.DeepEqual(tn.Shape, w.Shape) || len(tn.Shape)+len(w.Shape) == 0) {
					t.Errorf("%s: %s %v, want %s %v", tn.Name, tn.DType, tn.Shape, w.DType, w.Shape)
				}
				checkValues(t, readC(t, tn, 5), expectedValues(t, w.Values))
			}
		})
	}
}

// TestPTRefusals checks that a pickle naming a function to call is refused
// without calling it, that the legacy format is refused with advice, and
// that a file whose tensors flatten into one name twice is refused whole,
// naming the name and why it came twice, as is one whose byteorder record
// names neither order, and one whose archive holds a member twice or two
// pickles.
func TestPTRefusals(t *testing.T) {
	t.Parallel()
	for file, want := range map[string]string{
		"pt_code.pt":   "data.pkl names posix.system: refused, graphdiff never runs code from a pickle",
		"pt_legacy.pt": "legacy torch.save format",
		"pt_name_collision.pt": `pt_name_collision.pt: two tensors are named "a/b" (a key containing '/' gives the name ` +
			`a nested container gives too): graphdiff cannot tell which one is meant`,
		"pt_repeated_key.pt": `pt_repeated_key.pt: two tensors are named "a" (a dict holds the key twice, or two keys ` +
			`that print alike, as 1 and '1' do): graphdiff cannot tell which one is meant`,
		"pt_byteorder_unknown.pt": `pt_byteorder_unknown.pt: byteorder record "middle" is neither "little" nor "big": ` +
			`the storages' byte order is unknown (torch.load refuses it too)`,
		"pt_duplicate_member.pt": `pt_duplicate_member.pt: the archive holds two members named "archive/data.pkl": ` +
			`graphdiff cannot tell which one is meant`,
		"pt_two_pickles.pt": `pt_two_pickles.pt: the archive holds two pickles, "a/data.pkl" and "b/data.pkl": ` +
			`graphdiff cannot tell which one is meant`,
	} {
		ts, errs, err := OpenFile(fixture("bad", file), Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
		if len(ts)+len(errs) > 0 {
			t.Errorf("%s: %d tensors and %d member errors from a refused file", file, len(ts), len(errs))
		}
	}
}

// TestPTBigEndian reads pt_big_endian.pt and pt_big_endian_views.pt, the
// tensors of tensors.pt and views.pt as a big-endian machine saves them (a
// byteorder record "big", storages byte-swapped): every tensor, views
// gathered from their storages included, has the values of the original,
// bit for bit; multi-byte dtypes are marked big-endian, bool and uint8
// are not.
func TestPTBigEndian(t *testing.T) {
	t.Parallel()
	open := func(t *testing.T, path string) map[string]*Tensor {
		ts, errs, err := OpenFile(path, Options{})
		if err != nil || len(errs) > 0 {
			t.Fatal(err, errs)
		}
		byName := map[string]*Tensor{}
		for _, tn := range ts {
			byName[tn.Name] = tn
		}
		return byName
	}
	for file, original := range map[string]string{"pt_big_endian.pt": "tensors.pt", "pt_big_endian_views.pt": "views.pt"} {
		t.Run(file, func(t *testing.T) {
			little, big := open(t, fixture("pt", original)), open(t, fixture("pt_byteorder", file))
			if len(big) != len(little) || len(big) < 3 {
				t.Fatalf("%d tensors, want the %d of %s", len(big), len(little), original)
			}
			for name, want := range little {
				got := big[name]
				if got == nil || got.DType != want.DType || !reflect.DeepEqual(got.Shape, want.Shape) {
					t.Fatalf("%s: %+v, want %s %v", name, got, want.DType, want.Shape)
				}
				if got.BigEndian != (got.DType.Size() > 1) || want.BigEndian {
					t.Errorf("%s: %s BigEndian %v (%s: %v)", name, got.DType, got.BigEndian, original, want.BigEndian)
				}
				checkValues(t, readC(t, got, 3), readC(t, want, 3))
			}
		})
	}
}

// TestPTInRun names a container's tensors <stem>/<name> in a run.
func TestPTInRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFixture(t, fixture("pt", "nested.pt"), dir, "step_3/state.pt")
	run, err := Load(dir, Options{})
	if err != nil || len(run.Errors) > 0 {
		t.Fatal(err, run.Errors)
	}
	checkRows(t, rows(run), []entryRow{
		{"step_3/state.pt:loss", "state/loss", 3, KindLoss},
		{"step_3/state.pt:grads/fc1.bias", "state/grads/fc1.bias", 3, KindGrad},
		{"step_3/state.pt:grads/fc1.weight", "state/grads/fc1.weight", 3, KindGrad},
		{"step_3/state.pt:params/fc1.bias", "state/params/fc1.bias", 3, KindParam},
		{"step_3/state.pt:params/fc1.weight", "state/params/fc1.weight", 3, KindParam},
	})
}

func FuzzPT(f *testing.F) {
	addSeeds(f, "pt/*.pt", "pt_byteorder/*.pt", "pt_optim/*.pt", "bad/pt_*.pt")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFormat(t, data, FormatPT) })
}

// TestHuggingFaceCheckpoints loads a run laid out as Hugging Face's
// Trainer saves checkpoints (testdata/hf, testdata/gen/hf_layout.py):
// checkpoint-<step> directories are steps, pytorch_model.bin (a
// torch.save archive named .bin) holds the model's parameters,
// optimizer.pt the optimizer's state; scheduler.pt and training_args.bin
// hold no tensor and list none, without an error, and rng_state.pth (the
// generators' states, which differ between the two runs) is not read.
func TestHuggingFaceCheckpoints(t *testing.T) {
	t.Parallel()
	run, err := Load(fixture("hf", "eager"), Options{})
	if err != nil || len(run.Errors) > 0 {
		t.Fatal(err, run.Errors)
	}
	counts := map[Kind]int{}
	steps := map[int]bool{}
	for _, e := range run.Entries {
		counts[e.Kind]++
		steps[e.Step] = true
		if strings.Contains(e.File, "rng_state") || strings.Contains(e.File, "scheduler") || strings.Contains(e.File, "training_args") {
			t.Errorf("%s read from %s", e.Name, e.File)
		}
		if strings.HasSuffix(e.File, "pytorch_model.bin") && (e.Kind != KindParam || !strings.HasPrefix(e.Name, "pytorch_model/")) {
			t.Errorf("%s from %s is %s, want a param named pytorch_model/...", e.Name, e.File, e.Kind)
		}
	}
	if counts[KindParam] != 12 || counts[KindTensor] != 36 || len(steps) != 3 || !steps[2] || !steps[4] || !steps[6] {
		t.Errorf("kinds %v over steps %v, want 12 params and 36 optimizer tensors at steps 2, 4 and 6", counts, steps)
	}
	// optimizer.pt's moments name the parameters of pytorch_model.bin
	// beside it (matchAcross): Adam's state i is the i-th parameter of the
	// model's state_dict in the order it was saved
	params := map[[2]any][]int{}
	for _, e := range run.Entries {
		if e.Kind == KindParam {
			params[[2]any{e.Step, e.Name}] = e.Shape
		}
	}
	named := 0
	for _, e := range run.Entries {
		if !strings.HasSuffix(e.Name, "/exp_avg") {
			continue
		}
		p := e.MomentParam()
		shape, ok := params[[2]any{e.Step, p}]
		if !ok || !slices.Equal(shape, e.Shape) {
			t.Errorf("step %d %s: parameter %q (%v, want shape %v)", e.Step, e.Name, p, shape, e.Shape)
		}
		named++
	}
	if named != 12 {
		t.Errorf("%d moments, want 12", named)
	}
	if e := run.Entries[slices.IndexFunc(run.Entries, func(e *Entry) bool { return strings.HasSuffix(e.Name, "state/0/exp_avg") })]; e.MomentParam() != "pytorch_model/0.weight" {
		t.Errorf("state 0 is %q, want pytorch_model/0.weight", e.MomentParam())
	}
}

// TestZipBinOfAnotherKind: a .bin file that is a zip archive but not
// torch.save's (no data.pkl; written here by archive/zip) is no tensor
// file: discovery lists nothing from it and reports no error, as for any
// .bin that is no zip, while the torch.save archive beside it is read.
func TestZipBinOfAnotherKind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFixture(t, fixture("hf", "eager", "checkpoint-2", "optimizer.pt"), dir, "step_1/optimizer.pt")
	f, err := os.Create(filepath.Join(dir, "step_1", "other.bin"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, err := zw.Create("notes.txt")
	if err == nil {
		_, err = w.Write([]byte("no tensors here"))
	}
	if err != nil || zw.Close() != nil || f.Close() != nil {
		t.Fatal(err)
	}
	run, err := Load(dir, Options{})
	if err != nil || len(run.Errors) > 0 {
		t.Fatal(err, run.Errors)
	}
	for _, e := range run.Entries {
		if strings.HasSuffix(e.File, "other.bin") {
			t.Errorf("%s read from %s", e.Name, e.File)
		}
	}
	if len(run.Entries) != 12 {
		t.Errorf("%d tensors, want the optimizer's 12", len(run.Entries))
	}
}

// TestOptimizerMoments reads the optimizers' state dicts that torch.save
// wrote (testdata/gen/optim_fixtures.py): each state tensor that carries
// the gradient gets the rule its param group states (Adam's two groups
// their own betas, SGD's momentum and dampening) and the name of its
// parameter, matched past BatchNorm's buffers as model.named_parameters()
// orders them; no other tensor gets a rule: not RMSprop's
// momentum_buffer (a step, not a gradient), not exp_avg_sq, step counters
// or the model's parameters; every tensor of an optimizer's state but
// its step counter says which member it is. AdamW's two groups (weight
// decay on the matrices only) are matched each in the model's order.
// Beside a model's EMA copy, named so, the moments name the model's
// parameters; beside a second dict of parameters alike, none.
func TestOptimizerMoments(t *testing.T) {
	t.Parallel()
	var exp struct {
		Files map[string]map[string]struct {
			Decay, Gain float64
			Param       string
		} `json:"files"`
	}
	readJSON(t, fixture("pt_optim", "expected.json"), &exp)
	if len(exp.Files) != 3 {
		t.Fatalf("%d files in expected.json", len(exp.Files))
	}
	for file, moments := range exp.Files {
		ts, errs, err := OpenFile(fixture("pt_optim", file), Options{})
		if err != nil || len(errs) > 0 {
			t.Fatal(err, errs)
		}
		known, named := 0, 0
		for _, tn := range ts {
			want, ok := moments[tn.Name]
			switch {
			case ok && (Moment{Decay: tn.Moment.Decay, Gain: tn.Moment.Gain, Param: tn.Moment.Param, State: tn.Moment.State}) != (Moment{Decay: want.Decay, Gain: want.Gain, Param: want.Param, State: path.Base(tn.Name)}):
				t.Errorf("%s %s: moment %v of %q, want decay %v gain %v of %q", file, tn.Name, tn.Moment, tn.Moment.Param, want.Decay, want.Gain, want.Param)
			case !ok && tn.Moment.Known():
				t.Errorf("%s %s: moment %v, want none", file, tn.Name, tn.Moment)
			case !ok && strings.Contains(tn.Name, "/state/") != (tn.Moment.State != "") && path.Base(tn.Name) != "step":
				t.Errorf("%s %s: state member %q", file, tn.Name, tn.Moment.State)
			case ok:
				known++
				if want.Param != "" {
					named++
				}
			}
		}
		if known != len(moments) || known == 0 {
			t.Errorf("%s: %d tensors with their rule, want %d", file, known, len(moments))
		}
		if wantNamed := file != "two_models.pt"; (named > 0) != wantNamed {
			t.Errorf("%s: %d moments name their parameter", file, named)
		}
	}
	if s := (Moment{Decay: 0.9, Gain: 1 - 0.9}).String(); s != "m_k = 0.9·m_{k−1} + 0.1·g_k" {
		t.Errorf("String() = %q", s)
	}
}
