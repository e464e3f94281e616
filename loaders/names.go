package loaders

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// checkName checks a tensor name taken from inside a file (an .npz member,
// a .safetensors key, a torch.save dict key) or from a file name. graphdiff
// never writes files by these names, but it prints them in reports, pairs
// runs by them and passes them to other tools, so a name must be text and
// must not pretend to be somewhere else:
//
//   - valid UTF-8, so that JSON, JUnit and HTML reports carry it unchanged
//     (encoding/json would silently replace bad bytes with U+FFFD, and two
//     different names could then print alike);
//   - no control characters (NUL, newline, escape...), which would forge
//     lines in text reports or terminal escapes;
//   - not absolute ("/x", `\x`, "C:x") and no ".." component, the shapes
//     of a path-traversal attempt.
func checkName(name string) error {
	switch {
	case !utf8.ValidString(name):
		return fmt.Errorf("name %q is not valid UTF-8", name)
	case !isText(name):
		return fmt.Errorf("name %q contains control characters", name)
	case strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) ||
		len(name) >= 2 && name[1] == ':' && (name[0]|0x20 >= 'a' && name[0]|0x20 <= 'z'):
		return fmt.Errorf("name %q is an absolute path", name)
	}
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return fmt.Errorf("name %q has a '..' component", name)
		}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// isText reports whether s is valid UTF-8 without control characters: safe
// to print as it is.
func isText(s string) bool { return utf8.ValidString(s) && strings.IndexFunc(s, isControl) < 0 }

// errNotUTF8 is returned for text inputs (manifests, policies) that are not
// valid UTF-8.
var errNotUTF8 = errors.New("not valid UTF-8 text")
