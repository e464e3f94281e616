package loaders

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Curve is a loss curve: one value per training step, in step order.
type Curve struct {
	// Steps are the steps, strictly increasing; Values[i] is the loss at
	// Steps[i].
	Steps  []int64
	Values []float64
	// Source says where the values came from, for reports: the file, and
	// the column, key or tag read.
	Source string
	// DType is the dtype the values were stored in, Invalid when the
	// format does not say (CSV, JSON lines, TensorBoard).
	DType DType
	// Notes are things the reader skipped or resolved (duplicate steps,
	// rows without the value), for the report.
	Notes []string
}

// CurveOptions choose what to read from formats that hold several series.
type CurveOptions struct {
	// Column is the CSV column of the values; by default the first whose
	// name contains "loss".
	Column string
	// Key is the JSON-lines key of the values; by default "loss", else the
	// first key containing "loss".
	Key string
	// Tag is the TensorBoard scalar tag; by default the first tag
	// containing "loss".
	Tag string
	// Loader options for .npy files and run directories.
	Options
}

// maxCurveFile caps the size of a text curve file read whole (CSV, JSON
// lines): 1 GiB holds tens of millions of rows.
const maxCurveFile = 1 << 30

// ReadCurve reads a loss curve from path:
//   - a 1-D .npy file (index = step);
//   - a .csv file with a header row (the step column is the first named
//     step, global_step, iteration, iter or it; without one, the row
//     index is the step);
//   - a JSON-lines file (.jsonl, .ndjson, .json) of objects with a step
//     key (step, global_step, iteration, iter) and the value key;
//   - a TensorBoard event file (events.out.tfevents.*), or a directory of
//     them;
//   - a run directory: the scalar loss tensor of each step, else its
//     1-D losses.npy, else the TensorBoard event files below it.
//
// Steps that occur twice keep the last value (a resumed run), with a note.
func ReadCurve(path string, opts CurveOptions) (*Curve, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &Error{Path: path, Err: unwrapPathError(err)}
	}
	if st.IsDir() {
		return readCurveDir(path, opts)
	}
	name := strings.ToLower(filepath.Base(path))
	switch {
	case strings.Contains(name, "tfevents"):
		return readTFEventsCurve([]string{path}, path, opts.Tag)
	case strings.HasSuffix(name, ".csv"):
		return readTextCurve(path, opts.Column, parseCSVCurve)
	case strings.HasSuffix(name, ".jsonl"), strings.HasSuffix(name, ".ndjson"), strings.HasSuffix(name, ".json"):
		return readTextCurve(path, opts.Key, parseJSONLCurve)
	}
	return readNPYCurve(path, opts.Options)
}

// readNPYCurve reads a 1-D array whose index is the step.
func readNPYCurve(path string, opts Options) (*Curve, error) {
	ts, memberErrs, err := OpenFile(path, opts)
	if err != nil {
		return nil, err
	}
	if len(memberErrs) > 0 {
		return nil, memberErrs[0]
	}
	if len(ts) != 1 {
		return nil, &Error{Path: path, Err: fmt.Errorf("holds %d arrays; a loss curve is one 1-D array", len(ts))}
	}
	t := ts[0]
	if len(t.Shape) != 1 || t.DType.IsComplex() {
		return nil, &Error{Path: path, Err: fmt.Errorf("a loss curve is a 1-D real array (index = step), not %s %s", t.DType, FormatShape(t.Shape))}
	}
	values, err := t.Values()
	if err != nil {
		return nil, err
	}
	c := &Curve{Source: path, DType: effectiveDType(t), Values: values, Steps: make([]int64, len(values))}
	for i := range c.Steps {
		c.Steps[i] = int64(i)
	}
	return c, nil
}

func effectiveDType(t *Tensor) DType {
	if t.Original != Invalid {
		return t.Original
	}
	return t.DType
}

// readCurveDir reads the curve of a run directory.
func readCurveDir(dir string, opts CurveOptions) (*Curve, error) {
	run, err := Load(dir, opts.Options)
	if err != nil {
		return nil, err
	}
	return CurveOf(run, opts)
}

// CurveOf returns the loss curve of a run directory that Load read: its
// per-step scalar loss tensors, else its 1-D losses.npy, else the
// TensorBoard event files that Load's walk found below it.
func CurveOf(run *Run, opts CurveOptions) (*Curve, error) {
	dir := run.Root
	var losses []*Entry
	for _, e := range run.Entries {
		if e.Kind == KindLoss {
			losses = append(losses, e)
		}
	}
	Resolve(losses) // deferred ones that cannot be read are left out, as Load leaves them
	var perStep []*Entry
	var whole *Entry
	for _, e := range losses {
		if e.Deferred() {
			continue
		}
		switch {
		case e.Step != NoStep && e.Len() == 1 && !e.DType.IsComplex():
			perStep = append(perStep, e)
		case e.Step == NoStep && len(e.Shape) == 1 && whole == nil:
			whole = e
		}
	}
	if len(perStep) > 0 {
		names := map[string]bool{}
		for _, e := range perStep {
			names[e.Name] = true
		}
		if len(names) > 1 {
			return nil, &Error{Path: dir, Err: fmt.Errorf("several per-step loss tensors (%s): point at one file", strings.Join(sortedKeys(names), ", "))}
		}
		c := &Curve{Source: dir + " (" + perStep[0].Name + " of each step)", DType: effectiveDType(perStep[0].Tensor)}
		for _, e := range perStep {
			v, err := e.Tensor.Values()
			if err != nil {
				return nil, err
			}
			c.Steps = append(c.Steps, int64(e.Step))
			c.Values = append(c.Values, v[0])
		}
		return c.normalize(), nil
	}
	if whole != nil {
		c, err := readNPYCurve(filepath.Join(dir, filepath.FromSlash(whole.File)), opts.Options)
		if err == nil {
			c.DType = effectiveDType(whole.Tensor)
		}
		return c, err
	}
	if len(run.events) > 0 {
		return readTFEventsCurve(slices.Sorted(slices.Values(run.events)), dir, opts.Tag)
	}
	return nil, &Error{Path: dir, Err: errors.New("no loss curve found: no per-step loss tensors, no 1-D losses.npy, no TensorBoard event files; point at a .npy, .csv, .jsonl or event file")}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// normalize sorts a curve by step and keeps the last value of a repeated
// step.
func (c *Curve) normalize() *Curve {
	idx := make([]int, len(c.Steps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return c.Steps[idx[i]] < c.Steps[idx[j]] })
	steps := make([]int64, 0, len(idx))
	values := make([]float64, 0, len(idx))
	dups := 0
	for _, i := range idx {
		if n := len(steps); n > 0 && steps[n-1] == c.Steps[i] {
			values[n-1] = c.Values[i]
			dups++
			continue
		}
		steps = append(steps, c.Steps[i])
		values = append(values, c.Values[i])
	}
	if dups > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d steps logged more than once: the last value of each is used", dups))
	}
	c.Steps, c.Values = steps, values
	return c
}

// parseStep reads a step number written as an integer or an integral
// float ("12", "12.0").
func parseStep(v float64) (int64, bool) {
	if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		return 0, false
	}
	return int64(v), true
}

// stepNames are the column or key names read as the step, in preference
// order.
var stepNames = []string{"step", "global_step", "iteration", "iter", "it", "steps", "trainer/global_step"}
