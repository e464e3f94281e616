#!/usr/bin/python3
"""How often a cause graphdiff names at a confidence is right, on the
labelled corpora: the calibration table of the README.

    testdata/gen/confidence.py ./graphdiff testdata

For every labelled compare scenario of a bug (label.json, verdict fail,
not hard) it runs `graphdiff compare --format json` with the label's
arguments and reads the causes named (the top cause and those listed as
also possible). A named cause is right when the label lists it. Causes
are grouped by confidence (buckets of 0.1) and the table gives,
per bucket, how many were named, how many were right and the fraction,
for the top causes and for every cause named. A cause on a correct run
(any but precision_noise) is counted apart: it is always wrong.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from calibrate import run, scenarios  # noqa: E402

NOT_BUGS = {"precision_noise", "noise_drift", "needs_baseline"}


def bucket(c):
    lo = min(0.9, int(c * 10 + 1e-9) / 10)
    return f"{lo:.1f}–{lo + 0.1:.1f}" if lo < 0.9 else "0.9–1.0"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("root")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    top, named, on_correct = {}, {}, 0
    for d in scenarios([a.root]):
        lab = json.load(open(os.path.join(d, "label.json")))
        if lab.get("kind", "compare") != "compare" or lab.get("hard"):
            continue
        causes = [c for c in run(binary, d, lab).get("causes") or [] if c["id"] not in NOT_BUGS]
        if lab["verdict"] == "pass":
            on_correct += len(causes)
            continue
        for i, c in enumerate(causes):
            right = c["id"] in lab["causes"]
            for table in ([top, named] if i == 0 else [named]):
                n, r = table.get(bucket(c["confidence"]), (0, 0))
                table[bucket(c["confidence"])] = (n + 1, r + right)
    print("| confidence | top causes named | right | fraction | all causes named | right | fraction |")
    print("|---|---|---|---|---|---|---|")
    for b in sorted(set(top) | set(named)):
        tn, tr = top.get(b, (0, 0))
        an, ar = named.get(b, (0, 0))
        frac = lambda r, n: f"{r / n:.2f}" if n else "-"
        print(f"| {b} | {tn} | {tr} | {frac(tr, tn)} | {an} | {ar} | {frac(ar, an)} |")
    print(f"\ncauses named on correct runs (all wrong): {on_correct}")


if __name__ == "__main__":
    main()
