#!/usr/bin/python3
"""Generate testdata/edge/: dumps that are valid but sit at the edges of
the comparison and update paths (float64 parameters, empty and 0-d
tensors), each a pair of runs `eager` and `graph` whose right answer is
known by construction.

Run from the repository root with Debian's numpy:

    /usr/bin/python3 testdata/gen/edge_fixtures.py

It owns testdata/edge/ (deleted and written again; README.md lists each
run and its answer). Deterministic: fixed seeds, so two runs give
byte-identical files. Every file is written by np.save.

The runs:
  f64_ok     float64 parameters and gradients at 3 steps, plain SGD with a
             learning rate of 1e-10: every update is far below float32's
             resolution at the parameters' size (2^-23 relative), so only
             a float64 reading sees it. Both runs are the same arithmetic,
             bit for bit: pass.
  f64_lr     the same, but the graphed run's updates are twice the eager
             run's (a learning rate captured at another value), from step
             1 on, while its gradients are the eager run's bit for bit:
             fail at step 1, by the parameters' updates.
  empty      float32 parameters and gradients at 2 steps beside an empty
             (0, 4) parameter and gradient and a 0-d loss, the same in both
             runs: pass.
  ints_ok    outputs-only inference: int64 token ids beyond 2^53 and uint64
             hashes near 2^64 at 2 decode steps, the same in both runs: pass.
  ints_off   the same, but at step 1 one token id is 2^62 + 1 in the graphed
             run where the eager run has 2^62 (float64 holds both as 2^62)
             and one hash 2^64 − 2 where eager has 2^64 − 1: fail at step 1.
  baseline   outputs-only float32 inference at 3 steps (logits 64 × 10),
             five runs. `eager` is the reference; `graph_ok` is it plus
             independent Gaussian noise of 2% of each value's size (a
             reduced-precision kernel not declared: beyond float32's limits, so it fails
             alone); `baseline` is the reference plus other noise of the same
             size (a second eager run on that kernel: with it, graph_ok
             passes); `graph_stale` is graph_ok but for step 1, which repeats
             step 0's logits (a stale output: fails with any baseline);
             `garbage` holds 3e38 in every element (a broken dump: it must
             not serve, and graph_stale fails with it too); `other` holds
             the reference's logits under another name (it pairs with
             nothing, and says so).
  ints_orders_ok   2-D int64 token ids and uint64 hashes like ints_ok's, the
             eager run's in C order, the graphed run's in Fortran order
             (np.asfortranarray), the same values: pass.
  ints_orders_off  the same, with ints_off's differences at step 1: fail at
             step 1 (the pair stored in two orders is read whole, in C
             order, and must still be compared as integers).
  ints_mixed_ok    int64 token ids and uint64 hashes beyond 2^53 in the eager
             run, the same values stored as uint64 and int64 (the same 64
             bits, .view) in the graphed run: pass.
  ints_mixed_off   the same, but at step 1 one token id is 2^62 + 1 in the
             graphed run where the eager run has 2^62, and one hash is
             2^63 + 2^62 in the eager run, whose 64 bits the graphed run's
             int64 reads as −2^62: fail at step 1.
"""
import os
import shutil

import numpy as np

ROOT = os.path.join("testdata", "edge")


def sgd_run(path, lr_scale, steps=3, lr=1e-10):
    rng = np.random.default_rng(7)
    w = {"fc.weight": rng.standard_normal((4, 3)), "fc.bias": rng.standard_normal(4)}
    grads_rng = np.random.default_rng(11)  # the same gradients in both runs
    for step in range(steps):
        g = {name: grads_rng.standard_normal(p.shape) for name, p in w.items()}
        d = os.path.join(path, f"step_{step:06d}")
        os.makedirs(os.path.join(d, "params"))
        os.makedirs(os.path.join(d, "grads"))
        for name in w:
            np.save(os.path.join(d, "grads", name + ".npy"), g[name].astype(np.float64))
            np.save(os.path.join(d, "params", name + ".npy"), w[name].astype(np.float64))
        np.save(os.path.join(d, "loss.npy"), np.float64(sum(float((p * p).sum()) for p in w.values())))
        w = {name: w[name] - lr_scale * lr * g[name] for name in w}


def empty_run(path):
    for step in range(2):
        d = os.path.join(path, f"step_{step:06d}")
        os.makedirs(os.path.join(d, "params"))
        os.makedirs(os.path.join(d, "grads"))
        for kind in ("params", "grads"):
            np.save(os.path.join(d, kind, "empty.npy"), np.zeros((0, 4), np.float32))
            np.save(os.path.join(d, kind, "w.npy"), np.arange(6, dtype=np.float32) * (1 + step) / 8)
        np.save(os.path.join(d, "loss.npy"), np.float32(1.5 - step / 4))


def ints_run(path, off):
    for step in range(2):
        d = os.path.join(path, f"step_{step:06d}", "outputs")
        os.makedirs(d)
        tokens = np.array([2**62, 2**53 + 1, -(2**63), 17 + step], np.int64)
        hashes = np.array([2**64 - 1, 2**63, step], np.uint64)
        if off and step == 1:
            tokens[0] = np.int64(2**62 + 1)
            hashes[0] = np.uint64(2**64 - 2)
        np.save(os.path.join(d, "tokens.npy"), tokens)
        np.save(os.path.join(d, "hashes.npy"), hashes)


def baseline_runs(root):
    rng = np.random.default_rng(5)
    logits = [rng.standard_normal((64, 10)).astype(np.float32) for _ in range(3)]
    noise = np.random.default_rng(6)

    def noisy(x):
        return (x * (1 + 2e-2 * noise.standard_normal(x.shape))).astype(np.float32)

    runs = {"eager": logits, "graph_ok": [noisy(x) for x in logits], "baseline": [noisy(x) for x in logits]}
    runs["graph_stale"] = [runs["graph_ok"][0], runs["graph_ok"][0], runs["graph_ok"][2]]
    runs["garbage"] = [np.full_like(x, 3e38) for x in logits]
    for name, values in runs.items():
        for step, x in enumerate(values):
            d = os.path.join(root, name, f"step_{step:06d}", "outputs")
            os.makedirs(d)
            np.save(os.path.join(d, "logits.npy"), x)
    for step, x in enumerate(logits):
        d = os.path.join(root, "other", f"step_{step:06d}", "outputs")
        os.makedirs(d)
        np.save(os.path.join(d, "scores.npy"), x)


def ints_orders_run(path, off, fortran):
    for step in range(2):
        d = os.path.join(path, f"step_{step:06d}", "outputs")
        os.makedirs(d)
        tokens = np.array([[2**62, 2**53 + 1], [-(2**63), 17 + step]], np.int64)
        hashes = np.array([[2**64 - 1, 2**63], [step, 5]], np.uint64)
        if off and step == 1:
            tokens[0, 0] = np.int64(2**62 + 1)
            hashes[0, 0] = np.uint64(2**64 - 2)
        order = np.asfortranarray if fortran else np.ascontiguousarray
        np.save(os.path.join(d, "tokens.npy"), order(tokens))
        np.save(os.path.join(d, "hashes.npy"), order(hashes))


def ints_mixed_run(path, off, graph):
    for step in range(2):
        d = os.path.join(path, f"step_{step:06d}", "outputs")
        os.makedirs(d)
        tokens = np.array([2**62, 2**53 + 1, 17 + step], np.int64)
        hashes = np.array([2**63 - 1, 2**53 + 1, step], np.uint64)
        if off and step == 1:
            hashes[0] = np.uint64(2**63 + 2**62)
            if graph:
                tokens[0] = np.int64(2**62 + 1)
        if graph:
            tokens, hashes = tokens.astype(np.uint64), hashes.view(np.int64)
        np.save(os.path.join(d, "tokens.npy"), tokens)
        np.save(os.path.join(d, "hashes.npy"), hashes)


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    sgd_run(os.path.join(ROOT, "f64_ok", "eager"), 1.0)
    sgd_run(os.path.join(ROOT, "f64_ok", "graph"), 1.0)
    sgd_run(os.path.join(ROOT, "f64_lr", "eager"), 1.0)
    sgd_run(os.path.join(ROOT, "f64_lr", "graph"), 2.0)
    empty_run(os.path.join(ROOT, "empty", "eager"))
    empty_run(os.path.join(ROOT, "empty", "graph"))
    ints_run(os.path.join(ROOT, "ints_ok", "eager"), False)
    ints_run(os.path.join(ROOT, "ints_ok", "graph"), False)
    ints_run(os.path.join(ROOT, "ints_off", "eager"), False)
    ints_run(os.path.join(ROOT, "ints_off", "graph"), True)
    baseline_runs(os.path.join(ROOT, "baseline"))
    ints_orders_run(os.path.join(ROOT, "ints_orders_ok", "eager"), False, False)
    ints_orders_run(os.path.join(ROOT, "ints_orders_ok", "graph"), False, True)
    ints_orders_run(os.path.join(ROOT, "ints_orders_off", "eager"), False, False)
    ints_orders_run(os.path.join(ROOT, "ints_orders_off", "graph"), True, True)
    ints_mixed_run(os.path.join(ROOT, "ints_mixed_ok", "eager"), False, False)
    ints_mixed_run(os.path.join(ROOT, "ints_mixed_ok", "graph"), False, True)
    ints_mixed_run(os.path.join(ROOT, "ints_mixed_off", "eager"), True, False)
    ints_mixed_run(os.path.join(ROOT, "ints_mixed_off", "graph"), True, True)
    with open(os.path.join(ROOT, "README.md"), "w") as f:
        f.write("# Edge runs\n\nGenerated by `testdata/gen/edge_fixtures.py` (numpy %s); do not edit by hand.\n\n"
                "| run | what it holds | answer |\n|---|---|---|\n"
                "| `f64_ok` | float64 parameters and gradients at 3 steps, SGD with lr 1e-10 (updates below float32's resolution), the same in both runs | pass |\n"
                "| `f64_lr` | the same, the graphed run's updates twice the eager run's from its first update on, gradients equal | fail at step 1 (updates) |\n"
                "| `empty` | an empty (0, 4) parameter and gradient and a 0-d loss beside a normal pair, 2 steps, the same in both runs | pass |\n"
                "| `ints_ok` | int64 token ids beyond 2^53 and uint64 hashes near 2^64 at 2 decode steps, the same in both runs | pass |\n"
                "| `ints_off` | the same, one token 2^62 + 1 against 2^62 and one hash 2^64 − 2 against 2^64 − 1 at step 1 (float64 rounds each pair to one value) | fail at step 1 |\n"
                "| `baseline/graph_ok` | float32 logits at 3 steps with noise of 2%% relative against `baseline/eager` | fail alone; pass with `--baseline baseline/baseline` (noise of the same size) |\n"
                "| `baseline/graph_stale` | `graph_ok`, step 1 repeating step 0's logits | fail at step 1 with `--baseline baseline/baseline`; fail with `--baseline baseline/garbage` (3e38 everywhere: it cannot serve) |\n"
                "| `baseline/other` | the reference's logits under another name | as a baseline it pairs with nothing, and the report says so |\n"
                "| `ints_orders_ok` | 2-D int64 token ids and uint64 hashes like `ints_ok`'s, the eager run's in C order, the graphed run's in Fortran order, the same values | pass |\n"
                "| `ints_orders_off` | the same, with `ints_off`'s differences at step 1 | fail at step 1 |\n"
                "| `ints_mixed_ok` | int64 token ids and uint64 hashes beyond 2^53 in the eager run, stored as uint64 and int64 (the same bits) in the graphed run, the same values | pass |\n"
                "| `ints_mixed_off` | the same, one token 2^62 + 1 against 2^62 and one hash 2^63 + 2^62 against the int64 of its bits, −2^62, at step 1 | fail at step 1 |\n"
                % np.__version__)


if __name__ == "__main__":
    main()
