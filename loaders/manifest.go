package loaders

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"unicode/utf8"
)

// ManifestName is the file name of a run's manifest, at the run's root.
const ManifestName = "manifest.json"

// maxManifestSize caps the manifest file; a manifest lists per-tensor
// overrides only, so even 50,000 entries fit well under it.
const maxManifestSize = 64 << 20

// Manifest is the optional manifest.json at the root of a run directory.
// Unknown keys are errors, so a misspelt key never goes unnoticed.
//
//	{
//	  "graphdiff_manifest": 1,
//	  "run": {
//	    "name": "graph", "graphed": true, "torch_version": "2.11.0+cu130",
//	    "device": "NVIDIA H100 80GB HBM3", "compute_dtype": "bfloat16",
//	    "labels": {"optimizer": "Adam(capturable=True)"},
//	    "taps": {"modules": [{"name": "fc1", "type": "Linear"},
//	                         {"name": "drop", "type": "Dropout"}], "grads": true}
//	  },
//	  "tensors": [
//	    {"path": "step_000001/grads/fc1.weight.npy", "dtype": "bfloat16"},
//	    {"path": "step_000001/state.npz", "member": "scale.npy",
//	     "dtype": "float8_e4m3fn", "kind": "tensor"}
//	  ]
//	}
type Manifest struct {
	// Version is the manifest format version; graphdiff reads version 1.
	Version int `json:"graphdiff_manifest"`
	// Run holds facts about the run as a whole.
	Run RunInfo `json:"run"`
	// Tensors overrides what discovery infers for individual files.
	Tensors []ManifestTensor `json:"tensors"`
}

// Taps is what a manifest says of the modules the dump helper tapped: each
// module's output is dumped as activations/NAME (kind activation), and,
// with Grads, the gradient into it as activation_grads/NAME.
type Taps struct {
	// Modules are the tapped modules in the order their forward ran.
	Modules []TapModule `json:"modules"`
	Grads   bool        `json:"grads,omitempty"`
}

// TapModule is one tapped module: its qualified name in the model
// (named_modules) and its class.
type TapModule struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
}

// RunInfo is what a manifest says about the run as a whole.
type RunInfo struct {
	Name         string `json:"name,omitempty"`
	Graphed      *bool  `json:"graphed,omitempty"`
	TorchVersion string `json:"torch_version,omitempty"`
	Device       string `json:"device,omitempty"`
	// ComputeDType is the dtype the math ran in (bfloat16 under autocast,
	// say) when it is narrower than the dumped tensors.
	ComputeDType string `json:"compute_dtype,omitempty"`
	// Labels are free-form facts shown with the run.
	Labels map[string]string `json:"labels,omitempty"`
	// Taps, when the dump helper tapped modules, names them in forward
	// order; nil without taps.
	Taps *Taps `json:"taps,omitempty"`
}

// ManifestTensor overrides discovery for one file, or one member of a
// container. Every field but Path is optional.
type ManifestTensor struct {
	// Path is the file's path relative to the run root, '/'-separated; it
	// may not leave the run ("..", absolute paths).
	Path string `json:"path"`
	// Member is the .npz member or .safetensors key, for containers.
	Member string `json:"member,omitempty"`
	// DType is the tensor's dtype in the training program. When the file
	// stores raw bits of the same width (uint8, int16, uint16, '|V1',
	// '<V2'), they are decoded as DType; when it stores a wider float
	// (bfloat16 upcast to float32), DType is recorded as the original.
	DType string `json:"dtype,omitempty"`
	Kind  string `json:"kind,omitempty"`
	Step  *int   `json:"step,omitempty"`
	Name  string `json:"name,omitempty"`
}

// manifestOverride is a validated ManifestTensor.
type manifestOverride struct {
	dtype DType
	kind  Kind
	step  *int
	name  string
	used  bool
}

// ReadManifest reads and checks a manifest file.
func ReadManifest(file string) (*Manifest, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, &Error{Path: file, Err: unwrapPathError(err)}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestSize+1))
	if err != nil {
		return nil, &Error{Path: file, Err: err}
	}
	if len(data) > maxManifestSize {
		return nil, &Error{Path: file, Err: fmt.Errorf("manifest larger than %d bytes", maxManifestSize)}
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, &Error{Path: file, Err: err}
	}
	return m, nil
}

// ParseManifest decodes and checks manifest JSON.
func ParseManifest(data []byte) (*Manifest, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("bad manifest: %w", errNotUTF8)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("bad manifest: %w", err)
	}
	if dec.More() {
		return nil, errors.New("bad manifest: data after the JSON object")
	}
	if m.Version != 1 {
		return nil, fmt.Errorf("bad manifest: \"graphdiff_manifest\" is %d, graphdiff reads version 1", m.Version)
	}
	if m.Run.ComputeDType != "" {
		if _, err := ParseDType(m.Run.ComputeDType); err != nil {
			return nil, fmt.Errorf("bad manifest: run.compute_dtype: %w", err)
		}
	}
	if _, err := m.overrides(); err != nil {
		return nil, err
	}
	if m.Run.Taps != nil {
		seen := map[string]bool{}
		for i, t := range m.Run.Taps.Modules {
			if t.Name == "" || seen[t.Name] {
				return nil, fmt.Errorf("bad manifest: run.taps.modules[%d]: module name %q empty or given twice", i, t.Name)
			}
			seen[t.Name] = true
		}
	}
	return &m, nil
}

// overrides validates the per-tensor entries and indexes them by path and
// member.
func (m *Manifest) overrides() (map[[2]string]*manifestOverride, error) {
	out := make(map[[2]string]*manifestOverride, len(m.Tensors))
	for i, e := range m.Tensors {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("bad manifest: tensors[%d] (%q): %s", i, e.Path, fmt.Sprintf(format, args...))
		}
		if e.Path == "" {
			return nil, bad("no path")
		}
		clean := path.Clean(e.Path)
		if path.IsAbs(e.Path) || strings.HasPrefix(e.Path, `\`) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(e.Path, `\`) {
			return nil, bad("path must be relative and stay inside the run directory")
		}
		var o manifestOverride
		var err error
		if e.DType != "" {
			if o.dtype, err = ParseDType(e.DType); err != nil {
				return nil, bad("%v", err)
			}
		}
		if e.Kind != "" {
			if o.kind, err = ParseKind(e.Kind); err != nil {
				return nil, bad("%v", err)
			}
		}
		if e.Step != nil && *e.Step < 0 {
			return nil, bad("negative step %d", *e.Step)
		}
		o.step, o.name = e.Step, e.Name
		key := [2]string{clean, e.Member}
		if _, dup := out[key]; dup {
			return nil, bad("listed twice")
		}
		out[key] = &o
	}
	return out, nil
}

// applyDType makes a tensor's dtype what the training program used, as a
// manifest or a flag says: raw bits of the same width are decoded as d; a
// tensor stored in a wider float type records d as its original dtype.
func applyDType(t *Tensor, d DType) error {
	if d == Invalid || d == t.DType {
		return nil
	}
	raw := t.DType.IsInteger() || strings.Contains(t.Descr, "V")
	switch {
	case raw && d.Size() == t.DType.Size():
		t.DType = d
		t.BigEndian = t.BigEndian && d.Size() > 1
		return nil
	case t.DType.IsFloat() && d.IsFloat() && d.Size() < t.DType.Size():
		t.Original = d
		return nil
	}
	return fmt.Errorf("dtype %s (from the manifest) does not fit data stored as %s (%s)", d, t.DType, t.Descr)
}
