package check

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/graphdiff/graphdiff/loaders"
)

// The mistakes in what a comparison was given that Runs finds before it
// compares anything: each would otherwise be compared and answered with a
// confident diagnosis of a bug that is not there (a side with nothing in
// it reads as a run cut short, swapped runs turn a lag into frozen random
// values). Package cmd/graphdiff words them as usage errors.

// FileAndDirectory is the error of Runs for a file compared with a
// directory: the file's tensors are named by their members, the
// directory's by their paths and steps, so that nothing pairs.
type FileAndDirectory struct {
	File, Dir string
	// FileFirst is set when the file is the first run (the reference).
	FileFirst bool
}

func (e *FileAndDirectory) Error() string {
	if e.FileFirst {
		return fmt.Sprintf("%s is a file and %s a directory: compare two run directories, or two files", e.File, e.Dir)
	}
	return fmt.Sprintf("%s is a directory and %s a file: compare two run directories, or two files", e.Dir, e.File)
}

// NoTensors is the error of Runs for a run that holds no tensor at all
// (an empty directory, one of other files, a container with no member)
// and whose files all could be read.
type NoTensors struct {
	Path string
	// First is set for the first run (the reference).
	First bool
}

func (e *NoTensors) Error() string {
	if loaders.IsFile(e.Path) {
		return fmt.Sprintf("%s holds no tensors", e.Path)
	}
	return fmt.Sprintf("%s holds no tensor files (.npy, .npz, .safetensors, .pt, a torch.save .bin)", e.Path)
}

// SwappedRuns is the error of Runs and Curves for runs given in the wrong
// order: the first run's manifest says it is the graphed run and the
// second's that it is the eager one. Options.ReferenceGraphed (and
// CurvesOptions.ReferenceGraphed) accepts the order.
type SwappedRuns struct{ Graphed, Eager string }

func (e *SwappedRuns) Error() string {
	return fmt.Sprintf("%s is the graphed run and %s the eager one, as their manifests say (run.graphed)", e.Graphed, e.Eager)
}

// RenameError is the error of Runs for a rename (Options.Renames) that
// renames no tensor of the first run (Run), or that gives two of its
// tensors one name (Err is then a *loaders.RenameCollision).
type RenameError struct {
	Rename loaders.Rename
	Run    string
	Err    error
}

func (e *RenameError) Error() string {
	return fmt.Sprintf("rename %s: %v (in %s)", e.Rename, e.Err, e.Run)
}

func (e *RenameError) Unwrap() error { return e.Err }

// checkPaths refuses a file compared with a directory, before either is
// loaded. Paths that cannot be looked at are left to loading, which says
// why.
func checkPaths(pathA, pathB string) error {
	sa, errA := os.Stat(pathA)
	sb, errB := os.Stat(pathB)
	if errA != nil || errB != nil || sa.IsDir() == sb.IsDir() {
		return nil
	}
	if sa.IsDir() {
		return &FileAndDirectory{File: pathB, Dir: pathA}
	}
	return &FileAndDirectory{File: pathA, Dir: pathB, FileFirst: true}
}

// checkRuns refuses two loaded runs that cannot be compared as given: a
// run with nothing in it (no tensor, and no file that failed to be read,
// which the comparison would report), or runs in the wrong order as their
// manifests say, unless opts accept it.
func checkRuns(a, b *loaders.Run, opts Options) error {
	for i, r := range []*loaders.Run{a, b} {
		if len(r.Entries) == 0 && len(r.Unreadable) == 0 && len(r.Errors) == 0 {
			return &NoTensors{Path: r.Root, First: i == 0}
		}
	}
	return checkOrder(a, b, opts.ReferenceGraphed)
}

// checkOrder refuses runs in the wrong order as their manifests say, the
// first graphed and the second eager, unless referenceGraphed accepts it.
func checkOrder(a, b *loaders.Run, referenceGraphed bool) error {
	if graphed(a) == yes && graphed(b) == no && !referenceGraphed {
		return &SwappedRuns{Graphed: a.Root, Eager: b.Root}
	}
	return nil
}

// said is what a manifest says of a fact: nothing, yes or no.
type said int

const (
	unsaid said = iota
	yes
	no
)

// graphed is what run r's manifest says of its being the graphed run.
func graphed(r *loaders.Run) said {
	switch {
	case r.Manifest == nil || r.Manifest.Run.Graphed == nil:
		return unsaid
	case *r.Manifest.Run.Graphed:
		return yes
	}
	return no
}

// renameRun renames the tensors of the first run a by renames (see
// loaders.RenameEntries); a rename that renames none of them is an error,
// as a misspelt name would otherwise leave the runs unpaired without a
// word.
func renameRun(a *loaders.Run, renames []loaders.Rename) error {
	done, err := loaders.RenameEntries(a, renames)
	if c, ok := errors.AsType[*loaders.RenameCollision](err); ok {
		return &RenameError{Rename: c.Rename, Run: a.Root, Err: err}
	}
	if err != nil {
		return err
	}
	for _, d := range done {
		if d.Tensors == 0 {
			return &RenameError{Rename: d.Rename, Run: a.Root,
				Err: fmt.Errorf("no tensor name holds %s as whole '/'-separated components%s", d.Old, closeNames(a, d.Old))}
		}
	}
	return nil
}

// closeNames lists, for an error, up to three names of run r that hold
// old as part of a component: what a rename meant where it did not
// name whole components.
func closeNames(r *loaders.Run, old string) string {
	var found []string
	seen := map[string]bool{}
	for _, e := range r.Entries {
		if strings.Contains(e.Name, old) && !seen[e.Name] && len(found) < 3 {
			seen[e.Name] = true
			found = append(found, e.Name)
		}
	}
	if len(found) == 0 {
		return ""
	}
	return " (it is part of " + strings.Join(found, ", ") + ")"
}
