//go:build darwin || freebsd

package loaders

// mapPopulate is 0: these systems fault pages in as they are touched.
const mapPopulate = 0

// cached is true on these systems: nothing is read ahead of the mapping.
func cached(*dataFile, int64, int64) bool { return true }

// readThrough is never called on these systems.
func readThrough(*dataFile, int64, int64, int64, func() bool, func(int64)) int64 { return 0 }

// populate does nothing on these systems: pages fault in as they are read.
func populate([]byte) {}

// physicalMemory is 0 on these systems: no whole maps (Entry.KeepMaps).
func physicalMemory() int64 { return 0 }
