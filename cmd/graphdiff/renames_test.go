package main

import (
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoldenRenames writes the Markdown and JUnit reports of a real run
// whose first layer is named fc1 in REFERENCE and layer1 in OTHER, as
// goldens (the copy's temporary path written $OTHER).
func TestGoldenRenames(t *testing.T) {
	t.Parallel()
	eager, graph := scenario("fp32_adam")
	other := renamed(t, graph, "fc1.weight", "layer1.weight")
	for _, format := range []string{"markdown", "junit"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			args := []string{"compare", "--format", format, eager, other}
			code, stdout, stderr := run(args...)
			got := fmt.Sprintf("$ graphdiff %s\n-- exit %d --\n-- stdout --\n%s-- stderr --\n%s",
				strings.Join(args, " "), code, stdout, stderr)
			// the path as given, and as Markdown escapes it in a reason
			got = strings.ReplaceAll(got, other, "$OTHER")
			got = strings.ReplaceAll(got, strings.ReplaceAll(other, "_", `\_`), "$OTHER")
			checkGolden(t, filepath.Join("testdata", "compare_renamed_"+format+".golden"), got)
		})
	}
}

// TestRenamesInEveryFormat compares a real run with a copy of its graphed
// run whose first layer's files are named layer1, not fc1: every report
// a user or a CI job reads names the likely rename and the --rename that
// pairs it, near its top: the text report and the Markdown summary after
// the first divergence, the HTML page in its summary before the heatmap
// and the table, JUnit as a suite property, in the suite's system-out and
// first in the failure of each renamed pair (and stays well-formed XML);
// JSON lists it.
func TestRenamesInEveryFormat(t *testing.T) {
	t.Parallel()
	eager, graph := scenario("fp32_adam")
	other := renamed(t, graph, "fc1.weight", "layer1.weight")
	const (
		flag    = "fc1.weight=layer1.weight"
		details = "have the same shape (32, 16) and dtype float32 at 8 steps, 0 to 7 (1 more pair of names too)"
		hint    = "grads/fc1.weight in REFERENCE and grads/layer1.weight in OTHER " + details + ": a rename? give --rename " + flag
	)
	for _, format := range []string{"text", "markdown", "html", "junit", "json"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := run("compare", "--format", format, eager, other)
			if code != exitDiff {
				t.Fatalf("exit %d, want 1\n%s", code, stderr)
			}
			switch format {
			case "text":
				inOrder(t, stdout, "first divergence: ", "likely rename: "+hint+"\n", "worst tensors")
			case "markdown":
				inOrder(t, stdout, "**First divergence:**", "**Likely renames** (a tensor held under two names is listed as missing and extra",
					"- `grads/fc1.weight` in REFERENCE and `grads/layer1.weight` in OTHER "+details+": a rename? give `--rename "+flag+"`\n",
					"| pairs |", "### Failing tensors")
			case "html":
				inOrder(t, stdout, "First divergence: step 0, grads/fc1.weight", `<div class="card cause" id="renames">`,
					"<code>grads/fc1.weight</code> in REFERENCE and <code>grads/layer1.weight</code> in OTHER "+details+
						": a rename? give <code>--rename "+flag+"</code>",
					"listed as missing and extra; no cause is diagnosed from it", "<h2>Error by step and tensor</h2>", "<h2>All pairs</h2>")
				for _, remote := range []string{`src="http`, `href="http`, "<link", "@import"} {
					if strings.Contains(stdout, remote) {
						t.Errorf("the page loads %s: it is no longer self-contained", remote)
					}
				}
			case "junit":
				junitShowsRename(t, stdout, hint)
			case "json":
				each := strings.Replace(hint, " (1 more pair of names too)", "", 1) // a hint for each pair of names
				if !strings.Contains(stdout, `"hint": "`+each+`"`) {
					t.Errorf("the JSON report lists no rename:\n%.2000s", stdout)
				}
			}
		})
	}
}

// inOrder checks that report holds each of want, each after the one
// before.
func inOrder(t *testing.T, report string, want ...string) {
	t.Helper()
	rest := report
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			where := "after the text before it"
			if !strings.Contains(report, w) {
				where = "at all"
			}
			t.Fatalf("the report does not hold %q %s:\n%s", w, where, report)
		}
		rest = rest[i+len(w):]
	}
}

// junitShowsRename checks a JUnit report, parsed as a CI system parses
// it, for the rename hint as a suite property, in the suite's system-out,
// and first in the failures of the renamed gradient at every step.
func junitShowsRename(t *testing.T, doc, hint string) {
	t.Helper()
	var suites struct {
		Suites []struct {
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Type string `xml:"type,attr"`
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
			SystemOut string `xml:"system-out"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(doc), &suites); err != nil || len(suites.Suites) != 1 {
		t.Fatalf("not one well-formed JUnit suite (%v):\n%s", err, doc)
	}
	suite := suites.Suites[0]
	var renames []string
	for _, p := range suite.Properties {
		if p.Name == "likely_rename" {
			renames = append(renames, p.Value)
		}
	}
	if len(renames) != 1 || renames[0] != hint {
		t.Errorf("likely_rename properties %q, want one: %q", renames, hint)
	}
	if !strings.HasPrefix(suite.SystemOut, "likely rename: "+hint+"\n") {
		t.Errorf("system-out does not start with the rename:\n%s", suite.SystemOut)
	}
	failed := 0
	for _, c := range suite.Cases {
		if c.Failure == nil || (c.Name != "grads/fc1.weight" && c.Name != "grads/layer1.weight") {
			continue
		}
		failed++
		if !strings.HasPrefix(c.Failure.Text, "likely rename: grads/fc1.weight in REFERENCE and grads/layer1.weight in OTHER") ||
			!strings.Contains(c.Failure.Text, "give --rename fc1.weight=layer1.weight\n") {
			t.Errorf("the failure of %s (%s) does not lead with the rename:\n%s", c.Name, c.Failure.Type, c.Failure.Text)
		}
	}
	if failed != 16 {
		t.Errorf("%d failing cases of the renamed gradient, want 16 (missing and extra at 8 steps)", failed)
	}
}
