#!/usr/bin/python3
"""Write the inputs of graphdiff's load benchmark with numpy.

    /usr/bin/python3 bench/make_load.py DIR [GIB [STEPS...]]

DIR receives:
  many/a, many/b   two runs of 500 steps x 100 tensors (50,000 pairs),
                   step_NNNNNN/grads/layer_NN.weight.npy, 256 float32 each;
                   b = a with element 7 of every tensor + 1e-3
  many_S/a, many_S/b
                   the same with S steps (S x 100 pairs), for each S given
                   after GIB (bench/costs.sh uses 1000 and 2000)
  huge_a.npy,      one float32 file of GIB GiB (default 8), written in chunks of
  huge_b.npy       2**24 elements through np.lib.format.open_memmap:
                   a[i] = (i mod 2**24) mod 1000 / 1000; b = a + 1e-3 where
                   (i mod 2**24) mod 1000 = 0, i.e. where a = 0, so exactly
                   2**(GIB-1) * 16778 elements are beyond tolerance
                   (2,147,584 for 8 GiB)
Existing files of the right size are kept.
"""
import os
import sys

import numpy as np


def many(out, steps=500, name="many"):
    for run in ("a", "b"):
        if os.path.exists(os.path.join(out, name, run, f"step_{steps - 1:06d}")):
            continue
        for step in range(steps):
            d = os.path.join(out, name, run, f"step_{step:06d}", "grads")
            os.makedirs(d, exist_ok=True)
            for k in range(100):
                x = np.random.default_rng(step * 100 + k).standard_normal(256).astype(np.float32)
                if run == "b":
                    x[7] += 1e-3
                np.save(os.path.join(d, f"layer_{k:02d}.weight.npy"), x)


def huge(out, gib):
    n = gib << 28  # float32 elements
    chunk = 16 << 20
    base = (np.arange(chunk, dtype=np.int64) % 1000 / 1000).astype(np.float32)
    for name, bump in (("huge_a.npy", False), ("huge_b.npy", True)):
        path = os.path.join(out, name)
        if os.path.exists(path) and os.path.getsize(path) >= 4 * n:
            continue
        m = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n,))
        x = base.copy()
        if bump:
            x[::1000] += 1e-3
        for i in range(0, n, chunk):
            m[i:i + chunk] = x
        m.flush()
        del m


if __name__ == "__main__":
    out = sys.argv[1]
    gib = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    os.makedirs(out, exist_ok=True)
    many(out)
    for steps in sys.argv[3:]:
        many(out, int(steps), f"many_{int(steps)}")
    huge(out, gib)
