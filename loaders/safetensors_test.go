package loaders

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestSafetensorsFixture reads a file written by safetensors.torch.save_file
// with every dtype graphdiff supports, 0-d and empty tensors included, and
// checks each tensor's dtype, shape and values against what torch recorded.
func TestSafetensorsFixture(t *testing.T) {
	t.Parallel()
	var exp struct {
		Tensors map[string]struct {
			DType  string            `json:"dtype"`
			Shape  []int             `json:"shape"`
			Values []json.RawMessage `json:"values"`
		} `json:"tensors"`
	}
	readJSON(t, fixture("safetensors", "all_dtypes.json"), &exp)
	ts, errs, err := OpenFile(fixture("safetensors", "all_dtypes.safetensors"), Options{})
	if err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	if len(ts) != len(exp.Tensors) {
		t.Errorf("%d tensors, want %d", len(ts), len(exp.Tensors))
	}
	for _, tn := range ts {
		t.Run(tn.Name, func(t *testing.T) {
			want, ok := exp.Tensors[tn.Name]
			if !ok {
				t.Fatalf("unexpected tensor %q", tn.Name)
			}
			if tn.Descr != want.DType || safetensorsDTypes[want.DType] != tn.DType {
				t.Errorf("dtype %s (%s), want %s", tn.DType, tn.Descr, want.DType)
			}
			if !reflect.DeepEqual(tn.Shape, want.Shape) && len(tn.Shape)+len(want.Shape) > 0 {
				t.Errorf("shape %v, want %v", tn.Shape, want.Shape)
			}
			checkValues(t, readC(t, tn, 3), expectedValues(t, want.Values))
		})
	}
}
