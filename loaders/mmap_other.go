//go:build !(linux || darwin || freebsd)

package loaders

import "errors"

// mapRange is not available on this system; callers read instead.
func mapRange(f *dataFile, off, n int64) ([]byte, func(), error) {
	return nil, nil, errors.New("memory mapping not available")
}

// cached is true on this system: nothing is read ahead of the mapping.
func cached(*dataFile, int64, int64) bool { return true }

// readThrough is never called on this system.
func readThrough(*dataFile, int64, int64, int64, func() bool, func(int64)) int64 { return 0 }

// mapWhole is not available on this system.
func mapWhole(f *dataFile, off, n int64) ([]byte, func(), error) {
	return nil, nil, errors.New("memory mapping not available")
}

// populate does nothing on this system.
func populate([]byte) {}

// physicalMemory is 0 on this system: no whole maps (Entry.KeepMaps).
func physicalMemory() int64 { return 0 }
