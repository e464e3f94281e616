package main

import (
	"os"
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
)

// TestMain runs the tests with released data poisoned: a comparison that
// read a file's bytes after its step released them would see NaNs.
func TestMain(m *testing.M) {
	loaders.PoisonReleased = true
	os.Exit(m.Run())
}
