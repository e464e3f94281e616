package loaders

import (
	"strings"
	"testing"
)

// TestSubject checks Subject against its definition (the name split at
// '/', without the first component that is a kind word, joined again) for
// names with the kind word first, last, in the middle, alone, in capitals,
// twice, absent, and with empty components.
func TestSubject(t *testing.T) {
	t.Parallel()
	byDefinition := func(name string) string {
		parts := strings.Split(name, "/")
		for i, c := range parts {
			if _, ok := kindWords[strings.ToLower(c)]; ok {
				return strings.Join(append(parts[:i:i], parts[i+1:]...), "/")
			}
		}
		return name
	}
	for _, name := range []string{
		"", "/", "//", "grads", "grads/fc1.weight", "params/fc1.weight", "model/grads/fc1.weight",
		"rank_0/GRADS/fc1", "fc1/grads", "a//grads", "/grads/x", "grads/params/x", "loss", "a/b/c",
		"grads/", "/grads", "activations/x/y", "x.grads/y",
	} {
		if got, want := Subject(name), byDefinition(name); got != want {
			t.Errorf("Subject(%q) = %q, want %q", name, got, want)
		}
	}
	if got := Subject("grads/fc1.weight"); got != "fc1.weight" {
		t.Errorf("Subject(grads/fc1.weight) = %q", got)
	}
}
