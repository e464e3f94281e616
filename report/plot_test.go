package report

import (
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/loaders"
)

// svgPaths returns the x coordinates of every SVG path stroked in colour
// (upper-case hex, as the SVG writer emits it), one slice per path.
func svgPaths(svg, colour string) [][]float64 {
	re := regexp.MustCompile(`<path d="([^"]*)" style="[^"]*stroke:` + colour + `;[^"]*"`)
	num := regexp.MustCompile(`[ML]([-0-9.e]+),`)
	var out [][]float64
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		var xs []float64
		for _, n := range num.FindAllStringSubmatch(m[1], -1) {
			x, err := strconv.ParseFloat(n[1], 64)
			if err == nil {
				xs = append(xs, x)
			}
		}
		out = append(out, xs)
	}
	return out
}

// TestCurvePlotTellsTheVerdict draws a real break (a learning rate frozen
// at step 500 under fp32 drift) and checks what the plot shows: the
// divergence marker stands at the same x in all three panels (they share
// their step axis), the jump band is not drawn past it, the shift
// statistic's limit is drawn, and the text uses the page's fonts.
func TestCurvePlotTellsTheVerdict(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "testdata", "curves", "drift_then_break_long")
	read := func(run string) *loaders.Curve {
		c, err := loaders.ReadCurve(filepath.Join(dir, run), loaders.CurveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	r := curve.Analyze(read("eager"), read("graph"), curve.DefaultOptions())
	if r.FirstDivergentStep == nil || *r.FirstDivergentStep != 501 {
		t.Fatalf("first divergent step %v, want 501", r.FirstDivergentStep)
	}
	svg, err := CurveSVG(r)
	if err != nil {
		t.Fatal(err)
	}
	// the divergence markers: vertical red lines (two points, equal x)
	var markers []float64
	for _, xs := range svgPaths(svg, "#D62728") {
		if len(xs) == 2 && xs[0] == xs[1] {
			markers = append(markers, xs[0])
		}
	}
	if len(markers) != 3 {
		t.Fatalf("%d divergence markers, want one per panel: %v", len(markers), markers)
	}
	for _, x := range markers[1:] {
		if x != markers[0] {
			t.Errorf("the panels' markers stand at x %v: the step axes are not shared", markers)
		}
	}
	// the band: the longest green path (the legend's sample is short)
	var band []float64
	for _, xs := range svgPaths(svg, "#2CA02C") {
		if len(xs) > len(band) {
			band = xs
		}
	}
	if len(band) < 100 {
		t.Fatalf("band of %d points", len(band))
	}
	if last := band[len(band)-1]; last > markers[0]+0.01 {
		t.Errorf("the band is drawn to x %g, past the divergence at x %g", last, markers[0])
	}
	// the shift statistic's limit: a horizontal dashed red line
	if !strings.Contains(svg, "limit 8") || !strings.Contains(svg, "shift statistic") {
		t.Error("the shift statistic or its limit is not drawn")
	}
	if strings.Contains(svg, "font-family:Liberation Serif") || !strings.Contains(svg, "font-family:"+pageFonts) {
		t.Error("the plot's text does not use the page's fonts")
	}
}

// TestStepTicksOnShortCurves: a curve of six steps gets a labelled tick
// at every step; a long one gets whole-number ticks only.
func TestStepTicksOnShortCurves(t *testing.T) {
	t.Parallel()
	var labels []string
	for _, tk := range (stepTicks{}).Ticks(0, 5) {
		labels = append(labels, tk.Label)
	}
	if strings.Join(labels, ",") != "0,1,2,3,4,5" {
		t.Errorf("ticks of 0..5: %q", labels)
	}
	for _, tk := range (stepTicks{}).Ticks(0, 1199) {
		if tk.Value != float64(int64(tk.Value)) {
			t.Errorf("tick at %g on a step axis", tk.Value)
		}
	}
}

// TestCurvePlotOfDegenerateLosses draws loss curves whose values leave a
// linear axis no range to pad: a constant loss of 2^63 (an int64 loss
// at two steps; 2^63 ± 1 is 2^63 in float64), a constant −10^300, the
// two largest floats apart (their range overflows) and two neighbouring
// floats; and a loss that is NaN at every step, which leaves the panel of
// differences one value to show, its jump band. Each is drawn, without a
// panic or a hang.
func TestCurvePlotOfDegenerateLosses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		values []float64
		b      []float64 // the compared run's values; nil: values
	}{

		{"constant 2^63", []float64{0x1p63, 0x1p63}, nil},
		{"constant -1e300", []float64{-1e300, -1e300, -1e300}, nil},
		{"overflowing range", []float64{-math.MaxFloat64, math.MaxFloat64}, nil},
		{"neighbours", []float64{0x1p63, math.Nextafter(0x1p63, math.Inf(1))}, nil},
		{"constant 1e-300", []float64{1e-300, 1e-300}, nil},
		{"NaN at every step", []float64{math.NaN(), math.NaN()}, nil},
		{"diverged at step 0, no difference after", []float64{math.Inf(1), 0}, []float64{math.NaN(), 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &loaders.Curve{Values: tc.values}
			for i := range tc.values {
				c.Steps = append(c.Steps, int64(i))
			}
			cb := c
			if tc.b != nil {
				cb = &loaders.Curve{Steps: c.Steps, Values: tc.b}
			}
			r := curve.Analyze(c, cb, curve.DefaultOptions())
			done := make(chan error, 1)
			var svg string
			go func() {
				var err error
				svg, err = CurveSVG(r)
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(time.Minute): // it takes milliseconds
				t.Fatal("the plot is still being drawn after a minute")
			}
			if !strings.Contains(svg, "</svg>") {
				t.Errorf("no whole SVG: %.200s", svg)
			}
			if n := len(svgPaths(svg, "#1F77B4")); n < 1 && !math.IsNaN(tc.values[0]) {
				t.Errorf("the reference curve is not drawn (%d paths)", n)
			}
		})
	}
}

// TestLogFloorIsPositive: zero differences are drawn at the log floor, a
// decade under the smallest positive difference, which must stay above
// zero where a tenth of it underflows (a log axis cannot draw 0).
func TestLogFloorIsPositive(t *testing.T) {
	t.Parallel()
	if f := logFloor(&curve.Result{RelDiff: []float64{1e-323, 0}}); !(f > 0) {
		t.Errorf("log floor %g", f)
	}
}
