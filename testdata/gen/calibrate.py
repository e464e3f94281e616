#!/usr/bin/python3
"""Derive the run-level rules (tolerances.DefaultRunRules) from the corpus,
and score each model family with rules derived without it.

    testdata/gen/calibrate.py ./graphdiff testdata
    testdata/gen/calibrate.py ./graphdiff testdata --lofo
    testdata/gen/calibrate.py ./graphdiff testdata --lofo --by harness

For every labelled scenario it runs `graphdiff compare --format json` and
reads the facts each step was judged with (the report's "steps") and the
losses' and outputs' relative L2 errors, and turns each into the rule
constant that step would need to pass (see signals() and judge.Step):

    grad         worst gradient difference ratio / ε, before any drift
    grad_growth  worst gradient difference ratio / the largest one before
    update       (|β − RAdam's rectification shift| − the gradients' relative difference)
                 / the updates' rounding
    loss         rel_l2 / ε of every loss tensor
    output       rel_l2 / ε of every output tensor

A rule is MARGIN times the largest value any correct run shows (rounded up
to two significant digits): a correct run's differences may reach twice what the
corpus saw before a rule calls them a bug. The output rule is the grad
rule's (OWN_RULE_OF; tolerances.DefaultRunRules says why). The script prints, per family,
the largest value its correct runs show, the rules from all families and,
for each family, the rules derived from the other families alone.

With --lofo it then scores each family with the rules derived without it
(../shared/score/score.py, through a policy file whose run section holds
those rules) and prints each family's scores. With --by harness, the
groups left out are the labels' harnesses (the generators that made the
runs) instead of their families: each harness scored with the rules
derived from the others' runs alone.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

SIGNALS = ("grad", "grad_growth", "update", "loss", "output")
MARGIN = 2.0
# signals whose rule is another's (tolerances.DefaultRunRules): an output is
# an intermediate result of the kernels whose gradients the grad rule
# bounds, and only corpus.py dumps training outputs, so a rule of its own
# would be derived from one generator (without it: 0.0022). The output
# column still shows what the correct runs measure.
OWN_RULE_OF = {"output": "grad"}


def scenarios(roots):
    for root in roots:
        for d, _, files in sorted(os.walk(root)):
            if "label.json" in files:
                yield d


def run(binary, d, lab, policy=None):
    cmd = [binary, "compare", os.path.join(d, lab.get("a", "eager")), os.path.join(d, lab.get("b", "graph")),
           "--format", "json"]
    if lab.get("compute_dtype"):
        cmd += ["--compute-dtype", lab["compute_dtype"]]
    cmd += [a if a.startswith("-") else os.path.join(d, a) for a in lab.get("args", [])]
    if policy:
        cmd += ["--policy", policy]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return json.loads(p.stdout)


def signals(report):
    """Per step (None for step-less pairs), each signal as the rule it
    would need to pass (see judge.Step):

      grad         r/ε for steps whose prior drift is below ε (else 0)
      grad_growth  r/prior_drift for steps whose prior drift is at least ε
      update       (|β − rect_shift| − R)/update_floor, R the largest grad_rel so far
      loss, output rel_l2/ε

    A step judged with a baseline's noise (baseline_pairs > 0, and the
    baseline not unused) is left out: its limits came from the baseline
    run, not from the rules, and its differences say what that run's
    rounding does (a chaotic or TF32-through-BatchNorm run), not what the
    rules must allow.
    """
    out = {}
    eps = {}
    prior_rel = 0.0
    for s in report.get("steps", []):
        if s.get("baseline_pairs", 0) > 0 and not s.get("baseline_unused"):
            continue
        e = s["epsilon"]
        eps[s["step"]] = e
        v = out.setdefault(s["step"], dict.fromkeys(SIGNALS, 0.0))
        r, prior = s["worst_grad_ratio"] or 0, s["prior_drift"] or 0
        if prior < e:
            v["grad"] = max(v["grad"], r / e)
        else:
            v["grad_growth"] = max(v["grad_growth"], r / prior)
        prior_rel = max(prior_rel, s["grad_rel"] or 0)
        if s["update_ratio"] is not None:
            beta = s["update_ratio"] - s.get("rect_shift", 0.0)  # less RAdam's float32 rectification
            v["update"] = max(v["update"], (abs(beta) - prior_rel) / s["update_floor"])
    for t in report["tensors"]:
        kind = {"loss": "loss", "output": "output"}.get(t["kind"])
        m = t.get("metrics")
        if kind is None or m is None or t["step"] not in eps:
            continue
        r = m["rel_l2"]
        if r == "inf" or r is None:
            r = math.inf
        out[t["step"]][kind] = max(out[t["step"]][kind], r / eps[t["step"]])
    return out


def round_up(x):
    """x rounded up to two significant digits."""
    if x <= 0:
        return 0.0
    k = 1 - math.floor(math.log10(x))
    return math.ceil(x * 10**k - 1e-9) / 10**k


def rules_from(rows):
    """MARGIN × the largest value over correct runs, rounded up to two
    significant digits; output takes the grad rule (OWN_RULE_OF)."""
    rules = {}
    for s in SIGNALS:
        worst = max((r["max"][s] for r in rows if r["verdict"] == "pass"), default=0.0)
        rules[s] = round_up(MARGIN * worst)
    for s, other in OWN_RULE_OF.items():
        rules[s] = rules[other]
    return rules


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("root", help="directory searched for label.json files (compare scenarios only)")
    ap.add_argument("--lofo", action="store_true", help="score each group with rules derived without it")
    ap.add_argument("--by", choices=("family", "harness"), default="family", help="the groups left out")
    ap.add_argument("--score", default=os.path.join(os.path.dirname(__file__), "../../../shared/score/score.py"))
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)

    rows = []
    for d in scenarios([a.root]):
        lab = json.load(open(os.path.join(d, "label.json")))
        if lab.get("kind", "compare") != "compare" or lab.get("hard"):
            continue
        sig = signals(run(binary, d, lab))
        mx = {s: max((v[s] for v in sig.values()), default=0.0) for s in SIGNALS}
        at = sig.get(lab.get("first_divergent_step"), {}) if lab["verdict"] == "fail" else {}
        rows.append({"dir": d, "family": lab[a.by] if a.by == "family" else lab.get("harness", "?"),
                     "verdict": lab["verdict"], "max": mx, "at": at})

    families = sorted({r["family"] for r in rows})
    print("largest value in units of ε over each family's correct runs:")
    print(f"{'family':16s}" + "".join(f"{s:>12s}" for s in SIGNALS))
    for fam in families:
        ok = [r for r in rows if r["family"] == fam and r["verdict"] == "pass"]
        print(f"{fam:16s}" + "".join(f"{max((r['max'][s] for r in ok), default=0):12.3g}" for s in SIGNALS))
    rules = rules_from(rows)
    print("\nrules from all families (MARGIN %g):" % MARGIN, json.dumps(rules))
    lofo = {}
    for fam in families:
        lofo[fam] = rules_from([r for r in rows if r["family"] != fam])
        print(f"rules without {fam:14s}", json.dumps(lofo[fam]))

    print("\nbugs: each signal at the labelled first divergent step, as a multiple of its rule")
    for r in rows:
        if r["verdict"] != "fail":
            continue
        cells = " ".join(f"{s}={r['at'].get(s, 0) / rules[s]:.3g}" for s in SIGNALS)
        print(f"  {os.path.basename(r['dir']):34s} {cells}")

    if not a.lofo:
        return
    with tempfile.TemporaryDirectory() as tmp:
        for fam in families:
            policy = os.path.join(tmp, fam + ".yaml")
            with open(policy, "w") as f:
                f.write("run:\n" + "".join(f"  {s}: {v}\n" for s, v in lofo[fam].items()))
            wrapper = os.path.join(tmp, "graphdiff-" + fam)
            with open(wrapper, "w") as f:
                f.write(f'#!/bin/sh\nif [ "$1" = compare ]; then exec "{binary}" "$@" --policy "{policy}"; fi\n'
                        f'exec "{binary}" "$@"\n')
            os.chmod(wrapper, 0o755)
            print(f"\n== {fam}, scored with the rules derived without it: {json.dumps(lofo[fam])}")
            sys.stdout.flush()
            if a.by == "family":
                subprocess.run([sys.executable, a.score, wrapper, a.root, "--family", fam])
                continue
            out = subprocess.run([sys.executable, a.score, wrapper, a.root, "--by", "harness"],
                                 capture_output=True, text=True).stdout.splitlines()
            print("\n".join(line for line in out if line.startswith(("harness ", fam + " "))))


if __name__ == "__main__":
    main()
