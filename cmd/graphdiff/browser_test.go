package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	htmlpkg "html"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// browser returns the path of a headless Chromium, or skips the test; with
// GRAPHDIFF_BROWSER_TESTS=1 (set by .ci/run) a missing browser fails it.
func browser(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("GRAPHDIFF_BROWSER_TESTS") == "1" {
		t.Fatal("no Chromium found (apt-get install chromium)")
	}
	t.Skip("no Chromium: install Debian's chromium to run the browser test")
	return ""
}

// headless runs Chromium on a local page with the flags a sandboxed,
// network-less machine needs.
func headless(t *testing.T, chromium string, args ...string) []byte {
	t.Helper()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--user-data-dir=" + t.TempDir()}
	cmd := exec.Command(chromium, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
		}
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatal("chromium did not finish in 90 s")
	}
	return out.Bytes()
}

// TestHTMLReportInBrowser writes the combined HTML report of a real failing
// comparison (loss curves included) and the curve report, loads each in
// headless Chromium from disk, and checks that the DOM holds the rendered
// plot and that a screenshot shows it: many colours, the red divergence
// marker and the blue reference curve.
func TestHTMLReportInBrowser(t *testing.T) {
	t.Parallel()
	chromium := browser(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	curvePage := filepath.Join(dir, "curve.html")
	if code, _, stderr := run("compare", "--report", "html="+page,
		"../../testdata/scenarios/input_lag/eager", "../../testdata/scenarios/input_lag/graph"); code != 1 {
		t.Fatalf("compare exit %d: %s", code, stderr)
	}
	if code, _, stderr := run("curve", "--html", curvePage,
		"../../testdata/curves/drift_then_break_long/eager", "../../testdata/curves/drift_then_break_long/graph"); code != 1 {
		t.Fatalf("curve exit %d: %s", code, stderr)
	}
	for _, p := range []string{page, curvePage} {
		dom := string(headless(t, chromium, "--dump-dom", "file://"+p))
		for _, want := range []string{`id="curve-plot"`, "<svg", "divergence at step", "Steps around the divergence",
			"shift statistic", "jump band", "'Liberation Sans', Arial"} {
			if !strings.Contains(dom, want) {
				t.Errorf("%s: DOM lacks %q", filepath.Base(p), want)
			}
		}
		if n := strings.Count(dom, "<path"); n < 20 {
			t.Errorf("%s: only %d SVG paths in the DOM", filepath.Base(p), n)
		}
		shot := filepath.Join(dir, strings.TrimSuffix(filepath.Base(p), ".html")+".png")
		headless(t, chromium, "--window-size=1280,1800", "--screenshot="+shot, "file://"+p)
		checkScreenshot(t, shot)
	}
	if p := os.Getenv("GRAPHDIFF_KEEP_SCREENSHOTS"); p != "" {
		for _, f := range []string{"report.png", "curve.png"} {
			data, _ := os.ReadFile(filepath.Join(dir, f))
			os.WriteFile(filepath.Join(p, f), data, 0o644)
		}
	}
}

// checkScreenshot decodes a screenshot and checks it shows a plot: many
// distinct colours, and pixels of the divergence marker's red and the
// reference curve's blue.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	colors := map[uint32]bool{}
	red, blue := 0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			colors[r<<16|g<<8|bl] = true
			if r > 190 && g < 70 && bl < 70 {
				red++
			}
			if r < 60 && g > 90 && g < 150 && bl > 150 {
				blue++
			}
		}
	}
	if len(colors) < 50 || red < 20 || blue < 20 {
		t.Errorf("%s: %d colours, %d red and %d blue pixels: the plot does not show", filepath.Base(path), len(colors), red, blue)
	}
}

// TestHTMLPairsTableInBrowser writes the HTML report of a real failing
// comparison, loads it in headless Chromium with a view in its hash
// (failing pairs whose text holds "grads", largest error over the limit
// first) and checks what the page's own script did: every pair is in the
// table, only failing gradient rows show, in descending order of error,
// with the count and the sorted column marked; the heatmap and the
// per-step error plot are drawn. Then it takes a screenshot of that view.
func TestHTMLPairsTableInBrowser(t *testing.T) {
	t.Parallel()
	chromium := browser(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if code, _, stderr := run("compare", "--report", "html="+page,
		"../../testdata/corpus/gpt2/gpt2_warmup_lr_frozen/eager", "../../testdata/corpus/gpt2/gpt2_warmup_lr_frozen/graph"); code != 1 {
		t.Fatalf("compare exit %d: %s", code, stderr)
	}
	url := "file://" + page + "#status=failing&filter=grads&sort=error:desc"
	dom := string(headless(t, chromium, "--dump-dom", url))
	for _, want := range []string{`id="heatmap"`, `id="step-plot"`, "<svg"} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM lacks %q", want)
		}
	}
	i := strings.Index(dom, `<table id="pairs"`)
	if i < 0 {
		t.Fatal("no pairs table")
	}
	table := dom[i : i+strings.Index(dom[i:], "</table>")]
	rowRE := regexp.MustCompile(`(?s)<tr([^>]*)>(.*?)</tr>`)
	cellRE := regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
	all, shown := 0, 0
	last := math.Inf(1)
	for _, m := range rowRE.FindAllStringSubmatch(table, -1) {
		if !strings.Contains(m[1], "data-status") {
			continue // the heading
		}
		all++
		if strings.Contains(m[1], "hidden") {
			continue
		}
		shown++
		cells := cellRE.FindAllStringSubmatch(m[2], -1)
		name, status, errCell := cells[1][1], cells[3][1], cells[5][1]
		if status == "match" || !strings.Contains(name, "grads") {
			t.Errorf("row %s %s shown under status=failing, filter=grads", name, status)
		}
		e, err := strconv.ParseFloat(errCell, 64)
		if err != nil {
			t.Fatalf("error cell %q: %v", errCell, err)
		}
		if e > last {
			t.Errorf("rows not in descending order of error: %g after %g", e, last)
		}
		last = e
	}
	if all != 297 || shown == 0 || shown >= all {
		t.Errorf("%d rows, %d shown; want all 297 pairs with some, not all, shown", all, shown)
	}
	if !strings.Contains(dom, fmt.Sprintf("%d of %d pairs", shown, all)) {
		t.Errorf("the count does not say %d of %d pairs", shown, all)
	}
	if !regexp.MustCompile(`<th[^>]*class="desc"[^>]*data-key="error"|<th[^>]*data-key="error"[^>]*class="desc"`).MatchString(dom) {
		t.Error("the sorted column is not marked")
	}
	shot := filepath.Join(dir, "pairs.png")
	headless(t, chromium, "--window-size=1280,2400", "--screenshot="+shot, url)
	checkScreenshot(t, shot)
}

// observeTable is the script TestHTMLTableAsJudgedInBrowser injects into a
// copy of a report page, after the page's own: it looks at the pairs table
// as the page opened it, then does what a user does (clicks each numeric
// heading twice, types in the filter box), and writes what it saw into
// the page as JSON, in <pre id="observed">, for --dump-dom to return.
const observeTable = `<script>
(function () {
  var table = document.getElementById("pairs"), body = table.tBodies[0], heads = table.tHead.rows[0].cells;
  function col(key) { return Array.prototype.findIndex.call(heads, function (th) { return th.dataset.key === key; }); }
  function shown() { return Array.prototype.filter.call(body.rows, function (r) { return !r.hidden; }); }
  function head(key) { return heads[col(key)].className; }
  function row(r) {
    var why = r.cells[r.cells.length - 1], details = why.querySelector("details");
    return {cls: r.className, atFirstStep: r.dataset.firstStep !== undefined, marker: !!r.querySelector(".marker"),
      step: r.cells[col("step")].dataset.sort, name: r.cells[col("name")].dataset.sort, kind: r.cells[col("kind")].textContent,
      status: r.dataset.status, error: r.cells[col("error")].dataset.sort, errorText: r.cells[col("error")].textContent,
      why: details ? details.lastChild.textContent : why.textContent, whyFolded: details ? !details.open : why.textContent === "",
      summary: details ? details.querySelector("summary").textContent : ""};
  }
  var seen = {opened: {rows: Array.prototype.map.call(body.rows, row), sorted: head("error")}, sorts: {}, heat: []};
  ["step", "error", "rel", "mismatched", "maxabs"].forEach(function (key) {
    var th = heads[col(key)], clicks = [];
    for (var i = 0; i < 2; i++) {
      th.dispatchEvent(new MouseEvent("click", {bubbles: true}));
      clicks.push({header: head(key), values: shown().map(function (r) { return r.cells[col(key)].dataset.sort; })});
    }
    seen.sorts[key] = clicks;
  });
  var filter = document.getElementById("filter");
  filter.value = "qkv";
  filter.dispatchEvent(new Event("input", {bubbles: true}));
  seen.filter = {query: filter.value, count: document.getElementById("shown").textContent,
    rows: Array.prototype.map.call(body.rows, function (r) { return {hidden: r.hidden, text: r.textContent}; })};
  Array.prototype.forEach.call(document.querySelectorAll("#heatmap td"), function (td) {
    seen.heat.push({ratio: td.dataset.ratio, first: td.classList.contains("divergence"), title: td.title});
  });
  var pre = document.createElement("pre");
  pre.id = "observed";
  pre.textContent = JSON.stringify(seen);
  document.body.appendChild(pre);
})();
</script>
`

// observedRow is a pairs table row as observeTable saw it.
type observedRow struct {
	Cls, Step, Name, Kind, Status, Error, ErrorText, Why, Summary string
	AtFirstStep, Marker, WhyFolded                                bool
}

// observedTable is what observeTable wrote.
type observedTable struct {
	Opened struct {
		Rows   []observedRow
		Sorted string
	}
	Sorts map[string][]struct {
		Header string
		Values []string
	}
	Filter struct {
		Query, Count string
		Rows         []struct {
			Hidden bool
			Text   string
		}
	}
	Heat []struct {
		Ratio, Title string
		First        bool
	}
}

// observe writes the HTML report of the comparison of a labelled run,
// with the exit status want, and its JSON report; loads a copy of the
// page with observeTable in headless Chromium, and returns what the
// script saw and the JSON report.
func observe(t *testing.T, chromium, dir string, want int) (observedTable, map[string]any) {
	t.Helper()
	tmp := t.TempDir()
	page := filepath.Join(tmp, "report.html")
	code, stdout, stderr := run("compare", "--report", "html="+page, "--format", "json", filepath.Join(dir, "eager"), filepath.Join(dir, "graph"))
	if code != want {
		t.Fatalf("%s: compare exit %d, want %d: %s", dir, code, want, stderr)
	}
	var report map[string]any
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(data)
	if !strings.Contains(html, "</body>") {
		t.Fatal("the page has no </body>")
	}
	copied := filepath.Join(tmp, "observed.html")
	if err := os.WriteFile(copied, []byte(strings.Replace(html, "</body>", observeTable+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(headless(t, chromium, "--dump-dom", "file://"+copied))
	m := regexp.MustCompile(`(?s)<pre id="observed">(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("%s: the script wrote nothing: the page's table is missing or the script failed", dir)
	}
	var seen observedTable
	if err := json.Unmarshal([]byte(htmlpkg.UnescapeString(m[1])), &seen); err != nil {
		t.Fatal(err)
	}
	if len(seen.Opened.Rows) == 0 {
		t.Fatalf("%s: no rows", dir)
	}
	return seen, report
}

// TestHTMLTableAsJudgedInBrowser loads the HTML report of a passing run
// whose parameters drift far beyond their dtype's max_rel_l2 (the step's
// update ratio passes them) and of a failing one, each in headless
// Chromium, and checks in the page itself, as a user would use it: every
// numeric column sorts by its numbers, both ways, pairs without a number
// last; the filter shows the rows holding its text and hides the others;
// the page opens sorted by error over its limit, on the first divergence,
// marked, followed by the other pairs of its step; each row's reasons are
// folded, the whole of them inside; on the passing page no row and no
// heatmap cell (the per-step plot draws the largest of these) is at or
// beyond its limit; on the failing page each failing gradient shows the
// ratio its reasons state (its RMS ratio over its limit), within what
// three printed figures allow.
func TestHTMLTableAsJudgedInBrowser(t *testing.T) {
	t.Parallel()
	chromium := browser(t)
	for _, tc := range []struct {
		name, dir string
		exit      int
	}{
		{"pass", "../../testdata/corpus/gpt2/gpt2_bf16_adamw_ok", 0},
		{"fail", "../../testdata/corpus/gpt2/gpt2_warmup_lr_frozen", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			seen, report := observe(t, chromium, tc.dir, tc.exit)
			checkSorts(t, seen)
			checkFilter(t, seen)
			checkFolded(t, seen, report)
			if tc.exit == 0 {
				checkWithinLimits(t, seen, report)
			} else {
				checkOpensOnFirstDivergence(t, seen, report)
				checkGradientRatios(t, seen)
			}
		})
	}
}

// number reads a sort key the page wrote: ok false for none.
func number(t *testing.T, s string) (float64, bool) {
	t.Helper()
	if s == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.Replace(s, "Infinity", "Inf", 1), 64)
	if err != nil {
		t.Fatalf("sort key %q: %v", s, err)
	}
	return v, true
}

// checkSorts: two clicks on each numeric heading sort the rows by the
// column's numbers, descending then ascending (the heading says which),
// rows without a number last.
func checkSorts(t *testing.T, seen observedTable) {
	for key, clicks := range seen.Sorts {
		if len(clicks) != 2 {
			t.Fatalf("%s: %d clicks seen", key, len(clicks))
		}
		for i, want := range []string{"desc", "asc"} {
			c := clicks[i]
			if c.Header != want {
				t.Errorf("%s, click %d: the heading is marked %q, want %q", key, i+1, c.Header, want)
			}
			if len(c.Values) != len(seen.Opened.Rows) {
				t.Errorf("%s, click %d: %d rows shown of %d", key, i+1, len(c.Values), len(seen.Opened.Rows))
			}
			numbers, last := 0, 0.0
			for k, s := range c.Values {
				v, ok := number(t, s)
				if !ok {
					continue
				}
				if numbers < k {
					t.Errorf("%s, click %d: row %d has the number %s after rows without one", key, i+1, k, s)
					break
				}
				if numbers > 0 && (want == "desc" && v > last || want == "asc" && v < last) {
					t.Errorf("%s %s: row %d holds %s after %g", key, want, k, s, last)
					break
				}
				numbers, last = numbers+1, v
			}
			if numbers < 2 {
				t.Errorf("%s: %d rows with a number", key, numbers)
			}
		}
	}
	if len(seen.Sorts) != 5 {
		t.Errorf("%d columns sorted, want 5", len(seen.Sorts))
	}
}

// checkFilter: text in the filter box leaves the rows that hold it, and
// only those, and the count says how many.
func checkFilter(t *testing.T, seen observedTable) {
	f := seen.Filter
	shown := 0
	for _, r := range f.Rows {
		holds := strings.Contains(strings.ToLower(r.Text), f.Query)
		if holds == r.Hidden {
			t.Errorf("filter %q: row %.60q hidden %v", f.Query, r.Text, r.Hidden)
		}
		if !r.Hidden {
			shown++
		}
	}
	if shown == 0 || shown == len(f.Rows) || f.Count != fmt.Sprintf("%d of %d pairs", shown, len(f.Rows)) {
		t.Errorf("filter %q: %d of %d rows shown, the count says %q", f.Query, shown, len(f.Rows), f.Count)
	}
}

// foldedSummary is a folded cell's summary: the beginning of its first
// reason, cut short (" …") and how many reasons follow (" (+2 more)").
var foldedSummary = regexp.MustCompile(`^(.*?)(?: …)?(?: \(\+\d+ more\))?$`)

// checkFolded: each row's reasons are folded, under a summary that
// begins them, and the fold holds all of them; the first divergence's are
// those of the JSON report.
func checkFolded(t *testing.T, seen observedTable, report map[string]any) {
	for _, r := range seen.Opened.Rows {
		if !r.WhyFolded {
			t.Errorf("step %s, %s: its reasons are not folded", r.Step, r.Name)
		}
		if begins := foldedSummary.FindStringSubmatch(r.Summary)[1]; r.Why != "" && (begins == "" || !strings.HasPrefix(r.Why, begins)) {
			t.Errorf("step %s, %s: summary %q does not begin %q", r.Step, r.Name, r.Summary, r.Why)
		}
		if (r.Status == "match") != (r.Why == "") {
			t.Errorf("step %s, %s: %s with reasons %q", r.Step, r.Name, r.Status, r.Why)
		}
	}
	if fd, ok := report["first_divergence"].(map[string]any); ok {
		var reasons []string
		for _, r := range fd["reasons"].([]any) {
			reasons = append(reasons, r.(string))
		}
		if got := seen.Opened.Rows[0].Why; got != strings.Join(reasons, "; ") {
			t.Errorf("the first row's reasons %q, the report's first divergence's %q", got, reasons)
		}
	}
}

// checkWithinLimits: a passing run's page has no pair, row or heatmap
// cell, at or beyond its limit, and no first divergence; and the run holds
// pairs whose relative L2 error is beyond their dtype's max_rel_l2 (what
// the page once drew as beyond the limit).
func checkWithinLimits(t *testing.T, seen observedTable, report map[string]any) {
	for _, r := range seen.Opened.Rows {
		if v, ok := number(t, r.Error); !ok || v >= 1 || strings.Contains(r.Cls, "failed") || r.Marker {
			t.Errorf("step %s, %s: error %q (shown %q) of its limit, class %q, on a passing page", r.Step, r.Name, r.Error, r.ErrorText, r.Cls)
		}
	}
	cells := 0
	for _, c := range seen.Heat {
		if v, ok := number(t, c.Ratio); ok {
			cells++
			if v >= 1 || c.First {
				t.Errorf("heatmap cell %q at %g of its limit on a passing page", c.Title, v)
			}
		}
	}
	beyond := 0
	for _, p := range report["tensors"].([]any) {
		p := p.(map[string]any)
		m, ok := p["metrics"].(map[string]any)
		if ok && m["rel_l2"].(float64) > p["limits"].(map[string]any)["max_rel_l2"].(float64) {
			beyond++
		}
	}
	if cells == 0 || beyond == 0 {
		t.Errorf("%d heatmap cells, %d pairs beyond their dtype's max_rel_l2: the page shows none of what it must", cells, beyond)
	}
}

// checkOpensOnFirstDivergence: the page opens sorted by error over its
// limit, descending, with the first divergence of the JSON report first,
// marked, then the other pairs of its step, largest error first; the
// heatmap outlines one cell, the first divergence's.
func checkOpensOnFirstDivergence(t *testing.T, seen observedTable, report map[string]any) {
	fd := report["first_divergence"].(map[string]any)
	rows := seen.Opened.Rows
	first := rows[0]
	if first.Name != fd["tensor"] || first.Step != fmt.Sprint(fd["step"]) || !first.Marker || !strings.Contains(first.Cls, "divergence") {
		t.Errorf("the first row is step %s, %s (class %q, marker %v), want the first divergence, step %v, %v, marked",
			first.Step, first.Name, first.Cls, first.Marker, fd["step"], fd["tensor"])
	}
	if seen.Opened.Sorted != "desc" {
		t.Errorf("the error heading is marked %q as the page opens, want desc", seen.Opened.Sorted)
	}
	last := math.Inf(1)
	for k, r := range rows[1:] {
		if k > 0 && r.AtFirstStep && !rows[k].AtFirstStep {
			t.Errorf("step %s, %s of the first divergent step comes after other steps' pairs", r.Step, r.Name)
		}
		if r.Marker || strings.Contains(r.Cls, "divergence") {
			t.Errorf("step %s, %s is marked too", r.Step, r.Name)
		}
		if v, _ := number(t, r.Error); r.AtFirstStep && v > last {
			t.Errorf("step %s, %s: error %g after %g", r.Step, r.Name, v, last)
		} else if r.AtFirstStep {
			last = v
		}
	}
	marked := 0
	for _, c := range seen.Heat {
		if c.First {
			marked++
			if !strings.Contains(c.Title, fmt.Sprint(fd["tensor"])) {
				t.Errorf("heatmap cell %q is outlined as the first divergence", c.Title)
			}
		}
	}
	if marked != 1 {
		t.Errorf("%d heatmap cells outlined as the first divergence, want 1", marked)
	}
}

// gradientWhy is what a failing gradient's reason states: its RMS ratio
// and the limit it passed.
var gradientWhy = regexp.MustCompile(`is ([0-9.e+-]+) of max\(its RMS .*\(limit ([0-9.e+-]+):`)

// checkGradientRatios: each failing gradient shows the ratio of the two
// numbers its reason states, within the 3 figures each is printed with.
func checkGradientRatios(t *testing.T, seen observedTable) {
	checked := 0
	for _, r := range seen.Opened.Rows {
		if r.Kind != "grad" || r.Status != "mismatch" {
			continue
		}
		m := gradientWhy.FindStringSubmatch(r.Why)
		if m == nil {
			t.Errorf("step %s, %s: reasons %q state no gradient ratio", r.Step, r.Name, r.Why)
			continue
		}
		ratio, _ := strconv.ParseFloat(m[1], 64)
		limit, _ := strconv.ParseFloat(m[2], 64)
		shown, err := strconv.ParseFloat(r.ErrorText, 64)
		if err != nil {
			t.Fatalf("step %s, %s: error shown as %q", r.Step, r.Name, r.ErrorText)
		}
		if want := ratio / limit; math.Abs(shown-want) > 0.015*want {
			t.Errorf("step %s, %s shows %s of its limit; its reasons say %g of %g, %.3g", r.Step, r.Name, r.ErrorText, ratio, limit, want)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no failing gradient on the failing page")
	}
}
