package loaders

import (
	"fmt"
	"os"
)

// RecoverFault turns a fault on a memory map into a read error. A function
// that reads maps of ts, with debug.SetPanicOnFault(true) in force on its
// goroutine, defers it:
//
//	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
//	defer loaders.RecoverFault(&err, a, b)
//
// A map of a file that shrank after it was mapped (truncated, or rewritten
// in place by a training job still running) faults with SIGBUS when a page
// past the new end is read; with SetPanicOnFault the runtime raises a
// panic whose value is a runtime.Error with an Addr method instead of
// crashing. RecoverFault sets *err to an *Error naming the first of ts
// whose file no longer holds its data (all of ts, joined by " or ", when
// none is found short: the file may have been replaced). A panic of any
// other kind, a nil dereference among them (a fault below the first page
// has no Addr), is raised again unchanged.
func RecoverFault(err *error, ts ...*Tensor) {
	p := recover()
	if p == nil {
		return
	}
	fault, ok := p.(interface {
		error
		Addr() uintptr
	})
	if !ok {
		panic(p)
	}
	path := ""
	for _, t := range ts {
		if t != nil && t.shrunk() {
			path = t.Path
			break
		}
	}
	if path == "" {
		for _, t := range ts {
			if t == nil {
				continue
			}
			if path != "" {
				path += " or "
			}
			path += t.Path
		}
	}
	*err = &Error{Path: path, Err: fmt.Errorf("file changed while being read (truncated or rewritten?): fault at address %#x", fault.Addr())}
}

// shrunk reports whether t's file, mapped in place, now ends before t's
// data does, or cannot be found.
func (t *Tensor) shrunk() bool {
	if t.data.file == "" {
		return false
	}
	st, err := os.Stat(t.data.file)
	return err != nil || st.Size() < t.data.offset+t.data.size
}
