#!/usr/bin/env python3
"""optim_rounding: how far a capturable (or fused) torch.optim rule's
parameter update departs from the eager (foreach, Python-float) one at
each optimizer step t, from the scalar arithmetic alone.

The capturable and fused implementations keep the step count on the device
and compute the step-dependent scalars (bias corrections 1 − β^t, RAdam's
rectification ρ_t, NAdam's momentum products) in float32; the eager ones
compute them in Python floats (float64). Both do the same element-wise
arithmetic on the moments, so the two updates of one step differ by a
factor: the float32 rounding of those scalars. This script measures that
factor, β_t = Σ(u_B − u_A)·u_A / Σu_A² over one tensor's update, with both
copies given the same parameters, moments and gradient before each step
(nothing carried over), and prints it beside what judge/steps.go's
radamRect predicts for RAdam (pred, and its rounding e), and counts the
steps the update rule would fail where the gradients are equal: |β| less
the RAdam shift beyond the Adam term of the update limit.

Usage (a CUDA machine, PyTorch 2.x):

    python3 testdata/gen/optim_rounding.py > testdata/gen/optim_rounding.txt
"""
import math

import torch

STEPS = 200
N = 1 << 16
B2 = 0.999


def rules():
    yield "Adam", torch.optim.Adam, {}
    yield "AdamW", torch.optim.AdamW, {"weight_decay": 0.01}
    yield "NAdam", torch.optim.NAdam, {}
    yield "RAdam", torch.optim.RAdam, {}
    yield "Adamax", torch.optim.Adamax, {}
    yield "RMSprop", torch.optim.RMSprop, {}


def radam_rect(t, b2=B2):
    """judge/steps.go's radamRect(t): the capturable RAdam's update over
    the eager one's, minus 1, that float32 arithmetic predicts (pred), and
    the rounding of that prediction (e); (0, 0) before rectification."""
    import numpy as np

    def term(b):
        bt = b ** t
        return 2 * t * bt / (1 - bt)

    rho_inf = 2 / (1 - b2) - 1
    rho, rho32 = rho_inf - term(b2), rho_inf - term(float(np.float32(b2)))
    if rho <= 5 or rho32 <= 5:
        return 0.0, 0.0

    def rect(r):
        return math.sqrt((r - 4) * (r - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * r))

    delta = term(b2) * 2.0 ** -24 / (1 - b2 ** t)
    return rect(rho32) / rect(rho) - 1, 0.5 * delta * (1 / (rho - 4) + 1 / (rho - 2) - 1 / rho)


# the Adam term of the update limit: Update (testdata/gen/calibrate.py) times 2^-23/(1 - beta2)
ADAM_TERM = 0.27 * 2.0 ** -23 / (1 - B2)


def left(beta, t):
    """|beta| less what the update rule allows it: the RAdam shift (beta
    clamped to pred +- e, widened to take in 0) and the Adam term; > 0
    where the rule would fail a step whose gradients agree exactly."""
    pred, e = radam_rect(t)
    lo, hi = min(0.0, pred - e), max(0.0, pred + e)
    return abs(beta - min(max(beta, lo), hi)) - ADAM_TERM


def main():
    dev = "cuda"
    g = torch.Generator(device="cpu").manual_seed(0)
    p0 = torch.randn(N, generator=g).to(dev)
    grads = [torch.randn(N, generator=g).to(dev) * 1e-2 for _ in range(8)]
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, N = {N}, beta2 = {B2}")
    worst = {}
    for name, cls, kw in rules():
        impls = [("capturable", {"capturable": True, "foreach": True})]
        if name in ("Adam", "AdamW"):
            impls.append(("fused", {"fused": True}))
        for impl, ikw in impls:
            a = torch.nn.Parameter(p0.clone())
            b = torch.nn.Parameter(p0.clone())
            oa = cls([a], lr=1e-3, foreach=True, **kw)
            ob = cls([b], lr=1e-3, **ikw, **kw)
            for t in range(1, STEPS + 1):
                gr = grads[t % len(grads)]
                with torch.no_grad():
                    b.copy_(a)
                    for k, v in oa.state[a].items():
                        if torch.is_tensor(v) and k != "step" and k in ob.state.get(b, {}):
                            ob.state[b][k].copy_(v)
                a.grad, b.grad = gr.clone(), gr.clone()
                pa, pb = a.detach().clone(), b.detach().clone()
                oa.step()
                ob.step()
                ua, ub = (a.detach() - pa).double(), (b.detach() - pb).double()
                uu = float((ua * ua).sum())
                beta = float(((ub - ua) * ua).sum()) / uu if uu > 0 else 0.0
                key = (name, impl)
                worst.setdefault(key, []).append(beta)
    print(f"{'t':>4} " + " ".join(f"{n + '/' + i:>18}" for (n, i) in worst) + f" {'radam pred':>11} {'e':>9}")
    for t in list(range(1, 21)) + [30, 50, 100, 200]:
        row = " ".join(f"{worst[k][t - 1]:+18.3g}" for k in worst)
        pred, e = radam_rect(t)
        print(f"{t:>4} {row} {pred:+11.3g} {e:9.3g}")
    over = [(k, t + 1, b) for k, bs in worst.items() for t, b in enumerate(bs) if left(b, t + 1) > 0]
    print(f"steps (of {STEPS} per rule) the update rule would fail with gradients equal: {len(over)}"
          + (f"; worst {max(over, key=lambda x: left(x[2], x[1]))}" if over else ""))

if __name__ == "__main__":
    main()
