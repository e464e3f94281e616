package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"sort"
	"strings"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// heatmap is a step × tensor grid of error ratios: rows are tensor names,
// columns steps (or buckets of consecutive steps, each cell the largest
// ratio in it).
type heatmap struct {
	Columns []string // step labels
	Rows    []heatRow
	Note    string // what was left out
}

type heatRow struct {
	Name  string
	Cells []heatCell
}

type heatCell struct {
	Color template.CSS
	Title string
	// Ratio is the error over its limit drawn (errorRatio; "" for no
	// pair); First marks the cell of the first divergence.
	Ratio string
	First bool
}

// heatmap limits: columns and rows drawn at most.
const (
	heatColumns = 120
	heatRows    = 150
)

// newHeatmap builds the grid of a comparison's stepped pairs, the cell of
// its first divergence first (nil for none) marked; nil when there are
// fewer than two steps.
func newHeatmap(ts []*judge.TensorResult, first *judge.TensorResult) *heatmap {
	stepSet := map[int]bool{}
	byName := map[string]map[int]*judge.TensorResult{}
	for _, t := range ts {
		if t.Step == loaders.NoStep {
			continue
		}
		stepSet[t.Step] = true
		if byName[t.Name] == nil {
			byName[t.Name] = map[int]*judge.TensorResult{}
		}
		byName[t.Name][t.Step] = t
	}
	if len(stepSet) < 2 {
		return nil
	}
	steps := make([]int, 0, len(stepSet))
	for k := range stepSet {
		steps = append(steps, k)
	}
	sort.Ints(steps)
	// columns: each step, or buckets of consecutive steps
	per := (len(steps) + heatColumns - 1) / heatColumns
	h := &heatmap{}
	for i := 0; i < len(steps); i += per {
		j := min(len(steps), i+per)
		label := fmt.Sprint(steps[i])
		if j-i > 1 {
			label = fmt.Sprintf("%d–%d", steps[i], steps[j-1])
		}
		h.Columns = append(h.Columns, label)
	}
	type named struct {
		name  string
		worst float64
		kind  loaders.Kind
	}
	var names []named
	for name, m := range byName {
		n := named{name: name, worst: math.Inf(-1)}
		for _, t := range m {
			n.kind = t.Kind
			if r := errorRatio(t); !math.IsNaN(r) {
				n.worst = math.Max(n.worst, r)
			}
		}
		names = append(names, n)
	}
	if len(names) > heatRows { // keep the worst rows
		sort.Slice(names, func(i, j int) bool { return names[i].worst > names[j].worst })
		h.Note = fmt.Sprintf("the %d tensors of largest error of %d", heatRows, len(names))
		names = names[:heatRows]
	}
	sort.Slice(names, func(i, j int) bool {
		if names[i].kind.Rank() != names[j].kind.Rank() {
			return names[i].kind.Rank() < names[j].kind.Rank()
		}
		return names[i].name < names[j].name
	})
	if per > 1 {
		note := fmt.Sprintf("each column is %d consecutive steps, drawn at their largest error", per)
		if h.Note != "" {
			note = h.Note + "; " + note
		}
		h.Note = note
	}
	for _, n := range names {
		row := heatRow{Name: n.name}
		m := byName[n.name]
		for i := 0; i < len(steps); i += per {
			worst, at := math.NaN(), -1
			for _, k := range steps[i:min(len(steps), i+per)] {
				if t, ok := m[k]; ok {
					if r := errorRatio(t); !math.IsNaN(r) && (math.IsNaN(worst) || r > worst) {
						worst, at = r, k
					}
				}
			}
			cell := heatCell{Color: "#f0f1f4", Title: fmt.Sprintf("%s: not in this step", n.name)}
			if at >= 0 {
				t := m[at]
				cell = heatCell{Color: heatColor(worst), Ratio: numKey(worst),
					Title: fmt.Sprintf("step %d, %s: %s, error %s of its limit (%s)", at, n.name, t.Status, ratioText(worst), judgedText(t))}
			}
			if first != nil && first.Name == n.name && first.Step != loaders.NoStep {
				if k := sort.SearchInts(steps, first.Step); k >= i && k < i+per {
					cell.First, cell.Title = true, fmt.Sprintf("first divergence, step %d, %s; %s", first.Step, n.name, cell.Title)
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		h.Rows = append(h.Rows, row)
	}
	return h
}

// heatColor maps an error ratio to a colour: greens below the limit,
// darker as it nears it (1e-4 … 1 on a log scale), reds at and beyond it.
func heatColor(r float64) template.CSS {
	switch {
	case math.IsInf(r, 1) || r >= 1:
		f := 0.0
		if !math.IsInf(r, 1) {
			f = math.Min(1, math.Log10(r)/3) // 1 … 1000× the limit
		} else {
			f = 1
		}
		return template.CSS(fmt.Sprintf("rgb(%d,%d,%d)", 240-int(60*f), 90-int(60*f), 80-int(50*f)))
	case r <= 0:
		return "#e6f4ea"
	}
	f := math.Max(0, math.Min(1, (math.Log10(r)+4)/4)) // 1e-4 … 1
	return template.CSS(fmt.Sprintf("rgb(%d,%d,%d)", 230-int(150*f), 244-int(90*f), 234-int(150*f)))
}

// stepErrorSVG draws, per step, the largest error ratio (errorRatio) of the
// loss, the gradients and the parameters (log scale) with the limit at 1;
// "" when the run has fewer than two steps.
func stepErrorSVG(ts []*judge.TensorResult) (template.HTML, error) {
	kinds := []struct {
		kind  loaders.Kind
		label string
		color color.Color
	}{{loaders.KindLoss, "loss", colorA}, {loaders.KindGrad, "gradients", colorB}, {loaders.KindParam, "parameters", colorDiff}}
	worst := map[loaders.Kind]map[int]float64{}
	steps := map[int]bool{}
	for _, t := range ts {
		if t.Step == loaders.NoStep {
			continue
		}
		r := errorRatio(t)
		if math.IsNaN(r) {
			continue
		}
		steps[t.Step] = true
		if worst[t.Kind] == nil {
			worst[t.Kind] = map[int]float64{}
		}
		if v, ok := worst[t.Kind][t.Step]; !ok || r > v {
			worst[t.Kind][t.Step] = r
		}
	}
	if len(steps) < 2 {
		return "", nil
	}
	const floor, ceil = 1e-6, 1e4
	p := plot.New()
	p.Title.Text = "largest error per step, over its limit"
	p.X.Label.Text = "step"
	p.X.Tick.Marker = stepTicks{}
	p.Y.Label.Text = "measure / its limit, log scale"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = decadeTicks{}
	p.Y.Min, p.Y.Max = floor, ceil
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	p.Add(plotter.NewGrid())
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for k := range steps {
		xmin, xmax = math.Min(xmin, float64(k)), math.Max(xmax, float64(k))
	}
	for _, k := range kinds {
		m := worst[k.kind]
		if len(m) == 0 {
			continue
		}
		var pts plotter.XYs
		for step, r := range m {
			pts = append(pts, plotter.XY{X: float64(step), Y: math.Max(floor, math.Min(ceil, r))})
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", err
		}
		l.Color, l.Width = k.color, vg.Points(1.4)
		p.Add(l)
		p.Legend.Add(k.label, l)
	}
	limit, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: 1}, {X: xmax, Y: 1}})
	if err != nil {
		return "", err
	}
	limit.Color, limit.Width = colorBreak, vg.Points(1)
	limit.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(limit)
	p.Legend.Add("limit", limit)
	c := vgsvg.New(10*vg.Inch, 3.2*vg.Inch)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return template.HTML(strings.ReplaceAll(s, "font-family:Liberation Sans", "font-family:"+pageFonts)), nil
}
