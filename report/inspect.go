package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/graphdiff/graphdiff/internal/words"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
)

// inspectRenderers are the output formats of `graphdiff inspect`.
var inspectRenderers = renderers[outcome.Inspection]{
	{Text, plain(inspectionText)},
	{JSON, plain(inspectionJSON)},
}

// InspectFormats are the formats of `graphdiff inspect` output.
var InspectFormats = inspectRenderers.formats()

// Inspection writes an inspection in the given format.
func Inspection(w io.Writer, f Format, ins outcome.Inspection) error {
	return inspectRenderers.write(w, f, ins, TextOptions{}, "inspect")
}

// InspectionJSON is the JSON form of an inspection:
//
//	{"path": "...", "run": {...manifest run facts...},
//	 "tensors": [{"name": "grads/fc1.weight", "step": 1, "kind": "grad",
//	              "dtype": "float32", "original_dtype": "bfloat16",
//	              "shape": [64, 32], "file": "step_000001/grads/fc1.weight.npy",
//	              "count": 2048, "min": -0.1, "max": 0.1, "mean": 0.0,
//	              "std": 0.02, "nan": 0, "inf": 0, "zero_fraction": 0.0}],
//	 "errors": [{"path": "...", "member": "...", "message": "..."}]}
//
// step is null for a tensor outside any step; min, max, mean and std are
// null when the tensor has no finite element, zero_fraction when it has no
// element; original_dtype and member appear only when set.
type InspectionJSON struct {
	Path    string            `json:"path"`
	Run     *loaders.RunInfo  `json:"run,omitempty"`
	Tensors []TensorStatsJSON `json:"tensors"`
	Errors  []ErrorJSON       `json:"errors"`
}

// TensorStatsJSON is one tensor of InspectionJSON.
type TensorStatsJSON struct {
	Name          string `json:"name"`
	Step          *int   `json:"step"`
	Kind          string `json:"kind"`
	DType         string `json:"dtype"`
	OriginalDType string `json:"original_dtype,omitempty"`
	Shape         []int  `json:"shape"`
	File          string `json:"file"`
	Member        string `json:"member,omitempty"`
	// Moment is what a tensor of an optimizer's state is (see
	// CompareJSON's), absent for any other.
	Moment       *MomentJSON `json:"moment,omitempty"`
	Count        int64       `json:"count"`
	Min          *float64    `json:"min"`
	Max          *float64    `json:"max"`
	Mean         *float64    `json:"mean"`
	Std          *float64    `json:"std"`
	NaN          int64       `json:"nan"`
	Inf          int64       `json:"inf"`
	ZeroFraction *float64    `json:"zero_fraction"`
}

// ErrorJSON is an input that could not be read.
type ErrorJSON struct {
	Path    string `json:"path"`
	Member  string `json:"member,omitempty"`
	Message string `json:"message"`
}

func inspectionJSON(w io.Writer, ins outcome.Inspection) error {
	out := InspectionJSON{Path: ins.Root, Tensors: []TensorStatsJSON{}, Errors: errorsJSON(ins.Errors)}
	if ins.Manifest != nil {
		out.Run = &ins.Manifest.Run
	}
	for _, t := range ins.Tensors {
		row := TensorStatsJSON{
			Name:   t.Name,
			Step:   stepPtr(t.Step),
			Kind:   string(t.Kind),
			DType:  t.DType.String(),
			Shape:  append([]int{}, t.Shape...),
			File:   t.File,
			Member: t.Member,
			Count:  t.Count,
			NaN:    t.NaN,
			Inf:    t.Inf,

			ZeroFraction: optional(t.ZeroFraction()),
		}
		if t.Original != loaders.Invalid {
			row.OriginalDType = t.Original.String()
		}
		row.Moment = momentJSON(t.Moment)
		if t.Finite > 0 {
			row.Min, row.Max, row.Mean, row.Std = optional(t.Min), optional(t.Max), optional(t.Mean), optional(t.Std())
		}
		out.Tensors = append(out.Tensors, row)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func stepPtr(step int) *int {
	if step == loaders.NoStep {
		return nil
	}
	return &step
}

// errorsJSON lists errors with the file path apart from the message.
func errorsJSON(errs []error) []ErrorJSON {
	out := []ErrorJSON{}
	for _, err := range errs {
		var le *loaders.Error
		if errors.As(err, &le) {
			out = append(out, ErrorJSON{Path: le.Path, Member: le.Member, Message: le.Err.Error()})
		} else {
			out = append(out, ErrorJSON{Message: err.Error()})
		}
	}
	return out
}

func inspectionText(w io.Writer, ins outcome.Inspection) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(ins.Tensors) > 0 {
		fmt.Fprintln(tw, "NAME\tSTEP\tKIND\tDTYPE\tSHAPE\tMIN\tMAX\tMEAN\tSTD\tNAN\tINF\tZEROS")
	}
	steps := map[int]bool{}
	for _, t := range ins.Tensors {
		step := "-"
		if t.Step != loaders.NoStep {
			step = fmt.Sprint(t.Step)
			steps[t.Step] = true
		}
		dtype := t.DType.String()
		if t.Original != loaders.Invalid {
			dtype += " (" + t.Original.String() + ")"
		}
		zeros := "-"
		if t.Count > 0 {
			zeros = fmt.Sprintf("%.1f%%", 100*t.ZeroFraction())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n",
			escape(t.Name), step, t.Kind, dtype, loaders.FormatShape(t.Shape),
			stat(t.Summary, t.Min), stat(t.Summary, t.Max), stat(t.Summary, t.Mean), number(t.Std()),
			t.NaN, t.Inf, zeros)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(ins.Tensors) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, plural(len(ins.Tensors), "tensor"))
	if len(steps) > 0 {
		fmt.Fprintf(w, " in %s", plural(len(steps), "step"))
	}
	if ins.Manifest != nil && ins.Manifest.Run.Name != "" {
		fmt.Fprintf(w, " (run %q)", ins.Manifest.Run.Name)
	}
	fmt.Fprintln(w)
	if len(ins.Errors) > 0 {
		fmt.Fprintf(w, "%s could not be read:\n", plural(len(ins.Errors), "input"))
		for _, err := range ins.Errors {
			fmt.Fprintf(w, "  %s\n", escape(err.Error()))
		}
	}
	return nil
}

// stat formats a statistic of the finite elements, "-" when there are none.
func stat(s compare.Summary, v float64) string {
	if s.Finite == 0 {
		return "-"
	}
	return number(v)
}

// plural says "1 tensor" or "3 tensors".
var plural = words.Plural
