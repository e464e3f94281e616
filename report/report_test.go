package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestFloatJSON(t *testing.T) {
	cases := map[float64]string{
		1.5:             "1.5",
		1e-7:            "1e-07",
		math.NaN():      "null",
		math.Inf(1):     `"inf"`,
		math.Inf(-1):    `"-inf"`,
		math.MaxFloat64: "1.7976931348623157e+308",
	}
	for v, want := range cases {
		got, err := json.Marshal(Float(v))
		if err != nil || string(got) != want {
			t.Errorf("Float(%v) = %s, %v; want %s", v, got, err, want)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	if got, want := mdEscape("a|b <i> *x* _y_\nz"), `a\|b &lt;i&gt; \*x\* \_y\_ z`; got != want {
		t.Errorf("mdEscape = %q, want %q", got, want)
	}
	if got, want := mdCode("a`b|c"), `a'b\|c`; got != want {
		t.Errorf("mdCode = %q, want %q", got, want)
	}
}

func TestParseFormat(t *testing.T) {
	if f, err := ParseFormat("junit", CompareFormats...); err != nil || f != JUnit {
		t.Errorf("junit: %v %v", f, err)
	}
	if _, err := ParseFormat("junit", Text, JSON); err == nil || !strings.Contains(err.Error(), "want text, json") {
		t.Errorf("junit for inspect: %v", err)
	}
}
