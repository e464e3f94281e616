//go:build darwin || freebsd

package loaders

// mapFlags are the flags of a mapping beyond MAP_SHARED: none on these
// systems, which fault pages in as they are touched.
func mapFlags() int { return 0 }

// populate does nothing on these systems.
func populate([]byte) {}

// cached is true on these systems: nothing is read ahead of the mapping.
func cached(*dataFile, int64, int64) bool { return true }

// readThrough is never called on these systems.
func readThrough(*dataFile, int64, int64, func() bool, func(int64)) {}
