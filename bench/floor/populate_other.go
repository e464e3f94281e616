//go:build unix && !linux

package main

// mapPopulate is 0: pages fault in as they are read.
const mapPopulate = 0
