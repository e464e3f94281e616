#!/usr/bin/env python3
"""Write two float32 loss curves of N steps (default 1,000,000) that drift
apart by rounding, as curve's BenchmarkAnalyzeCurves1M makes them, to
DIR/a.npy and DIR/b.npy: the input of the `graphdiff curve` measurement
in bench/README.md.

    /usr/bin/python3 bench/make_curves.py DIR [N]
"""
import os
import sys

import numpy as np


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) == 3 else 1_000_000
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(5)
    i = np.arange(n, dtype=np.float64)
    a = (2 * np.exp(-i / 2e5) + 0.1 + 0.05 * rng.random(n)).astype(np.float32)
    b = (a.astype(np.float64) * (1 + 1e-7 * rng.standard_normal(n) * np.sqrt(i))).astype(np.float32)
    np.save(os.path.join(out, "a.npy"), a)
    np.save(os.path.join(out, "b.npy"), b)


if __name__ == "__main__":
    main()
