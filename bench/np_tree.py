"""The numpy way over a whole training dump: what graphdiff's comparison of
two run trees computes, written as a numpy user would write it.

    /usr/bin/python3 bench/np_tree.py EAGER_DIR GRAPH_DIR

Both layouts bench/train.sh measures are read: one .npy per tensor
(step_N/{grads,params}/NAME.npy, memory-mapped with np.load(mmap_mode='r'))
and one safetensors file per step and kind (step_N/{grads,params}.safetensors,
its JSON header parsed and each tensor taken as an np.memmap at its offsets;
the safetensors package is not needed). For every pair of tensors of a step
it computes max |a - b|, where it is, how many elements are beyond float32's
default tolerance (|a - b| > 1e-5 + 1.3e-6 |b|, torch.testing.assert_close's
for float32) and the relative L2 error; for every parameter at a step after
the first, each run's update u = cur - prev in float64 and the sums
graphdiff's update measure keeps, binned by the reference gradient's
float32 exponent (np.bincount with weights). It prints the number of pairs
and of updates measured and the count of pairs beyond tolerance.
"""
import json
import os
import sys

import numpy as np

ST_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64}


def safetensors_arrays(path):
    """The tensors of a safetensors file as read-only memmaps, by name."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        lo, hi = meta["data_offsets"]
        dt = np.dtype(ST_DTYPES[meta["dtype"]])
        count = (hi - lo) // dt.itemsize
        out[name] = np.memmap(path, dtype=dt, mode="r", offset=8 + n + lo, shape=(count,)) if count else np.zeros(0, dt)
    return out


def step_tensors(run, step, kind):
    """The tensors of one step and kind (grads, params), by name."""
    d = os.path.join(run, step)
    st = os.path.join(d, kind + ".safetensors")
    if os.path.exists(st):
        return safetensors_arrays(st)
    sub = os.path.join(d, kind)
    if not os.path.isdir(sub):
        return {}
    return {n[:-4]: np.load(os.path.join(sub, n), mmap_mode="r").reshape(-1)
            for n in sorted(os.listdir(sub)) if n.endswith(".npy")}


def pair_metrics(a, b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    d = np.abs(a64 - b64)
    beyond = int(np.count_nonzero(d > 1e-5 + 1.3e-6 * np.abs(b64)))
    norm = np.linalg.norm(a64)
    rel = float(np.linalg.norm(a64 - b64) / norm) if norm else 0.0
    return (float(d.max()), int(d.argmax())) if d.size else (0.0, 0), beyond, rel


def update_sums(pa, ca, pb, cb, g):
    ua = ca.astype(np.float64) - pa.astype(np.float64)
    ub = cb.astype(np.float64) - pb.astype(np.float64)
    d = ub - ua
    e = (g.view(np.uint32) >> 23) & 0xFF if g is not None else np.zeros(ua.shape, np.uint32)
    e = np.where(e == 0xFF, 0, e)
    return [np.bincount(e, weights=w, minlength=256) for w in (ua * ua, d * ua, d * d, np.abs(pa * ua))]


def main():
    eager, graph = sys.argv[1], sys.argv[2]
    steps = sorted(s for s in os.listdir(eager) if s.startswith("step_"))
    pairs = updates = failed = 0
    prev = None
    for step in steps:
        cur = {}
        for kind in ("grads", "params"):
            ta, tb = step_tensors(eager, step, kind), step_tensors(graph, step, kind)
            for name in sorted(set(ta) & set(tb)):
                _, beyond, _ = pair_metrics(ta[name], tb[name])
                pairs += 1
                failed += beyond > 0
            cur[kind] = (ta, tb)
        if prev is not None:
            (pa, pb), (ca, cb) = prev["params"], cur["params"]
            grads = cur["grads"][0]
            for name in sorted(set(pa) & set(ca) & set(pb) & set(cb)):
                update_sums(pa[name], ca[name], pb[name], cb[name], grads.get(name))
                updates += 1
        prev = cur
    print(f"{pairs} pairs, {updates} updates, {failed} pairs beyond tolerance")


if __name__ == "__main__":
    main()
