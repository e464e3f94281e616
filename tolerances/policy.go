package tolerances

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/graphdiff/graphdiff/loaders"
)

// Policy is an ordered list of rules read from a YAML file. Every rule
// whose match fits a tensor applies, in file order: a later rule's fields
// override an earlier one's, so general rules go first and exceptions
// after. Unknown keys are errors.
//
//	# graphdiff policy
//	rules:
//	  - match: {kind: grad, dtype: bfloat16}   # all bf16 gradients
//	    rtol: 2e-2
//	    max_rel_l2: 0.05
//	  - match: {name: "params/**.bias"}        # glob over the tensor name
//	    atol: 1e-4
//	  - match: {name: "inputs/*"}
//	    ignore: true                           # not compared, listed as ignored
//	run:                                       # the run-level rules (RunOverrides)
//	  grad: 40
//
// A match may name a glob over the tensor name ("*" within one '/'
// component, "**" across components, "?" one character, "[...]" a class), a
// kind (loss, grad, param, input, output, tensor) and a dtype (the
// comparison dtype, see Resolve); a rule with an empty match applies to
// every tensor.
type Policy struct {
	Rules []Rule `yaml:"rules"`
	// Run overrides the run-level rules (RunRules); nil keeps them.
	Run *RunOverrides `yaml:"run"`
}

// Rule sets some of a tensor's settings.
type Rule struct {
	Match               Match    `yaml:"match"`
	RTol                *float64 `yaml:"rtol"`
	ATol                *float64 `yaml:"atol"`
	MaxRelL2            *float64 `yaml:"max_rel_l2"`
	MaxMismatchFraction *float64 `yaml:"max_mismatch_fraction"`
	Ignore              *bool    `yaml:"ignore"`
	// FailOnDTypeChange fails the matched pairs whose sides are stored in
	// different dtypes (they are compared in the coarser otherwise).
	FailOnDTypeChange *bool `yaml:"fail_on_dtype_change"`

	name  *regexp.Regexp
	kind  loaders.Kind
	dtype loaders.DType
}

// Match selects tensors; empty fields match anything.
type Match struct {
	Name  string `yaml:"name"`
	Kind  string `yaml:"kind"`
	DType string `yaml:"dtype"`
}

// maxPolicySize caps a policy file.
const maxPolicySize = 4 << 20

// ReadPolicy reads and checks a policy file.
func ReadPolicy(file string) (*Policy, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPolicySize+1))
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", file, err)
	}
	if len(data) > maxPolicySize {
		return nil, fmt.Errorf("policy %s: larger than %d bytes", file, maxPolicySize)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", file, err)
	}
	return p, nil
}

// maxTypeErrors is how many of a policy's field errors a message lists
// (one more is listed rather than counted).
const maxTypeErrors = 5

// typeErrors makes the field errors of a policy that does not decode one
// line, each error once (an alias expanded many times repeats its own),
// the first maxTypeErrors and how many more.
func typeErrors(errs []string) error {
	errs = slices.Compact(slices.Clone(errs))
	if n := len(errs) - maxTypeErrors; n > 1 { // "and 1 more" would hide as much as it says
		errs = append(errs[:maxTypeErrors], fmt.Sprintf("and %d more", n))
	}
	return fmt.Errorf("yaml: %s", strings.Join(errs, "; "))
}

// ParsePolicy decodes and checks policy YAML.
func ParsePolicy(data []byte) (*Policy, error) {
	var p Policy
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return nil, typeErrors(te.Errors)
		}
		return nil, err
	}
	if err := p.Run.check(); err != nil {
		return nil, err
	}
	if len(p.Rules) > maxRules {
		return nil, fmt.Errorf("%d rules (at most %d): every tensor is matched against each", len(p.Rules), maxRules)
	}
	for i := range p.Rules {
		r := &p.Rules[i]
		bad := func(format string, args ...any) error {
			return fmt.Errorf("rule %d: %s", i+1, fmt.Sprintf(format, args...))
		}
		var err error
		if r.Match.Name != "" {
			if len(r.Match.Name) > maxGlobLen {
				return nil, bad("name %s: a glob of %d bytes (at most %d)", quoteShort(r.Match.Name), len(r.Match.Name), maxGlobLen)
			}
			if r.name, err = globRegexp(r.Match.Name); err != nil {
				return nil, bad("name %s: %v", quoteShort(r.Match.Name), err)
			}
		}
		if r.Match.Kind != "" {
			if r.kind, err = loaders.ParseKind(r.Match.Kind); err != nil {
				return nil, bad("%v", err)
			}
		}
		if r.Match.DType != "" {
			if r.dtype, err = loaders.ParseDType(r.Match.DType); err != nil {
				return nil, bad("%v", err)
			}
		}
		for _, v := range []struct {
			key string
			val *float64
			max float64
		}{{"rtol", r.RTol, 1e300}, {"atol", r.ATol, 1e300}, {"max_rel_l2", r.MaxRelL2, 1e300}, {"max_mismatch_fraction", r.MaxMismatchFraction, 1}} {
			if v.val != nil && !(*v.val >= 0 && *v.val <= v.max) {
				return nil, bad("%s must be between 0 and %g, not %g", v.key, v.max, *v.val)
			}
		}
	}
	return &p, nil
}

// maxRules caps a policy's rules: each tensor of a comparison is matched
// against every rule, first to last, and a policy of a few dozen rules is
// a large one.
const maxRules = 1024

// maxGlobLen caps a rule's name glob, checked before it is compiled: a
// tensor's name is a path of a few hundred bytes at most, and a glob of
// megabytes compiles to a regular expression of gigabytes.
const maxGlobLen = 4096

// quoteShort quotes s for a message, its first 64 bytes and how many more
// when it is longer.
func quoteShort(s string) string {
	const show = 64
	if len(s) <= show {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s... (%d bytes more)", strconv.Quote(strings.ToValidUTF8(s[:show], "")), len(s)-show)
}

// globRegexp compiles a name glob: "**" matches anything, "*" anything but
// '/', "?" one character but '/', "[...]" a character class.
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			if i+1 < len(glob) && glob[i+1] == '*' {
				b.WriteString(".*")
				i++
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '[':
			j := strings.IndexByte(glob[i:], ']')
			if j < 0 {
				return nil, errors.New("unclosed '['")
			}
			class := glob[i+1 : i+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

func (r *Rule) matches(name string, kind loaders.Kind, dtype loaders.DType) bool {
	return (r.name == nil || r.name.MatchString(name)) &&
		(r.kind == "" || r.kind == kind) &&
		(r.dtype == loaders.Invalid || r.dtype == dtype)
}
