package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/graphdiff/graphdiff/check"
	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
)

// HTML is a self-contained page: styles and the plot (SVG) are inline and
// nothing is loaded from the network.
const HTML Format = "html"

// htmlPage is what the page template renders; sections it lacks are left out.
type htmlPage struct {
	Title    string
	Verdict  string
	Pass     bool
	Subtitle string
	Lines    []string // headline facts
	Causes   []htmlCause
	Warnings []htmlCause
	Tensors  []htmlTensor
	More     int // tensors not shown
	Errors   []string
	Curve    *htmlCurve
}

type htmlCause struct {
	ID, Title, Fix string
	Confidence     string
	Evidence       []string
}

type htmlTensor struct {
	Step, Name, Kind, Status, DType, RelL2, Mismatched, MaxAbs, Why string
	Failed                                                          bool
}

type htmlCurve struct {
	Pattern, Verdict, First string
	Pass                    bool
	Evidence                []string
	SVG                     template.HTML
	Rows                    []htmlCurveRow
	Settings                string
}

type htmlCurveRow struct {
	Step, A, B, Rel, Band string
	Divergence            bool
}

// CurveHTML writes a page for a loss-curve analysis: summary, plot and the
// steps around the divergence.
func CurveHTML(w io.Writer, r *curve.Result) error {
	return checked(w, func(w io.Writer) error { return writeCurveHTML(w, r) })
}

func writeCurveHTML(w io.Writer, r *curve.Result) error {
	c, err := htmlCurveSection(r)
	if err != nil {
		return err
	}
	p := htmlPage{
		Title: "graphdiff: loss curves", Verdict: string(r.Verdict), Pass: r.Verdict == judge.Pass,
		Subtitle: r.A + " vs " + r.B, Curve: c,
	}
	return pageTemplate.Execute(w, p)
}

func htmlCurveSection(r *curve.Result) (*htmlCurve, error) {
	svg, err := CurveSVG(r)
	if err != nil {
		return nil, err
	}
	c := &htmlCurve{Pattern: r.Pattern, Verdict: string(r.Verdict), Pass: r.Verdict == judge.Pass,
		Evidence: r.Evidence, SVG: template.HTML(svg)}
	if r.FirstDivergentStep != nil {
		c.First = fmt.Sprint(*r.FirstDivergentStep)
	}
	o := r.Options
	c.Settings = curveSettings(len(r.Steps), o)
	k := divergenceIndex(r)
	lo, hi := 0, min(len(r.Steps), 10)
	if k >= 0 {
		lo, hi = max(0, k-8), min(len(r.Steps), k+9)
	}
	for i := lo; i < hi; i++ {
		c.Rows = append(c.Rows, htmlCurveRow{Step: fmt.Sprint(r.Steps[i]), A: fmt.Sprintf("%.7g", r.ValuesA[i]),
			B: fmt.Sprintf("%.7g", r.ValuesB[i]), Rel: sci(r.RelDiff[i]), Band: bandAt(r, i), Divergence: i == k})
	}
	return c, nil
}

// compareHTML writes the combined page of a comparison: summary, likely
// causes, the worst tensors, and the loss curves when the runs hold them.
func compareHTML(w io.Writer, r *check.Comparison) error {
	s := summarize(r.Result)
	p := htmlPage{
		Title: "graphdiff: " + r.A + " vs " + r.B, Verdict: string(r.Verdict), Pass: r.Verdict == judge.Pass,
		Subtitle: r.A + " (reference) vs " + r.B,
		Lines: []string{fmt.Sprintf("%d pairs: %d match, %d mismatch, %d shape mismatch, %d dtype mismatch, %d missing, %d extra, %d unreadable, %d ignored",
			s.Pairs, s.Match, s.Mismatch, s.ShapeMismatch, s.DTypeMismatch, s.Missing, s.Extra, s.Errors, s.Ignored)},
	}
	if d := r.FirstDivergence; d != nil {
		p.Lines = append([]string{"First divergence: " + where(d.Step, d.Name) + " (" + string(d.Kind) + "): " + strings.Join(d.Reasons, "; ")}, p.Lines...)
	}
	p.Causes, p.Warnings = htmlCauses(r.Causes), htmlCauses(r.Warnings)
	rows := worstFirst(r.Tensors)
	for i, t := range rows {
		if i == 30 {
			p.More = len(rows) - i
			break
		}
		row := htmlTensor{Step: stepCell(t.Step), Name: t.Name, Kind: string(t.Kind), Status: string(t.Status),
			DType: dtypeCell(t), RelL2: "-", Mismatched: "-", MaxAbs: "-", Why: strings.Join(t.Reasons, "; "), Failed: t.Failed()}
		if m := t.Metrics; m != nil {
			row.RelL2, row.Mismatched, row.MaxAbs = sci(m.RelL2), percent(m.MismatchFraction()), sci(m.MaxAbs.Value)
		}
		p.Tensors = append(p.Tensors, row)
	}
	for _, err := range r.AllErrors() {
		p.Errors = append(p.Errors, err.Error())
	}
	if r.Curve != nil {
		c, err := htmlCurveSection(r.Curve)
		if err != nil {
			return err
		}
		p.Curve = c
	}
	return pageTemplate.Execute(w, p)
}

func htmlCauses(cs []diagnose.Cause) []htmlCause {
	var out []htmlCause
	for _, c := range cs {
		h := htmlCause{ID: c.ID, Confidence: fmt.Sprintf("%.2f", c.Confidence), Evidence: c.Evidence, Fix: c.Fix}
		if e, ok := diagnose.Explain(c.ID); ok {
			h.Title = e.Title
		}
		out = append(out, h)
	}
	return out
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
  :root { --ink: #1d2330; --muted: #5b6475; --line: #e3e6ec; --pass: #1e7d3a; --fail: #c0282d; --bg: #f7f8fa; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.5 "Liberation Sans", Arial, Helvetica, sans-serif; color: var(--ink); background: var(--bg); }
  main { max-width: 1180px; margin: 0 auto; padding: 28px 32px 48px; }
  header { display: flex; align-items: center; gap: 16px; margin-bottom: 6px; }
  h1 { font-size: 22px; margin: 0; font-weight: 600; }
  h2 { font-size: 17px; margin: 28px 0 10px; font-weight: 600; }
  .badge { font-weight: 700; font-size: 13px; letter-spacing: .06em; text-transform: uppercase; color: #fff; padding: 4px 10px; border-radius: 4px; }
  .badge.pass { background: var(--pass); } .badge.fail { background: var(--fail); }
  .sub { color: var(--muted); margin: 0 0 14px; word-break: break-all; }
  .card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 16px 20px; margin: 12px 0; }
  .card p { margin: 4px 0; }
  .cause h3 { margin: 0 0 6px; font-size: 16px; } .cause .id { font-family: ui-monospace, Menlo, Consolas, monospace; }
  .conf { color: var(--muted); font-weight: 400; }
  .fix { border-left: 3px solid var(--pass); padding-left: 10px; margin-top: 10px; }
  ul { margin: 6px 0; padding-left: 20px; }
  table { border-collapse: collapse; width: 100%; background: #fff; font-size: 13.5px; }
  th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { background: #eef1f5; font-weight: 600; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; font-family: ui-monospace, Menlo, Consolas, monospace; }
  tr.failed td:first-child { border-left: 3px solid var(--fail); }
  tr.divergence td { background: #fdecec; font-weight: 600; }
  .plot { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px; }
  .plot svg { width: 100%; height: auto; display: block; }
  .muted { color: var(--muted); }
  footer { margin-top: 32px; color: var(--muted); font-size: 12.5px; }
</style>
</head>
<body>
<main>
<header><span class="badge {{if .Pass}}pass{{else}}fail{{end}}">{{.Verdict}}</span><h1>{{.Title}}</h1></header>
<p class="sub">{{.Subtitle}}</p>
{{if .Lines}}<div class="card">{{range .Lines}}<p>{{.}}</p>{{end}}</div>{{end}}
{{range $i, $c := .Causes}}<div class="card cause">
<h3>{{if eq $i 0}}Likely cause{{else}}Also possible{{end}}: <span class="id">{{$c.ID}}</span> <span class="conf">— {{$c.Title}} (confidence {{$c.Confidence}})</span></h3>
<ul>{{range $c.Evidence}}<li>{{.}}</li>{{end}}</ul>
<p class="fix"><strong>Fix:</strong> {{$c.Fix}}</p>
</div>{{end}}
{{range .Warnings}}<div class="card cause">
<h3>Warning: <span class="id">{{.ID}}</span> <span class="conf">— {{.Title}} (confidence {{.Confidence}})</span></h3>
<ul>{{range .Evidence}}<li>{{.}}</li>{{end}}</ul>
</div>{{end}}
{{with .Curve}}<h2>Loss curves: {{.Pattern}}{{if .First}}, diverging at step {{.First}}{{end}}</h2>
<div class="card"><ul>{{range .Evidence}}<li>{{.}}</li>{{end}}</ul><p class="muted">{{.Settings}}</p></div>
<div class="plot" id="curve-plot">{{.SVG}}</div>
<h2>Steps {{if .First}}around the divergence{{else}}at the start{{end}}</h2>
<table><tr><th>step</th><th>reference</th><th>compared</th><th>relative difference</th><th>jump band</th></tr>
{{range .Rows}}<tr{{if .Divergence}} class="divergence"{{end}}><td class="num">{{.Step}}</td><td class="num">{{.A}}</td><td class="num">{{.B}}</td><td class="num">{{.Rel}}</td><td class="num">{{.Band}}</td></tr>
{{end}}</table>{{end}}
{{if .Tensors}}<h2>Tensors, worst first</h2>
<table><tr><th>step</th><th>tensor</th><th>kind</th><th>status</th><th>dtype</th><th>rel L2</th><th>mismatched</th><th>max abs</th><th>why</th></tr>
{{range .Tensors}}<tr{{if .Failed}} class="failed"{{end}}><td class="num">{{.Step}}</td><td>{{.Name}}</td><td>{{.Kind}}</td><td>{{.Status}}</td><td>{{.DType}}</td><td class="num">{{.RelL2}}</td><td class="num">{{.Mismatched}}</td><td class="num">{{.MaxAbs}}</td><td>{{.Why}}</td></tr>
{{end}}</table>{{if .More}}<p class="muted">… and {{.More}} more.</p>{{end}}{{end}}
{{if .Errors}}<h2>Unreadable inputs</h2><ul>{{range .Errors}}<li>{{.}}</li>{{end}}</ul>{{end}}
<footer>Made by graphdiff. The page is self-contained: it loads nothing from the network.</footer>
</main>
</body>
</html>
`))
