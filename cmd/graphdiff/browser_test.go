package main

import (
	"bytes"
	"fmt"
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
