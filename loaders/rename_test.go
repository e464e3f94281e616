package loaders

import (
	"errors"
	"slices"
	"testing"
)

func TestParseRename(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rename
		ok   bool
	}{
		{"fc.weight=fc1.weight", Rename{"fc.weight", "fc1.weight"}, true},
		{"encoder/fc=enc/fc", Rename{"encoder/fc", "enc/fc"}, true},
		{"fc.weight", Rename{}, false},
		{"=fc1.weight", Rename{}, false},
		{"fc.weight=", Rename{}, false},
		{"fc.weight=fc.weight", Rename{}, false},
		{"/fc=fc1", Rename{}, false},
		{"fc/=fc1", Rename{}, false},
		{"a//b=c", Rename{}, false},
		{"../a=b", Rename{}, false},
		{"a\nb=c", Rename{}, false},
	} {
		got, err := ParseRename(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseRename(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestRenameApply(t *testing.T) {
	for _, tc := range []struct {
		rename   Rename
		name     string
		want     string
		replaced bool
	}{
		{Rename{"fc.weight", "fc1.weight"}, "params/fc.weight", "params/fc1.weight", true},
		{Rename{"fc.weight", "fc1.weight"}, "grads/fc.weight", "grads/fc1.weight", true},
		{Rename{"fc.weight", "fc1.weight"}, "fc.weight", "fc1.weight", true},
		{Rename{"fc.weight", "fc1.weight"}, "params/fc.weight_scale", "params/fc.weight_scale", false},
		{Rename{"fc.weight", "fc1.weight"}, "params/xfc.weight", "params/xfc.weight", false},
		{Rename{"fc", "head"}, "fc/fc.w", "head/fc.w", true},
		{Rename{"fc", "head"}, "fc.w/x", "fc.w/x", false},
		{Rename{"enc/fc", "encoder/fc"}, "params/enc/fc", "params/encoder/fc", true},
		{Rename{"enc/fc", "encoder/fc"}, "params/enc/fcx", "params/enc/fcx", false},
	} {
		got, ok := tc.rename.Apply(tc.name)
		if got != tc.want || ok != tc.replaced {
			t.Errorf("%v.Apply(%q) = %q, %v; want %q, %v", tc.rename, tc.name, got, ok, tc.want, tc.replaced)
		}
	}
}

// TestRenameFor checks that the rename found for two names is the
// shortest that turns the first into the second.
func TestRenameFor(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want Rename
	}{
		{"params/fc.weight", "params/fc1.weight", Rename{"fc.weight", "fc1.weight"}},
		{"params/w", "params/enc/w", Rename{"w", "enc/w"}},
		{"params/enc/w", "params/w", Rename{"enc/w", "w"}},
		{"model/enc/fc.w", "model/encoder/fc.w", Rename{"enc", "encoder"}},
		{"a", "b", Rename{"a", "b"}},
		// the short form would rename the first fc: the whole names
		{"fc/x/fc", "fc/x/head", Rename{"fc/x/fc", "fc/x/head"}},
	} {
		got := RenameFor(tc.a, tc.b)
		if got != tc.want {
			t.Errorf("RenameFor(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if to, ok := got.Apply(tc.a); !ok || to != tc.b {
			t.Errorf("RenameFor(%q, %q) = %v applies as %q", tc.a, tc.b, got, to)
		}
	}
}

func TestRenameEntries(t *testing.T) {
	entries := func(names ...string) *Run {
		r := &Run{}
		for _, n := range names {
			r.Entries = append(r.Entries, &Entry{Name: n, Step: 1, Kind: KindOf(n)})
		}
		return r
	}
	r := entries("grads/fc.weight", "params/fc.weight", "params/out.bias")
	done, err := RenameEntries(r, []Rename{{"fc.weight", "a.weight"}, {"nothing", "x"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range r.Entries {
		names = append(names, e.Name)
	}
	if want := []string{"grads/a.weight", "params/a.weight", "params/out.bias"}; !slices.Equal(names, want) {
		t.Errorf("renamed to %v, want %v", names, want)
	}
	if done[0].Tensors != 2 || done[1].Tensors != 0 {
		t.Errorf("counts %+v, want 2 and 0", done)
	}

	r = entries("params/fc.weight", "params/fc1.weight")
	_, err = RenameEntries(r, []Rename{{"fc.weight", "fc1.weight"}})
	var c *RenameCollision
	if !errors.As(err, &c) || c.To != "params/fc1.weight" || c.Rename.Old != "fc.weight" {
		t.Fatalf("collision: %v", err)
	}
	if r.Entries[0].Name != "params/fc.weight" {
		t.Errorf("a failed rename changed the run: %s", r.Entries[0].Name)
	}
}
