#!/usr/bin/python3
"""Write testdata/dtypes/mixed/: the same training steps dumped in several
dtypes, as users produce them (a run saved after .float() against one saved
in bfloat16; float32 against a float64 copy), for graphdiff's mixed-dtype
comparison.

Run from the repository root with Debian's PyTorch (CPU):

    /usr/bin/python3 testdata/gen/mixed_dtypes.py

testdata/dtypes/mixed/ (owned: deleted and rewritten), each a run of two
steps, step_00000k/{loss,params,grads}.pt written by torch.save:
  bf16/      a small model trained in bfloat16, its tensors in bfloat16
  f32/       the same tensors .float(): bfloat16 values widened exactly
  f64/       the same tensors .double()
  reshaped/  f32 with one parameter saved transposed (a shape difference)
"""
import os
import shutil

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, "testdata", "dtypes", "mixed")


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2)).to(torch.bfloat16)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    steps = []
    for _ in range(2):
        x = torch.randn(4, 8, generator=g).to(torch.bfloat16)
        y = torch.randn(4, 2, generator=g)
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x).float(), y)
        loss.backward()
        opt.step()
        steps.append({
            "loss": {"loss": loss.detach().to(torch.bfloat16)},
            "params": {n: p.detach().clone() for n, p in model.named_parameters()},
            "grads": {n: p.grad.detach().clone() for n, p in model.named_parameters()},
        })
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    runs = {
        "bf16": lambda t: t,
        "f32": lambda t: t.float(),
        "f64": lambda t: t.double(),
    }
    for run, conv in runs.items():
        write(run, steps, conv)
    # the f32 run with one parameter saved transposed: a shape difference
    write("reshaped", steps, lambda t: t.float(), transpose="0.weight")


def write(run, steps, conv, transpose=None):
    for k, kinds in enumerate(steps):
        d = os.path.join(OUT, run, "step_%06d" % k)
        os.makedirs(d)
        for kind, tensors in kinds.items():
            out = {}
            for n, t in tensors.items():
                t = conv(t)
                if n == transpose and kind == "params":
                    t = t.t().contiguous()
                out[n] = t
            torch.save(out, os.path.join(d, kind + ".pt"))


if __name__ == "__main__":
    main()
