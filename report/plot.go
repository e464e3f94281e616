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
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot colours: the reference in blue, the compared run in orange, the
// difference in dark grey, the jump band in green, the divergence and the
// shift statistic's limit in red.
var (
	colorA      = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colorB      = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	colorDiff   = color.RGBA{R: 0x44, G: 0x44, B: 0x44, A: 0xff}
	colorBand   = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	colorBreak  = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	plotWidth   = 10 * vg.Inch
	plotHeight  = 8 * vg.Inch
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

// The plots' typeface is Liberation Sans, metric-compatible with Arial,
// which the HTML page names after it, so that text measured for the SVG
// fits as the browser draws it. Set before any plot is made.
func init() { plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"} }

// CurvePlot draws, over one step axis shared by three aligned panels: both
// curves (on a log scale when they span more than two decades); their
// relative difference on a log scale, with the jump band up to the first
// divergent step (after it the band is no threshold any more) and a marker
// there; and the shift statistic T with its limit. Format "svg" or "png".
func CurvePlot(w io.Writer, r *curve.Result, format string) error {
	panels, err := curvePlots(r)
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
	for i, cv := range alignPanels(panels, c, []float64{0.44, 0.33, 0.23}) {
		panels[i].Draw(cv)
	}
	_, err = out.WriteTo(w)
	return err
}

// alignPanels splits c into stacked canvases of the given height shares
// (top first) and narrows each so that every panel's data area spans the
// same x range on the page: the panels share their step axis.
func alignPanels(ps []*plot.Plot, c draw.Canvas, shares []float64) []draw.Canvas {
	out := make([]draw.Canvas, len(ps))
	top := c.Max.Y
	h := c.Max.Y - c.Min.Y
	gap := vg.Length(0.035) * h // between a panel's step axis and the next one's title
	avail := h - gap*vg.Length(len(ps)-1)
	for i := range ps {
		cv := c
		cv.Max.Y = top
		cv.Min.Y = top - vg.Length(shares[i])*avail
		top = cv.Min.Y - gap
		out[i] = cv
	}
	var left, right vg.Length
	for i, p := range ps {
		d := p.DataCanvas(out[i])
		left = max(left, d.Min.X-out[i].Min.X)
		right = max(right, out[i].Max.X-d.Max.X)
	}
	for i, p := range ps {
		d := p.DataCanvas(out[i])
		out[i].Min.X += left - (d.Min.X - out[i].Min.X)
		out[i].Max.X -= right - (out[i].Max.X - d.Max.X)
	}
	return out
}

// pageFonts is the HTML reports' font stack, the plots' typeface first.
const pageFonts = `'Liberation Sans', Arial, Helvetica, sans-serif`

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
	// the page's fonts: Liberation Sans where installed, else Arial, whose
	// metrics are the same
	return strings.ReplaceAll(s, "font-family:Liberation Sans", "font-family:"+pageFonts), nil
}

func curvePlots(r *curve.Result) ([]*plot.Plot, error) {
	xmin, xmax := 0.0, 1.0
	if n := len(r.Steps); n > 0 {
		xmin, xmax = float64(r.Steps[0]), float64(r.Steps[n-1])
		if xmax == xmin {
			xmax = xmin + 1
		}
	}
	newPanel := func(title, ylabel string) *plot.Plot {
		p := plot.New()
		p.Title.Text = title
		p.Y.Label.Text = ylabel
		p.X.Tick.Marker = stepTicks{}
		p.X.Min, p.X.Max = xmin, xmax
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
		return p
	}
	divergence := divergenceIndex(r)

	top := newPanel("loss", "loss")
	loT, hiT := span(r.ValuesA, r.ValuesB)
	logLoss := loT > 0 && hiT/loT > 100
	if logLoss {
		top.Y.Scale = plot.LogScale{}
		top.Y.Tick.Marker = decadeTicks{}
		top.Y.Label.Text = "loss, log scale"
	}
	a, b := xys(r.Steps, r.ValuesA, false), xys(r.Steps, r.ValuesB, false)
	la, err := plotter.NewLine(a)
	if err != nil {
		return nil, err
	}
	la.Color, la.Width = colorA, vg.Points(1.4)
	lb, err := plotter.NewLine(b)
	if err != nil {
		return nil, err
	}
	lb.Color, lb.Width = colorB, vg.Points(1.1)
	lb.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	top.Add(la, lb)
	if !logLoss {
		top.Y.Min, top.Y.Max = linearRange(loT, hiT)
	}
	top.Legend.Add("reference (eager)", la)
	top.Legend.Add("compared (graph)", lb)

	mid := newPanel("relative difference", diffSubtext)
	mid.Y.Scale = plot.LogScale{}
	mid.Y.Tick.Marker = decadeTicks{}
	mid.Legend.Left = true
	mid.Legend.XOffs = vg.Points(8)
	floor := logFloor(r)
	d := xys(r.Steps, clampLog(r.RelDiff, floor), true)
	ld, err := plotter.NewLine(d)
	if err != nil {
		return nil, err
	}
	ld.Color, ld.Width = colorDiff, vg.Points(1)
	// the band is drawn where it was the threshold: up to the first
	// divergent step, and at it only when a jump over it broke the curves
	bandTo := len(r.Steps)
	if divergence >= 0 {
		bandTo = divergence
		if r.Pattern == curve.PatternSudden {
			bandTo++
		}
	}
	mid.Add(ld)
	if band := xys(r.Steps[:bandTo], clampLog(r.Band[:bandTo], floor), true); len(band) > 0 {
		lband, err := plotter.NewLine(band)
		if err != nil {
			return nil, err
		}
		lband.Color, lband.Width = colorBand, vg.Points(1.4)
		lband.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		mid.Add(lband)
		bandLabel := "jump band"
		if divergence >= 0 {
			bandLabel = "jump band (up to the divergence)"
		}
		mid.Legend.Add(bandLabel, lband)
	}
	if b := r.Baseline; b != nil && !b.Identical && b.Limit > 0 && isPlottable(b.Limit) {
		lb, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: max(b.Limit, floor)}, {X: xmax, Y: max(b.Limit, floor)}})
		if err != nil {
			return nil, err
		}
		lb.Color, lb.Width = colorBreak, vg.Points(1)
		lb.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		mid.Add(lb)
		mid.Legend.Add(fmt.Sprintf("baseline limit %.3g (3× its largest difference + one unit)", b.Limit), lb)
	}
	mid.Legend.Add("difference", ld)

	low := newPanel("shift statistic", "T, log scale")
	low.X.Label.Text = "step"
	low.Y.Scale = plot.LogScale{}
	low.Y.Tick.Marker = decadeTicks{}
	low.Legend.Left = true
	low.Legend.XOffs = vg.Points(8)
	tFloor := 1e-2
	lt, err := plotter.NewLine(xys(r.Steps, clampLog(r.Level, tFloor), true))
	if err != nil {
		return nil, err
	}
	lt.Color, lt.Width = colorDiff, vg.Points(1)
	limit := r.Options.Level
	ll, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: limit}, {X: xmax, Y: limit}})
	if err != nil {
		return nil, err
	}
	ll.Color, ll.Width = colorBreak, vg.Points(1)
	ll.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	low.Add(lt, ll)
	tLabel := fmt.Sprintf("T: mean difference over %d steps / standard error of the reference's step noise", r.Options.Window)
	if len(r.Steps) <= r.Options.Window {
		tLabel = fmt.Sprintf("T: needs more than %d steps", r.Options.Window)
	}
	low.Legend.Add(tLabel, lt)
	low.Legend.Add(fmt.Sprintf("limit %g", limit), ll)
	_, hiL := span(r.Level)
	low.Y.Min, low.Y.Max = tFloor, max(10*limit, hiL*2)

	if divergence >= 0 {
		x := float64(*r.FirstDivergentStep)
		// the marker stands on the log panel of differences: from the
		// floor to at least a decade above it (the differences may be 0)
		_, hiB := span(r.RelDiff, r.Band[:bandTo])
		hiB = max(hiB, 10*floor)
		if b := r.Baseline; b != nil && isPlottable(b.Limit) {
			hiB = max(hiB, b.Limit)
		}
		for _, p := range []struct {
			p      *plot.Plot
			lo, hi float64
		}{{top, loT, hiT}, {mid, floor, hiB}, {low, tFloor, low.Y.Max}} {
			m, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.lo}, {X: x, Y: p.hi}})
			if err != nil {
				return nil, err
			}
			m.Color, m.Width = colorBreak, vg.Points(1.6)
			p.p.Add(m)
			if p.p == mid {
				p.p.Legend.Add(fmt.Sprintf("divergence at step %d", *r.FirstDivergentStep), m)
			}
		}
	}
	for _, p := range []*plot.Plot{mid, low} {
		p.Y.Min, p.Y.Max = logRange(p.Y.Min, p.Y.Max)
	}
	return []*plot.Plot{top, mid, low}, nil
}

// linearRange returns the range of a linear axis over values from lo to
// hi, where gonum's axis would draw none. It widens an empty range by ±1,
// which leaves one at 2^53 or beyond as empty as it was, and its ticks of
// an empty range panic: a constant loss of 2^63 (an int64 loss) or
// −10^300 stopped the report. Here an empty range is widened by a
// thousandth of its magnitude (±1 under 1000), within the finite floats.
// Its ticks of a range wider than the largest float never end (a loss of
// −10^308 at one step and 10^308 at another): the axis then spans the
// middle half of the values' range, and the curves run off it.
func linearRange(lo, hi float64) (float64, float64) {
	switch {
	case math.IsInf(hi-lo, 1):
		return lo / 2, hi / 2
	case lo < hi:
		return lo, hi
	}
	pad := max(math.Abs(lo)/1000, 1)
	return math.Max(lo-pad, -math.MaxFloat64), math.Min(hi+pad, math.MaxFloat64)
}

// logRange returns the range of a log axis over positive values from lo
// to hi (lo > hi when it holds none), where gonum's axis would draw none:
// it widens an empty range by ±1, below zero, where a log scale panics (a
// loss that is NaN at every step left the difference panel its jump band
// alone, one value), and it makes an infinite end zero. Here an empty
// range spans a decade on either side of its value, an axis without
// values the decade up to 1, and an infinite end is the largest float.
func logRange(lo, hi float64) (float64, float64) {
	hi = math.Min(hi, math.MaxFloat64)
	switch {
	case !(lo > 0) || !(hi >= lo):
		return 0.1, 1
	case lo == hi:
		return lo / 10, math.Min(hi*10, math.MaxFloat64)
	}
	return lo, hi
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
	return max(m/10, math.SmallestNonzeroFloat64) // never 0, which a log axis cannot draw
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

// stepTicks labels a step axis with whole numbers only: every step when
// the axis spans at most 12 of them, else the default ticks that fall on
// whole numbers.
type stepTicks struct{}

// Ticks implements plot.Ticker.
func (stepTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi-lo <= 12 {
		var out []plot.Tick
		for v := math.Ceil(lo); v <= hi; v++ {
			out = append(out, plot.Tick{Value: v, Label: fmt.Sprintf("%d", int64(v))})
		}
		return out
	}
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
