package loaders

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestNPZFixtures reads the archives numpy wrote with np.savez (stored
// members, read in place) and np.savez_compressed (deflated members,
// streamed) and checks every member against expected.json.
func TestNPZFixtures(t *testing.T) {
	t.Parallel()
	var exp struct {
		Archives []struct {
			File    string `json:"file"`
			Members []struct {
				Member string            `json:"member"`
				DType  string            `json:"dtype"`
				Shape  []int             `json:"shape"`
				Values []json.RawMessage `json:"values"`
			} `json:"members"`
		} `json:"archives"`
	}
	readJSON(t, fixture("npz", "expected.json"), &exp)
	for _, a := range exp.Archives {
		t.Run(a.File, func(t *testing.T) {
			ts, errs, err := OpenFile(fixture("npz", a.File), Options{})
			if err != nil || len(errs) > 0 {
				t.Fatal(err, errs)
			}
			byMember := map[string]*Tensor{}
			for _, tn := range ts {
				byMember[tn.Member] = tn
			}
			if len(ts) != len(a.Members) {
				t.Errorf("%d tensors, want %d", len(ts), len(a.Members))
			}
			for _, m := range a.Members {
				tn := byMember[m.Member]
				if tn == nil {
					t.Errorf("member %s missing", m.Member)
					continue
				}
				if tn.Name+".npy" != m.Member || tn.DType.String() != m.DType ||
					!(reflect.DeepEqual(tn.Shape, m.Shape) || len(tn.Shape)+len(m.Shape) == 0) {
					t.Errorf("%s: name %q dtype %s shape %v, want %s %v", m.Member, tn.Name, tn.DType, tn.Shape, m.DType, m.Shape)
				}
				wantRandom := a.File == "stored.npz"
				if tn.RandomAccess() != wantRandom {
					t.Errorf("%s: RandomAccess %v", m.Member, tn.RandomAccess())
				}
				checkValues(t, readC(t, tn, 5), expectedValues(t, m.Values))
			}
		})
	}
}
