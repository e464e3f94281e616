//go:build darwin || freebsd

package loaders

// mapPopulate is 0: these systems fault pages in as they are touched.
const mapPopulate = 0
