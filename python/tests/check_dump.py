"""Exercise graphdiff_dump as a user would, right and wrong, and print
what happened as JSON (graphdiff's Go test reads it and compares the runs
written under OUT).

    python3 python/tests/check_dump.py OUT

Runs written: OUT/npy and OUT/st (the same two steps, .npy files and
safetensors files), OUT/ranks (ranks 0 and 1), OUT/nudged (the run of
OUT/npy from a model nudged by one ULP: a rounding-level baseline), and
check_taps.py's runs (OUT/taps_*).
"""
import json
import os
import stat
import sys

import torch

import check_taps
import graphdiff_dump
from graphdiff_dump import Dumper, dump, nudge


def train(run, steps=2, fmt="npy", rank=None, nudged=False, existing="refuse"):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 2))
    if nudged:
        nudge(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    d = Dumper(run, graphed=False, existing=existing, format=fmt, rank=rank)
    for step in range(steps):
        x, y = torch.randn(6, 4, generator=g), torch.randn(6, 2, generator=g)
        opt.zero_grad(set_to_none=True)
        out = model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        loss.backward()
        opt.step()
        # what people have in hand: loss.item(), a bare input tensor, a
        # list of outputs, a Python number among extras
        d.step(step, loss=loss.item(), model=model, optimizer=opt, inputs=x, outputs=[out], extra={"lr": 1e-2})
    return model


def wrong(call):
    try:
        call()
    except (TypeError, ValueError, FileExistsError) as e:
        return "%s: %s" % (type(e).__name__, e)
    return None


def main():
    out = sys.argv[1]
    res = {"module": graphdiff_dump.__file__}
    train(os.path.join(out, "npy"))
    train(os.path.join(out, "st"), fmt="safetensors")
    train(os.path.join(out, "ranks"), rank=0)
    train(os.path.join(out, "ranks"), rank=1)
    train(os.path.join(out, "nudged"), nudged=True)
    loss_file = os.path.join(out, "npy", "step_000000", "loss.npy")
    res["mode"] = oct(stat.S_IMODE(os.stat(loss_file).st_mode))
    res["st_files"] = sorted(os.listdir(os.path.join(out, "st", "step_000000")))
    res["optimizer_files"] = sorted(os.listdir(os.path.join(out, "npy", "step_000000", "optimizer", "0.weight")))
    res["buffers"] = sorted(f for f in os.listdir(os.path.join(out, "npy", "step_000000", "params")) if "running" in f)
    # a second dump into the same directory: refused, then cleared
    res["refused"] = wrong(lambda: train(os.path.join(out, "npy")))
    scratch = os.path.join(out, "scratch")
    train(scratch, steps=3)
    train(scratch, steps=1, existing="clear")
    res["after_clear"] = sorted(e for e in os.listdir(scratch) if e.startswith("step_"))
    # wrong calls, each refused with a message that says what was given
    d = Dumper(os.path.join(out, "wrong"))
    res["wrong"] = {
        "inputs_string": wrong(lambda: d.step(0, inputs="x")),
        "loss_string": wrong(lambda: d.step(0, loss="0.5")),
        "model_dict": wrong(lambda: d.step(0, model={"w": torch.zeros(2)})),
        "optimizer_model": wrong(lambda: d.step(0, optimizer=torch.nn.Linear(2, 2))),
        "step_negative": wrong(lambda: d.step(-1, loss=1.0)),
        "existing_bad": wrong(lambda: Dumper(os.path.join(out, "w2"), existing="overwrite")),
        "format_bad": wrong(lambda: Dumper(os.path.join(out, "w3"), format="hdf5")),
    }
    # the one-call form, with a 0-d tensor loss
    dump(os.path.join(out, "onecall"), 0, loss=torch.tensor(0.25), inputs={"x": torch.ones(3)})
    res["onecall"] = sorted(os.listdir(os.path.join(out, "onecall", "step_000000")))
    # nudge: every parameter one ULP away, bfloat16 included
    m = torch.nn.Linear(3, 3)
    before = [p.detach().clone() for p in m.parameters()]
    nudge(m)
    res["nudge_f32_moved"] = all(bool((a != p).all()) for a, p in zip(before, m.parameters()))
    res["nudge_f32_ulp"] = max(float(((p - a).abs() / torch.finfo(torch.float32).eps / a.abs().clamp_min(1e-30)).max())
                               for a, p in zip(before, m.parameters()))
    b = torch.nn.Linear(3, 3).to(torch.bfloat16)
    before = [p.detach().clone() for p in b.parameters()]
    nudge(b)
    res["nudge_bf16_moved"] = all(bool((a != p).all()) for a, p in zip(before, b.parameters()))
    # module taps (check_taps.py): its assertions fail this script
    res["taps"] = check_taps.check(out)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
