#!/usr/bin/python3
"""Write the inputs of graphdiff's speed benchmarks with numpy.

    /usr/bin/python3 bench/make_files.py DIR [MiB]

DIR receives, for a size of MiB per float32 file (default 1024):
  f32_a.npy, f32_b.npy    float32 N(0,1); b = a with every 1000th value + 1e-3
  f32_ulp.npy             a with every value moved one float32 step up (every
                          pair differs, as when a graph sums in another order)
  bf16_a.npy, bf16_b.npy  the same values rounded to bfloat16, saved as numpy's
                          raw 2-byte dtype '<V2' (how ml_dtypes.bfloat16 saves);
                          same element count, half the bytes
  f16_a.npy, f16_b.npy    the same values as float16
  f32bf_a.npy             bf16_a's values saved as float32 (what a bfloat16
                          run saves after .float()): against bf16_b every
                          1000th pair differs
  small/a, small/b        two runs of 8 steps x 2000 tensors of 1024 float32
                          (grads/layer_NNNN.weight.npy), b with every 1000th
                          element + 1e-3
Existing files of the right size are kept.
"""
import os
import sys

import numpy as np


def save(path, arr):
    if not os.path.exists(path):
        np.save(path, arr)


def main():
    out = sys.argv[1]
    mib = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    os.makedirs(out, exist_ok=True)
    n = mib << 18  # float32 elements in mib MiB
    tag = f"_{mib}"
    if not os.path.exists(os.path.join(out, f"f32bf_a{tag}.npy")):
        rng = np.random.default_rng(1)
        a = rng.standard_normal(n, dtype=np.float32)
        b = a.copy()
        b[::1000] += np.float32(1e-3)
        save(os.path.join(out, f"f32_a{tag}.npy"), a)
        save(os.path.join(out, f"f32_b{tag}.npy"), b)
        save(os.path.join(out, f"f32_ulp{tag}.npy"), np.nextafter(a, np.float32(np.inf)))
        for name, arr in (("a", a), ("b", b)):
            bits = arr.view(np.uint32)
            # round to nearest even, keep the top 16 bits
            bf = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
            save(os.path.join(out, f"bf16_{name}{tag}.npy"), bf.view("V2"))
            if name == "a":
                save(os.path.join(out, f"f32bf_a{tag}.npy"), (bf.astype(np.uint32) << 16).view(np.float32))
            save(os.path.join(out, f"f16_{name}{tag}.npy"), arr.astype(np.float16))
        del a, b
    small = os.path.join(out, "small")
    if not os.path.exists(os.path.join(small, "b", "step_000007")):
        rng = np.random.default_rng(2)
        for step in range(8):
            for t in range(2000):
                x = rng.standard_normal(1024, dtype=np.float32)
                y = x.copy()
                y[::1000] += np.float32(1e-3)
                for run, arr in (("a", x), ("b", y)):
                    d = os.path.join(small, run, f"step_{step:06d}", "grads")
                    os.makedirs(d, exist_ok=True)
                    np.save(os.path.join(d, f"layer_{t:04d}.weight.npy"), arr)
    print(f"benchmark inputs in {out}")


if __name__ == "__main__":
    main()
