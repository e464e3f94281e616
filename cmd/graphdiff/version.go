package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is the release version; builds from a tagged module (go install
// ...@vX.Y.Z) report the module version instead, and -ldflags
// "-X main.version=..." overrides both.
var version = ""

// versionString returns the version line: the release or module version,
// the VCS revision when the build recorded one, and the Go version.
func versionString() string {
	v, rev := version, ""
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = s.Value[:12]
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	if rev != "" {
		v += " (" + rev + ")"
	}
	return fmt.Sprintf("%s %s/%s %s", v, runtime.GOOS, runtime.GOARCH, runtime.Version())
}
