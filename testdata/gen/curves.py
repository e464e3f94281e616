#!/usr/bin/env python3
"""Generate graphdiff's labelled loss-curve corpus: long eager-vs-CUDA-graph
training runs (1200 steps) whose losses only are kept, correct ones that
drift legitimately and ones whose graph breaks early or late, by a large or
a tiny amount, suddenly or slowly, under drift or not.

Usage (from the repository root, on a CUDA machine):

    python3 testdata/gen/curves.py [--out testdata/curves] [--only NAME,...] [--steps 1200]

Each scenario is written to <out>/<name>/: eager/losses.npy and
graph/losses.npy (float32, index = step; a bfloat16 model's losses widened
exactly), and label.json in the schema of ../shared/score/README.md with
"kind": "curve".

The runs are those of testdata/gen/corpus.py (its model families, its
optimizers and captures, its bugs), with only the loss kept and longer
schedules: a learning-rate drop at a late step that a captured Python float
never sees, a slow warm-up or decay frozen at capture, a Python branch that
switches off a loss term at a late step, a stale input, gradients that
accumulate.

Labels are observed, never assumed: a correct scenario is the same program
graphed (its curves differ only by rounding: optimizer implementation,
capturable state, fusions, TF32); a buggy scenario is also run with the bug
fixed, graphed the same way (twice, and must repeat itself bit for bit), and
its first divergent step is the first step at which the buggy graph's loss
differs, bit for bit, from the fixed graph's. A break whose first difference
does not stand out of the drift before it (at most HARD_FACTOR times the
largest relative difference of the HARD_WINDOW steps before) is labelled
hard: where it starts cannot be read from the losses.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
from corpus import Sc  # noqa: E402

LOSS = ("loss",)
# a break is hard (label "hard": shown, not scored) when its relative
# difference at its first step is at most HARD_FACTOR times the largest of
# the HARD_WINDOW steps before it
HARD_FACTOR, HARD_WINDOW = 2.0, 50


def scenarios(steps: int) -> list[Sc]:
    s = dict(kinds=LOSS, steps=steps)
    late, mid = steps * 3 // 4, steps // 2
    return [
        # correct: legitimate drift of several kinds
        Sc(name="mlp_sgdm_fp32_ok", family="mlp", optim="sgdm", **s,
           note="SGD with momentum in both runs: the same kernels"),
        Sc(name="mlp_adam_fp32_ok", family="mlp", optim="adam", **s,
           note="eager foreach Adam vs capturable Adam: fp32 rounding drift"),
        Sc(name="mlp_adam_bf16_ok", family="mlp", optim="adam", prec="bf16", **s,
           note="eager foreach Adam vs capturable Adam in pure bf16: bf16 rounding drift"),
        Sc(name="gpt2_adamw_bf16_fused_ok", family="gpt2", optim="adamw", wd=0.01, prec="bf16",
           graph_impl="fused", **s, note="eager foreach AdamW vs fused capturable AdamW, pure bf16"),
        Sc(name="gpt2_compile_fp32_ok", family="gpt2", optim="adam", capture="compile", **s,
           note='torch.compile(mode="reduce-overhead") vs eager'),
        Sc(name="cnn_bn_autocast_adam_ok", family="cnn_bn", optim="adam", prec="autocast", **s,
           note="bf16 autocast, eager foreach Adam vs capturable Adam"),
        Sc(name="llama_tf32_adam_ok", family="llama", optim="adam", prec="tf32", **s,
           note="TF32 matmuls, eager foreach Adam vs capturable Adam"),
        Sc(name="rnn_adam_cosine_ok", family="rnn", optim="adam", sched="cosine", **s,
           note="a cosine schedule the graph reads from a tensor (correct)"),
        # bugs
        Sc(name="mlp_sgdm_lr_drop_late", family="mlp", optim="sgdm", bug="captured_lr", cause="captured_scalar",
           sched="steps", extra={"lr_steps": [(mid, 0.5)]}, **s,
           note=f"a learning-rate halving at step {mid} that the captured Python float never sees; bit for bit equal before"),
        Sc(name="mlp_sgdm_warmup_frozen", family="mlp", optim="sgdm", bug="captured_lr", cause="captured_scalar",
           sched="warmup_n", extra={"warmup": 200}, **s,
           note="a 200-step linear warm-up frozen at its first value; a small gap that grows slowly"),
        Sc(name="mlp_adam_bf16_lr_drop_under_drift", family="mlp", optim="adam", prec="bf16", bug="captured_lr",
           cause="captured_scalar", sched="steps", extra={"lr_steps": [(mid, 0.5)]}, **s,
           note=f"the lr halving at step {mid} missed, under bf16 drift (eager foreach vs capturable Adam) that "
                f"has decorrelated the runs by then: hard, the losses alone cannot place it"),
        Sc(name="mlp_adam_bf16_lr_drop_early_under_drift", family="mlp", optim="adam", prec="bf16",
           bug="captured_lr", cause="captured_scalar", sched="steps", extra={"lr_steps": [(60, 0.5)]}, **s,
           note="the lr halving at step 60 missed, under bf16 drift (eager foreach vs capturable Adam)"),
        Sc(name="llama_adam_bf16_branch_under_drift", family="llama", optim="adam", prec="bf16",
           bug="captured_branch", cause="captured_branch", extra={"branch_until": steps // 3}, **s,
           note=f"an auxiliary loss term switched off at step {steps // 3}, under bf16 drift"),
        Sc(name="gpt2_adam_fp32_lr_drop_under_drift", family="gpt2", optim="adam", bug="captured_lr",
           cause="captured_scalar", sched="steps", extra={"lr_steps": [(steps // 4, 0.5)]}, **s,
           note=f"the lr halving at step {steps // 4} missed, under fp32 drift"),
        Sc(name="llama_sgdm_lr_tiny_late", family="llama", optim="sgdm", bug="captured_lr", cause="captured_scalar",
           sched="steps", extra={"lr_steps": [(late, 0.99)]}, **s,
           note=f"a 1% lr cut at step {late} missed: a tiny late break"),
        Sc(name="rnn_sgdm_branch_late", family="rnn", optim="sgdm", bug="captured_branch", cause="captured_branch",
           extra={"branch_until": late}, **s,
           note=f"an auxiliary loss term a Python `if` switches off at step {late}: the graph keeps it"),
        Sc(name="cnn_bn_autocast_branch_under_drift", family="cnn_bn", optim="adam", prec="autocast",
           bug="captured_branch", cause="captured_branch", extra={"branch_until": steps // 6}, **s,
           note=f"the auxiliary term switched off at step {steps // 6}, under autocast drift"),
        Sc(name="embed_sgdm_stale_input", family="embed", optim="sgdm", bug="stale_input", cause="stale_input", **s,
           note="the graph reads the capture batch at every step"),
        Sc(name="mlp_adam_grad_accumulation", family="mlp", optim="adam", bug="grad_accumulation",
           cause="grad_accumulation", **s, note="gradients never zeroed between replays"),
        Sc(name="gpt2_adam_bf16_warmup_frozen_under_drift", family="gpt2", optim="adam", prec="bf16",
           bug="captured_lr", cause="captured_scalar", sched="warmup_n", extra={"warmup": 100}, **s,
           note="a 100-step warm-up frozen at capture, under bf16 drift"),
        Sc(name="llama_adam_fp32_lr_drop_late_under_drift", family="llama", optim="adam", bug="captured_lr",
           cause="captured_scalar", sched="steps", extra={"lr_steps": [(late, 0.5)]}, **s,
           note=f"the lr halving at step {late} missed, under fp32 drift"),
        Sc(name="rnn_sgdm_decay_frozen", family="rnn", optim="sgdm", bug="captured_lr", cause="captured_scalar",
           sched="decay_slow", extra={"decay": 0.999}, **s,
           note="a 0.1%-a-step decay frozen at capture: the slowest break"),
    ]


def losses(run) -> np.ndarray:
    return np.array(run.losses, dtype=np.float32)


def first_diff(a: np.ndarray, b: np.ndarray):
    d = np.nonzero(a.view(np.uint32) != b.view(np.uint32))[0]
    return int(d[0]) if len(d) else None


def run_one(ctx, sc: Sc, root: Path, states: dict) -> dict | None:
    t0 = time.perf_counter()
    state = states[sc.family]
    eager = losses(corpus.run_eager(sc, ctx, state))
    graph = losses(corpus.run_graph(sc, ctx, state, bugged=True))
    label = {"family": "curve_" + sc.family, "harness": "corpus", "kind": "curve", "a": "eager/losses.npy", "b": "graph/losses.npy"}
    # the losses are float32; the model computed them in bf16 or TF32
    compute = {"bf16": "bf16", "autocast": "bf16", "tf32": "tf32"}.get(sc.prec)
    if compute:
        label["args"] = ["--compute-dtype", compute]
    rel = np.abs(graph.astype(np.float64) - eager) / np.maximum(np.abs(eager.astype(np.float64)), 1e-30)
    measured = {"first_step_losses_differ": first_diff(eager, graph), "max_rel_diff": float(rel.max()),
                "final_rel_diff": float(rel[-1])}
    if sc.bug is None:
        # correct by construction; a second graphed run says whether it
        # repeats itself (torch.compile's need not)
        again = losses(corpus.run_graph(sc, ctx, state, bugged=True))
        measured["graph_repeats_itself_from"] = first_diff(graph, again)
        label.update(verdict="pass", causes=[], first_divergent_step=None)
        note = "correct by construction: the same program graphed"
    else:
        fixed, fixed2 = (losses(corpus.run_graph(sc, ctx, state, bugged=False)) for _ in range(2))
        if first_diff(fixed, fixed2) is not None:
            ctx.warn(f"{sc.name}: the fixed graphed run does not repeat itself bit for bit: skipped")
            return None
        step = first_diff(graph, fixed)
        if step is None:
            ctx.warn(f"{sc.name}: the bug never shows in the losses: skipped")
            return None
        label.update(verdict="fail", causes=[sc.cause], first_divergent_step=step)
        # a break whose first difference does not stand out of the drift
        # before it (by HARD_FACTOR over the previous HARD_WINDOW steps)
        # cannot be placed from the losses alone: shown, not scored
        before = float(np.abs(rel[max(0, step - HARD_WINDOW):step]).max()) if step > 0 else 0.0
        measured["drift_before_break"] = before
        if rel[step] <= HARD_FACTOR * before:
            label["hard"] = True
        measured["fixed_vs_eager_first_diff"] = first_diff(eager, fixed)
        measured["rel_diff_at_break"] = float(rel[step])
        note = (f"first divergent step {step}: the first step whose loss differs bit for bit from the same "
                f"graphed run with the bug fixed (which repeats itself bit for bit)")
    label["note"] = f"{corpus.describe(sc)}; {len(eager)} steps. {sc.note}. {note}. measured: {json.dumps(measured)}"
    d = root / sc.name
    for run, arr in (("eager", eager), ("graph", graph)):
        (d / run).mkdir(parents=True, exist_ok=True)
        np.save(d / run / "losses.npy", arr, allow_pickle=False)
    (d / "label.json").write_text(json.dumps(label, indent=1) + "\n")
    print(f"{sc.name}: {label['verdict']} step {label['first_divergent_step']} max rel {rel.max():.3g} "
          f"({time.perf_counter() - t0:.1f} s)", flush=True)
    return label


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "curves"))
    ap.add_argument("--only", default="")
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--cpu", action="store_true", help="a logic test without CUDA (not a fixture)")
    args = ap.parse_args()
    if not args.cpu and not torch.cuda.is_available():
        sys.exit("no CUDA device: use --cpu for a logic test")
    ctx = corpus.Ctx(args.cpu)
    root = Path(args.out)
    states = {f: corpus.init_state(f) for f in corpus.FAMILIES}
    only = set(filter(None, args.only.split(",")))
    n = 0
    for sc in scenarios(args.steps):
        if only and sc.name not in only:
            continue
        if ctx.cpu and sc.prec in ("bf16", "fp16"):
            continue
        try:
            if run_one(ctx, sc, root, states):
                n += 1
        except Exception as e:  # noqa: BLE001 - reported, the rest still run
            ctx.warn(f"{sc.name}: {type(e).__name__}: {e}")
    versions = {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
                "device": "cpu" if ctx.cpu else torch.cuda.get_device_name()}
    print(f"{n} curve scenarios written ({json.dumps(versions)}); {len(ctx.warnings)} warnings")
    for w in ctx.warnings:
        print("  " + w)


if __name__ == "__main__":
    main()
