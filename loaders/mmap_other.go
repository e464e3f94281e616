//go:build !(linux || darwin || freebsd)

package loaders

import "errors"

// mapRange is not available on this system; callers read instead.
func mapRange(path string, off, n int64) ([]byte, func(), error) {
	return nil, nil, errors.New("memory mapping not available")
}
