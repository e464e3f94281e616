package loaders

import (
	"os"
	"testing"
)

// TestMain runs the tests with released data poisoned: a read of a file's
// bytes after Release would see NaNs.
func TestMain(m *testing.M) {
	PoisonReleased = true
	os.Exit(m.Run())
}
