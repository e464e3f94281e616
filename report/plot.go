package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/graphdiff/graphdiff/curve"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot colours: the reference in blue, the compared run in orange, the
// difference in dark grey, the noise band in green, the divergence in red.
var (
	colorA      = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colorB      = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	colorDiff   = color.RGBA{R: 0x44, G: 0x44, B: 0x44, A: 0xff}
	colorBand   = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	colorBreak  = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	plotWidth   = 10 * vg.Inch
	plotHeight  = 6.5 * vg.Inch
	maxPlotted  = 4000 // points per series; longer curves are reduced by min/max buckets
	diffSubtext = "|b − a| / |a|, log scale"
)

// PlotFormat returns the plot format a file name asks for: "svg" or
// "png", or an error.
func PlotFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return "svg", nil
	case ".png":
		return "png", nil
	}
	return "", fmt.Errorf("plot %s: want a .svg or .png file name", path)
}

// CurvePlot draws both curves (top) and their relative difference on a log
// scale with the noise band and a marker at the divergence (bottom), in
// format "svg" or "png".
func CurvePlot(w io.Writer, r *curve.Result, format string) error {
	top, bottom, err := curvePlots(r)
	if err != nil {
		return err
	}
	var c draw.Canvas
	var out io.WriterTo
	switch format {
	case "svg":
		sc := vgsvg.New(plotWidth, plotHeight)
		c, out = draw.New(sc), sc
	case "png":
		ic := vgimg.NewWith(vgimg.UseWH(plotWidth, plotHeight), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))
		c, out = draw.New(ic), vgimg.PngCanvas{Canvas: ic}
	default:
		return fmt.Errorf("unknown plot format %q", format)
	}
	// the curves take the upper half, the difference the lower
	upper := c
	upper.Min.Y = c.Min.Y + 0.47*(c.Max.Y-c.Min.Y)
	lower := c
	lower.Max.Y = c.Min.Y + 0.45*(c.Max.Y-c.Min.Y)
	top.Draw(upper)
	bottom.Draw(lower)
	_, err = out.WriteTo(w)
	return err
}

// CurveSVG returns the plot as SVG text, for embedding in HTML.
func CurveSVG(r *curve.Result) (string, error) {
	var b bytes.Buffer
	if err := CurvePlot(&b, r, "svg"); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:] // drop the XML prologue inside HTML
	}
	return s, nil
}

func curvePlots(r *curve.Result) (*plot.Plot, *plot.Plot, error) {
	top := plot.New()
	top.Title.Text = "loss"
	top.X.Label.Text = "step"
	top.X.Tick.Marker = stepTicks{}
	top.Legend.Top = true
	top.Add(plotter.NewGrid())
	a, b := xys(r.Steps, r.ValuesA, false), xys(r.Steps, r.ValuesB, false)
	la, err := plotter.NewLine(a)
	if err != nil {
		return nil, nil, err
	}
	la.Color, la.Width = colorA, vg.Points(1.4)
	lb, err := plotter.NewLine(b)
	if err != nil {
		return nil, nil, err
	}
	lb.Color, lb.Width = colorB, vg.Points(1.1)
	lb.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	top.Add(la, lb)
	top.Legend.Add("reference (eager)", la)
	top.Legend.Add("compared (graph)", lb)

	bottom := plot.New()
	bottom.Title.Text = "relative difference"
	bottom.X.Label.Text = "step"
	bottom.X.Tick.Marker = stepTicks{}
	bottom.Y.Label.Text = diffSubtext
	bottom.Y.Scale = plot.LogScale{}
	bottom.Y.Tick.Marker = decadeTicks{}
	bottom.Legend.Top = true
	bottom.Legend.Left = true
	bottom.Legend.XOffs = vg.Points(8)
	bottom.Add(plotter.NewGrid())
	floor := logFloor(r)
	d := xys(r.Steps, clampLog(r.RelDiff, floor), true)
	ld, err := plotter.NewLine(d)
	if err != nil {
		return nil, nil, err
	}
	ld.Color, ld.Width = colorDiff, vg.Points(1)
	band := xys(r.Steps, clampLog(r.Band, floor), true)
	lband, err := plotter.NewLine(band)
	if err != nil {
		return nil, nil, err
	}
	lband.Color, lband.Width = colorBand, vg.Points(1.4)
	lband.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	bottom.Add(lband, ld)
	bottom.Legend.Add("noise band", lband)
	bottom.Legend.Add("difference", ld)
	if r.FirstDivergentStep != nil {
		x := float64(*r.FirstDivergentStep)
		loT, hiT := span(r.ValuesA, r.ValuesB)
		_, hiB := span(r.RelDiff, r.Band)
		for _, p := range []*plot.Plot{top, bottom} {
			lo, hi := loT, hiT
			if p == bottom {
				lo, hi = floor, hiB
			}
			m, err := plotter.NewLine(plotter.XYs{{X: x, Y: lo}, {X: x, Y: hi}})
			if err != nil {
				return nil, nil, err
			}
			m.Color, m.Width = colorBreak, vg.Points(1.6)
			p.Add(m)
			if p == bottom {
				p.Legend.Add(fmt.Sprintf("divergence at step %d", *r.FirstDivergentStep), m)
			}
		}
	}
	return top, bottom, nil
}

// span returns the smallest and largest finite values of the series.
func span(series ...[]float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, vs := range series {
		for _, v := range vs {
			if isPlottable(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 0) {
		return 0, 1
	}
	return lo, hi
}

// logFloor is where zero differences are drawn on the log axis: a decade
// under the smallest positive value shown.
func logFloor(r *curve.Result) float64 {
	m := math.Inf(1)
	for _, s := range [][]float64{r.RelDiff, r.Band} {
		for _, v := range s {
			if v > 0 && !math.IsInf(v, 0) {
				m = math.Min(m, v)
			}
		}
	}
	if math.IsInf(m, 1) {
		return 1e-12
	}
	return m / 10
}

func clampLog(vs []float64, floor float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		switch {
		case v != v:
			out[i] = math.NaN()
		case math.IsInf(v, 1):
			out[i] = math.NaN()
		case v < floor:
			out[i] = floor
		default:
			out[i] = v
		}
	}
	return out
}

// xys turns a series into plot points, dropping non-finite values and
// reducing long series to min and max per bucket (keepMax alone for
// differences, where the peaks matter).
func xys(steps []int64, vs []float64, keepMax bool) plotter.XYs {
	n := len(steps)
	pts := make(plotter.XYs, 0, min(n, 2*maxPlotted))
	if n <= maxPlotted {
		for i := range n {
			if isPlottable(vs[i]) {
				pts = append(pts, plotter.XY{X: float64(steps[i]), Y: vs[i]})
			}
		}
		return pts
	}
	buckets := maxPlotted / 2
	for b := range buckets {
		lo, hi := b*n/buckets, (b+1)*n/buckets
		iMin, iMax := -1, -1
		for i := lo; i < hi; i++ {
			if !isPlottable(vs[i]) {
				continue
			}
			if iMin < 0 || vs[i] < vs[iMin] {
				iMin = i
			}
			if iMax < 0 || vs[i] > vs[iMax] {
				iMax = i
			}
		}
		switch {
		case iMax < 0:
		case keepMax || iMin == iMax:
			pts = append(pts, plotter.XY{X: float64(steps[iMax]), Y: vs[iMax]})
		case iMin < iMax:
			pts = append(pts, plotter.XY{X: float64(steps[iMin]), Y: vs[iMin]}, plotter.XY{X: float64(steps[iMax]), Y: vs[iMax]})
		default:
			pts = append(pts, plotter.XY{X: float64(steps[iMax]), Y: vs[iMax]}, plotter.XY{X: float64(steps[iMin]), Y: vs[iMin]})
		}
	}
	return pts
}

func isPlottable(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// decadeTicks labels a log axis at powers of ten ("1e-05"), with unlabelled
// minor ticks between them when the range spans few decades.
type decadeTicks struct{}

// Ticks implements plot.Ticker.
func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	e0, e1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	step := max(1, (e1-e0+7)/8) // at most about 8 labels
	var ticks []plot.Tick
	for e := e0; e <= e1; e++ {
		v := math.Pow10(e)
		if e%step == 0 && v >= lo && v <= hi {
			ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprintf("%.0e", v)})
		} else if v >= lo && v <= hi {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	return ticks
}

// stepTicks labels a step axis with whole numbers only.
type stepTicks struct{}

// Ticks implements plot.Ticker.
func (stepTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value != math.Trunc(t.Value) {
			continue
		}
		if t.Label != "" {
			t.Label = fmt.Sprintf("%d", int64(t.Value))
		}
		out = append(out, t)
	}
	return out
}
