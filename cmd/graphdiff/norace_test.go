//go:build !race

package main

// raceDetector reports whether the test binary was built with the race
// detector (-race), which makes reading large inputs many times slower.
const raceDetector = false
