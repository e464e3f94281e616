package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
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
	// Unexplained: where a failure no cause was named for parts the runs,
	// and unexplainedLines.
	Unexplained     string
	UnexplainedText []string
	Tensors         []htmlTensor
	Errors          []string
	Curve           *htmlCurve
	Heatmap         *heatmap
	StepSVG         template.HTML // largest error per step, by kind
}

type htmlCause struct {
	ID, Title, Fix string
	Confidence     string
	Evidence       []string
}

type htmlTensor struct {
	Step, Name, Kind, Status, DType, RelL2, Mismatched, MaxAbs, Why string
	Failed                                                          bool
	// sort keys: the step (NoStep last) and the error over its limit
	StepKey, ErrorKey string
	Error             string // the error over its limit, as shown
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
	r = printableCurve(r) // control characters shown, as the terminal shows them
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
// causes, a step × tensor heatmap of the error, the largest error per step
// of the loss, gradients and parameters, the loss curves when the runs
// hold them, and every pair in a table that sorts (click a heading) and
// filters (a text box and a status menu; the page's #filter=..&status=..&
// sort=column:asc|desc hash sets them too, so a view can be linked).
func compareHTML(w io.Writer, r *outcome.Comparison) error {
	r = printable(r) // control characters shown, as the terminal shows them
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
	if len(r.Causes) == 0 && r.Unexplained != nil && r.FirstDivergence != nil {
		p.Unexplained, p.UnexplainedText = where(r.FirstDivergence.Step, r.FirstDivergence.Name), unexplainedLines(r.Unexplained)
	}
	for _, t := range worstFirst(r.Tensors) { // every pair: the table sorts and filters
		row := htmlTensor{Step: stepCell(t.Step), Name: t.Name, Kind: string(t.Kind), Status: string(t.Status),
			DType: dtypeCell(t), RelL2: "-", Mismatched: "-", MaxAbs: "-", Why: strings.Join(t.Reasons, "; "), Failed: t.Failed(),
			StepKey: fmt.Sprint(t.Step), Error: "-", ErrorKey: "-1"}
		if t.Step == loaders.NoStep {
			row.StepKey = fmt.Sprint(math.MaxInt32)
		}
		if e := errorRatio(t); !math.IsNaN(e) {
			row.Error, row.ErrorKey = sci(e), fmt.Sprint(min(e, math.MaxFloat64))
		}
		if m := t.Metrics; m != nil {
			row.RelL2, row.Mismatched, row.MaxAbs = sci(m.RelL2), percent(m.MismatchFraction()), sci(m.MaxAbs.Value)
		}
		p.Tensors = append(p.Tensors, row)
	}
	p.Heatmap = newHeatmap(r.Tensors)
	svg, err := stepErrorSVG(r.Tensors)
	if err != nil {
		return err
	}
	p.StepSVG = svg
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
  .controls { display: flex; gap: 10px; align-items: center; margin: 8px 0; }
  .controls input, .controls select { font: inherit; padding: 4px 8px; border: 1px solid var(--line); border-radius: 4px; }
  #pairs th[data-key] { cursor: pointer; user-select: none; }
  #pairs th.asc::after { content: " ▲"; } #pairs th.desc::after { content: " ▼"; }
  .heat { overflow: auto; max-height: 640px; background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px; }
  #heatmap { width: auto; border-collapse: separate; border-spacing: 1px; font-size: 11px; }
  #heatmap td { width: 9px; min-width: 9px; height: 12px; padding: 0; border: 0; }
  #heatmap.wide td { width: 22px; min-width: 22px; } #heatmap.wide th.col span { width: 22px; }
  #heatmap th { background: none; border: 0; padding: 0 6px 0 0; font-weight: 400; white-space: nowrap; }
  #heatmap th.col { height: 48px; vertical-align: bottom; padding: 0; } #heatmap th.col span { display: inline-block; transform: rotate(-60deg); transform-origin: left bottom; width: 9px; white-space: nowrap; }
</style>
</head>
<body>
<main>
<header><span class="badge {{if .Pass}}pass{{else}}fail{{end}}">{{.Verdict}}</span><h1>{{.Title}}</h1></header>
<p class="sub">{{.Subtitle}}</p>
{{if .Lines}}<div class="card">{{range .Lines}}<p>{{.}}</p>{{end}}</div>{{end}}
{{if .Unexplained}}<div class="card cause">
<h3>Likely cause: none of the known causes fits how the runs part at {{.Unexplained}}</h3>
<ul>{{range .UnexplainedText}}<li>{{.}}</li>{{end}}</ul>
</div>{{end}}
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
{{with .Heatmap}}<h2>Error by step and tensor</h2>
<p class="muted">Each cell is a pair's relative L2 error over the limit it was judged by: green under it (darker nearer), red at or beyond it. Hover for the numbers.{{if .Note}} Shown: {{.Note}}.{{end}}</p>
<div class="heat"><table id="heatmap"{{if le (len .Columns) 40}} class="wide"{{end}}><tr><th></th>{{range .Columns}}<th class="col"><span>{{.}}</span></th>{{end}}</tr>
{{range .Rows}}<tr><th class="row">{{.Name}}</th>{{range .Cells}}<td style="background:{{.Color}}" title="{{.Title}}"></td>{{end}}</tr>
{{end}}</table></div>{{end}}
{{if .StepSVG}}<h2>Largest error per step</h2><div class="plot" id="step-plot">{{.StepSVG}}</div>{{end}}
{{if .Tensors}}<h2>All pairs</h2>
<div class="controls"><input id="filter" type="search" placeholder="filter: tensor, kind, status, dtype or reason" size="40">
<select id="status"><option value="">every status</option><option value="failing">failing</option><option value="match">match</option><option value="mismatch">mismatch</option><option value="missing">missing</option><option value="extra">extra</option><option value="shape_mismatch">shape_mismatch</option><option value="dtype_mismatch">dtype_mismatch</option><option value="error">error</option></select>
<span id="shown" class="muted"></span></div>
<table id="pairs"><thead><tr><th data-key="step" data-num>step</th><th data-key="name">tensor</th><th data-key="kind">kind</th><th data-key="status">status</th><th data-key="dtype">dtype</th><th data-key="error" data-num>error / limit</th><th data-key="rel">rel L2</th><th data-key="mismatched">mismatched</th><th data-key="maxabs">max abs</th><th>why</th></tr></thead>
<tbody>{{range .Tensors}}<tr{{if .Failed}} class="failed"{{end}} data-step="{{.StepKey}}" data-error="{{.ErrorKey}}" data-status="{{.Status}}"><td class="num">{{.Step}}</td><td>{{.Name}}</td><td>{{.Kind}}</td><td>{{.Status}}</td><td>{{.DType}}</td><td class="num">{{.Error}}</td><td class="num">{{.RelL2}}</td><td class="num">{{.Mismatched}}</td><td class="num">{{.MaxAbs}}</td><td>{{.Why}}</td></tr>
{{end}}</tbody></table>
<script>
(function () {
  var table = document.getElementById("pairs"), body = table.tBodies[0];
  var filter = document.getElementById("filter"), status = document.getElementById("status"), shown = document.getElementById("shown");
  var rows = Array.prototype.slice.call(body.rows), sort = {key: "", dir: 1};
  function cell(r, key) {
    if (key === "step") return parseFloat(r.dataset.step);
    if (key === "error") return parseFloat(r.dataset.error);
    var i = Array.prototype.findIndex.call(table.tHead.rows[0].cells, function (th) { return th.dataset.key === key; });
    return r.cells[i].textContent;
  }
  function apply() {
    var q = filter.value.toLowerCase(), st = status.value, n = 0;
    if (sort.key) {
      rows.sort(function (a, b) {
        var x = cell(a, sort.key), y = cell(b, sort.key);
        return (x < y ? -1 : x > y ? 1 : 0) * sort.dir;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    }
    rows.forEach(function (r) {
      var ok = (!q || r.textContent.toLowerCase().indexOf(q) >= 0) &&
        (!st || (st === "failing" ? r.classList.contains("failed") : r.dataset.status === st));
      r.hidden = !ok;
      if (ok) n++;
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.className = th.dataset.key === sort.key ? (sort.dir > 0 ? "asc" : "desc") : "";
    });
    shown.textContent = n + " of " + rows.length + " pairs";
    var h = [];
    if (q) h.push("filter=" + encodeURIComponent(q));
    if (st) h.push("status=" + st);
    if (sort.key) h.push("sort=" + sort.key + ":" + (sort.dir > 0 ? "asc" : "desc"));
    history.replaceState(null, "", h.length ? "#" + h.join("&") : location.pathname);
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
    if (!th.dataset.key) return;
    th.addEventListener("click", function () {
      sort = {key: th.dataset.key, dir: sort.key === th.dataset.key ? -sort.dir : (th.dataset.num !== undefined ? -1 : 1)};
      apply();
    });
  });
  filter.addEventListener("input", apply);
  status.addEventListener("change", apply);
  location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
    var p = kv.split("="), v = decodeURIComponent(p[1] || "");
    if (p[0] === "filter") filter.value = v;
    if (p[0] === "status") status.value = v;
    if (p[0] === "sort") { var s = v.split(":"); sort = {key: s[0], dir: s[1] === "desc" ? -1 : 1}; }
  });
  apply();
})();
</script>{{end}}
{{if .Errors}}<h2>Unreadable inputs</h2><ul>{{range .Errors}}<li>{{.}}</li>{{end}}</ul>{{end}}
<footer>Made by graphdiff. The page is self-contained: it loads nothing from the network.</footer>
</main>
</body>
</html>
`))
