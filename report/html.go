package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
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
	// Renames are the likely renames, one for each --rename that would
	// pair them; RenamesLeft says how many more there are ("" for none).
	Renames     []htmlRename
	RenamesLeft string
	RenameNote  string
	Causes      []htmlCause
	Warnings    []htmlCause
	// Unexplained: where a failure no cause was named for parts the runs,
	// and unexplainedLines.
	Unexplained     string
	UnexplainedText []string
	Tensors         []htmlTensor
	TableNote       string // how the table opens
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

// htmlRename is a likely rename as the page shows it: the two names, what
// they share (renameDetails) and the --rename that pairs them.
type htmlRename struct {
	Reference, Other, Details, Flag string
}

type htmlTensor struct {
	Step, Name, Kind, Status, DType, RelL2, Mismatched, MaxAbs string
	Failed                                                     bool
	// First marks the first divergence, AtFirstStep the pairs of its step.
	First, AtFirstStep bool
	// Error is the error over its limit (errorRatio), as shown; Judged
	// the rule, measure and limit it comes from.
	Error, Judged string
	// the numbers the table sorts by (numKey: "" for none): the step
	// (NoStep last), the error over its limit, rel L2, the mismatched
	// fraction and max abs
	StepKey, ErrorKey, RelKey, MismatchedKey, MaxAbsKey string
	// Why is every reason, WhyShort the first, cut short: the cell shows
	// it and folds the rest.
	Why, WhyShort string
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
// renames (with the --rename that pairs each), likely causes, a step ×
// tensor heatmap of the error over its limit, the largest error per step
// of the loss, gradients and parameters, the loss curves when the runs
// hold them, and every pair in a table that sorts (click a
// heading; numbers sort as numbers) and filters (a text box and a status
// menu; the page's #filter=..&status=..&sort=column:asc|desc hash sets
// them too, so a view can be linked). The error is the measure each
// pair's verdict compared over its limit (errorRatio). The table opens on
// the first divergence, marked, then the other pairs of its step, each
// row's reasons folded.
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
		first := []string{"First divergence: " + where(d.Step, d.Name) + " (" + string(d.Kind) + "): " + strings.Join(d.Reasons, "; ")}
		if l := moduleLine(r.Result); l != "" {
			first = append(first, "Where in the model: "+strings.TrimPrefix(l, "where in the model: "))
		}
		p.Lines = append(first, p.Lines...)
	}
	p.Renames, p.RenamesLeft = htmlRenames(r.Renames)
	if len(p.Renames) > 0 {
		p.RenameNote = strings.ToUpper(renameNote[:1]) + renameNote[1:] + "."
	}
	p.Causes, p.Warnings = htmlCauses(r.Causes), htmlCauses(r.Warnings)
	if len(r.Causes) == 0 && r.Unexplained != nil && r.FirstDivergence != nil {
		p.Unexplained, p.UnexplainedText = where(r.FirstDivergence.Step, r.FirstDivergence.Name), unexplainedLines(r.Unexplained)
	}
	p.Tensors, p.TableNote = htmlTensors(r.Tensors, r.FirstDivergence)
	p.Heatmap = newHeatmap(r.Tensors, r.FirstDivergence)
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

// htmlTensors returns the table's rows in the order the page opens with:
// the first divergence (nil for none), the other pairs of its step, then
// every other pair, each part by error over its limit, largest first
// (byRatio); and a note that says so.
func htmlTensors(ts []*judge.TensorResult, first *judge.TensorResult) ([]htmlTensor, string) {
	rank := func(t *judge.TensorResult) int {
		switch {
		case first == nil || t == first:
			return 0
		case t.Step == first.Step:
			return 1
		}
		return 2
	}
	ordered := byRatio(ts)
	sort.SliceStable(ordered, func(i, j int) bool { return rank(ordered[i]) < rank(ordered[j]) })
	var rows []htmlTensor
	for _, t := range ordered {
		row := htmlTensor{Step: stepCell(t.Step), Name: t.Name, Kind: string(t.Kind), Status: string(t.Status),
			DType: dtypeCell(t), RelL2: "-", Mismatched: "-", MaxAbs: "-", Failed: t.Failed(),
			First: t == first, AtFirstStep: first != nil && t.Step == first.Step,
			StepKey: fmt.Sprint(t.Step), Error: "-", Judged: judgedText(t)}
		if t.Step == loaders.NoStep {
			row.StepKey = fmt.Sprint(math.MaxInt32)
		}
		if e := errorRatio(t); !math.IsNaN(e) {
			row.Error, row.ErrorKey = ratioText(e), numKey(e)
		}
		if m := t.Metrics; m != nil {
			row.RelL2, row.Mismatched, row.MaxAbs = sci(m.RelL2), percent(m.MismatchFraction()), sci(m.MaxAbs.Value)
			row.RelKey, row.MismatchedKey, row.MaxAbsKey = numKey(m.RelL2), numKey(m.MismatchFraction()), numKey(m.MaxAbs.Value)
		}
		if len(t.Reasons) > 0 {
			row.Why, row.WhyShort = strings.Join(t.Reasons, "; "), shortWhy(t.Reasons)
		}
		rows = append(rows, row)
	}
	note := "Largest error over its limit first. Click a heading to sort by it."
	if first != nil {
		note = fmt.Sprintf("Opened on %s, where the runs first part: the first divergence, then its step's other pairs, then every other pair, each by error over its limit, largest first. Click a heading to sort all pairs by it.", stepWords(first.Step))
	}
	return rows, note
}

// whyRunes is how much of a pair's first reason its folded cell shows.
const whyRunes = 44

// shortWhy is the folded form of reasons: the first, cut at a word before
// whyRunes characters, and how many more there are.
func shortWhy(reasons []string) string {
	s := []rune(reasons[0])
	if len(s) > whyRunes {
		cut := whyRunes
		for cut > whyRunes/2 && s[cut] != ' ' {
			cut--
		}
		s = append(s[:cut:cut], []rune(" …")...)
	}
	if n := len(reasons) - 1; n > 0 {
		return fmt.Sprintf("%s (+%d more)", string(s), n)
	}
	return string(s)
}

// htmlRenames returns the likely renames the page shows, one for each
// --rename that would pair them, and how many it leaves out ("" for
// none).
func htmlRenames(rs []outcome.Rename) ([]htmlRename, string) {
	groups, left := renameGroups(rs)
	var out []htmlRename
	for _, g := range groups {
		r := g.First
		out = append(out, htmlRename{Reference: r.A, Other: r.B, Details: renameDetails(r, g.More), Flag: r.Flag.String()})
	}
	if left > 0 {
		return out, renamesLeft(left)
	}
	return out, ""
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
  .cause h3 { margin: 0 0 6px; font-size: 16px; } .cause .id, .cause code { font-family: ui-monospace, Menlo, Consolas, monospace; }
  .conf { color: var(--muted); font-weight: 400; }
  .fix { border-left: 3px solid var(--pass); padding-left: 10px; margin-top: 10px; }
  ul { margin: 6px 0; padding-left: 20px; }
  table { border-collapse: collapse; width: 100%; background: #fff; font-size: 13.5px; }
  th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { background: #eef1f5; font-weight: 600; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; font-family: ui-monospace, Menlo, Consolas, monospace; }
  tr.failed td:first-child { border-left: 3px solid var(--fail); }
  tr.divergence td { background: #fdecec; font-weight: 600; }
  .marker { color: var(--fail); font-weight: 700; white-space: nowrap; margin-right: 6px; }
  td.why { min-width: 220px; max-width: 320px; } td.why summary { cursor: pointer; color: var(--muted); } td.why details[open] summary { margin-bottom: 4px; }
  td.judged { color: var(--muted); font-size: 12.5px; }
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
  #heatmap td.divergence { outline: 2px solid var(--ink); outline-offset: -1px; }
  #heatmap th { background: none; border: 0; padding: 0 6px 0 0; font-weight: 400; white-space: nowrap; }
  #heatmap th.col { height: 48px; vertical-align: bottom; padding: 0; } #heatmap th.col span { display: inline-block; transform: rotate(-60deg); transform-origin: left bottom; width: 9px; white-space: nowrap; }
</style>
</head>
<body>
<main>
<header><span class="badge {{if .Pass}}pass{{else}}fail{{end}}">{{.Verdict}}</span><h1>{{.Title}}</h1></header>
<p class="sub">{{.Subtitle}}</p>
{{if .Lines}}<div class="card">{{range .Lines}}<p>{{.}}</p>{{end}}</div>{{end}}
{{if .Renames}}<div class="card cause" id="renames">
<h3>Likely {{if eq (len .Renames) 1}}rename{{else}}renames{{end}}</h3>
<ul>{{range .Renames}}<li><code>{{.Reference}}</code> in REFERENCE and <code>{{.Other}}</code> in OTHER have {{.Details}}: a rename? give <code>--rename {{.Flag}}</code></li>{{end}}{{if .RenamesLeft}}<li>{{.RenamesLeft}}</li>{{end}}</ul>
<p class="muted">{{.RenameNote}}</p>
</div>{{end}}
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
<p class="muted">Each cell is a pair's error over its limit, as its verdict measured it (a gradient's RMS ratio, a parameter's update ratio, a loss's relative L2 error, ...): green under it (darker nearer), red at or beyond it; the first divergence is outlined. Hover for the numbers.{{if .Note}} Shown: {{.Note}}.{{end}}</p>
<div class="heat"><table id="heatmap"{{if le (len .Columns) 40}} class="wide"{{end}}><tr><th></th>{{range .Columns}}<th class="col"><span>{{.}}</span></th>{{end}}</tr>
{{range .Rows}}<tr><th class="row">{{.Name}}</th>{{range .Cells}}<td style="background:{{.Color}}"{{if .First}} class="divergence"{{end}} data-ratio="{{.Ratio}}" title="{{.Title}}"></td>{{end}}</tr>
{{end}}</table></div>{{end}}
{{if .StepSVG}}<h2>Largest error per step</h2><div class="plot" id="step-plot">{{.StepSVG}}</div>{{end}}
{{if .Tensors}}<h2>All pairs</h2>
<p class="muted">{{.TableNote}} Error / limit is the measure the pair's verdict compared over the limit it compared it with (judged by).</p>
<div class="controls"><input id="filter" type="search" placeholder="filter: tensor, kind, status, dtype or reason" size="40">
<select id="status"><option value="">every status</option><option value="failing">failing</option><option value="match">match</option><option value="mismatch">mismatch</option><option value="missing">missing</option><option value="extra">extra</option><option value="shape_mismatch">shape_mismatch</option><option value="dtype_mismatch">dtype_mismatch</option><option value="error">error</option></select>
<span id="shown" class="muted"></span></div>
<table id="pairs"><thead><tr><th data-key="step" data-num>step</th><th data-key="name">tensor</th><th data-key="kind">kind</th><th data-key="status">status</th><th data-key="dtype">dtype</th><th data-key="error" data-num>error / limit</th><th data-key="judged">judged by</th><th data-key="rel" data-num>rel L2</th><th data-key="mismatched" data-num>mismatched</th><th data-key="maxabs" data-num>max abs</th><th>why</th></tr></thead>
<tbody>{{range .Tensors}}<tr{{if or .Failed .First}} class="{{if .Failed}}failed{{end}}{{if .First}} divergence{{end}}"{{end}} data-status="{{.Status}}"{{if .AtFirstStep}} data-first-step{{end}}><td class="num" data-sort="{{.StepKey}}">{{.Step}}</td><td data-sort="{{.Name}}">{{if .First}}<span class="marker" title="the first divergence">◆ first divergence</span>{{end}}{{.Name}}</td><td>{{.Kind}}</td><td>{{.Status}}</td><td>{{.DType}}</td><td class="num" data-sort="{{.ErrorKey}}">{{.Error}}</td><td class="judged">{{.Judged}}</td><td class="num" data-sort="{{.RelKey}}">{{.RelL2}}</td><td class="num" data-sort="{{.MismatchedKey}}">{{.Mismatched}}</td><td class="num" data-sort="{{.MaxAbsKey}}">{{.MaxAbs}}</td><td class="why">{{if .Why}}<details><summary>{{.WhyShort}}</summary>{{.Why}}</details>{{end}}</td></tr>
{{end}}</tbody></table>
<script>
(function () {
  var table = document.getElementById("pairs"), body = table.tBodies[0], heads = table.tHead.rows[0].cells;
  var filter = document.getElementById("filter"), status = document.getElementById("status"), shown = document.getElementById("shown");
  var rows = Array.prototype.slice.call(body.rows), col = {};
  // as the page opens: the first divergence, its step's pairs, then the rest, each by error over its limit
  var opened = {key: "error", dir: -1, pin: true}, sort = opened;
  Array.prototype.forEach.call(heads, function (th, i) { if (th.dataset.key) col[th.dataset.key] = i; });
  rows.forEach(function (r, i) { r.order = i; });
  function value(r, key) {
    var c = r.cells[col[key]], v = c.dataset.sort;
    if (heads[col[key]].dataset.num === undefined) return (v !== undefined ? v : c.textContent).toLowerCase();
    return v === undefined || v === "" ? null : parseFloat(v); // null: no number
  }
  function rank(r) { return r.classList.contains("divergence") ? 0 : r.dataset.firstStep !== undefined ? 1 : 2; }
  function compare(a, b) {
    if (sort.pin && rank(a) !== rank(b)) return rank(a) - rank(b);
    var x = value(a, sort.key), y = value(b, sort.key);
    if (x === null || y === null) return x === y ? a.order - b.order : x === null ? 1 : -1; // no number: last
    return (x < y ? -1 : x > y ? 1 : 0) * sort.dir || a.order - b.order;
  }
  function apply() {
    var q = filter.value.toLowerCase(), st = status.value, n = 0;
    rows.sort(compare);
    rows.forEach(function (r) { body.appendChild(r); });
    rows.forEach(function (r) {
      var ok = (!q || r.textContent.toLowerCase().indexOf(q) >= 0) &&
        (!st || (st === "failing" ? r.classList.contains("failed") : r.dataset.status === st));
      r.hidden = !ok;
      if (ok) n++;
    });
    Array.prototype.forEach.call(heads, function (th) {
      th.className = th.dataset.key === sort.key ? (sort.dir > 0 ? "asc" : "desc") : "";
    });
    shown.textContent = n + " of " + rows.length + " pairs";
    var h = [];
    if (q) h.push("filter=" + encodeURIComponent(q));
    if (st) h.push("status=" + st);
    if (!sort.pin) h.push("sort=" + sort.key + ":" + (sort.dir > 0 ? "asc" : "desc"));
    history.replaceState(null, "", h.length ? "#" + h.join("&") : location.pathname);
  }
  Array.prototype.forEach.call(heads, function (th) {
    if (!th.dataset.key) return;
    th.addEventListener("click", function () {
      var again = sort.key === th.dataset.key && !sort.pin;
      sort = {key: th.dataset.key, dir: again ? -sort.dir : (th.dataset.num !== undefined ? -1 : 1), pin: false};
      apply();
    });
  });
  filter.addEventListener("input", apply);
  status.addEventListener("change", apply);
  location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
    var p = kv.split("="), v = decodeURIComponent(p[1] || "");
    if (p[0] === "filter") filter.value = v;
    if (p[0] === "status") status.value = v;
    if (p[0] === "sort" && col[v.split(":")[0]] !== undefined) { var s = v.split(":"); sort = {key: s[0], dir: s[1] === "desc" ? -1 : 1, pin: false}; }
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
