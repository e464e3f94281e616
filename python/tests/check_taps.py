"""Exercise graphdiff_dump.Taps on the CPU as a user would, right and wrong.

    python3 python/tests/check_taps.py OUT

Every check is an assertion: a failed one exits non-zero, naming it.
check_dump.py (which graphdiff's Go test runs) calls check(OUT) and adds
its summary to its JSON. Runs written: OUT/taps_npy, OUT/taps_st (the same
three steps with grads, .npy and safetensors), OUT/taps_tuple.
"""
import json
import os
import sys

import numpy as np
import torch

from graphdiff_dump import Dumper, Taps


class Pair(torch.nn.Module):
    """A leaf returning a tuple: (the tensor tapped, a second tensor)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        return y, y.sum()


class Dicty(torch.nn.Module):
    """A leaf returning a dict whose first tensor value is the output."""

    def forward(self, x):
        return {"note": "not a tensor", "hidden": x * 2, "other": x}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.ln = torch.nn.LayerNorm(8)
        self.act = torch.nn.GELU()
        self.block = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
        self.head = torch.nn.Linear(8, 2)

    def forward(self, x):
        # modules run in an order unlike their registration: head is
        # registered last and runs last, ln runs before fc1's second use
        return self.head(self.block(self.act(self.ln(self.fc1(x)))))


class TupleNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(4, 8)
        self.pair = Pair()
        self.dicty = Dicty()
        self.out = torch.nn.Linear(8, 1)

    def forward(self, x):
        y, _ = self.pair(self.inp(x))
        return self.out(self.dicty(y)["hidden"])


def load(path):
    return np.load(path, allow_pickle=False)


def read_st(path):
    """A safetensors file read by its documented layout (numpy only)."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        head = json.loads(f.read(n))
        data = f.read()
    out = {}
    for k, v in head.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        assert v["dtype"] == "F32", v
        out[k] = np.frombuffer(data[a:b], dtype="<f4").reshape(v["shape"])
    return out


def train(run, fmt="npy", grads=True, steps=3, model_cls=Net, taps_kw=None):
    """Three eager steps with taps; returns the model, the taps and what
    forward hooks saw (the reference the tap buffers must equal)."""
    torch.manual_seed(0)
    model = model_cls()
    taps = Taps(model, grads=grads, **(taps_kw or {}))
    seen = {}

    def spy(name):
        def hook(m, i, o):
            o = o[0] if isinstance(o, tuple) else o["hidden"] if isinstance(o, dict) else o
            seen[name] = o.detach().clone()
            if grads and o.requires_grad:
                o.register_hook(lambda g: seen.__setitem__(name + "#grad", g.detach().clone()))
        return hook
    for name, m in model.named_modules():
        if name in taps.names:
            m.register_forward_hook(spy(name))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    d = Dumper(run, graphed=False, format=fmt)
    for step in range(steps):
        x = torch.randn(5, 4, generator=g)
        opt.zero_grad(set_to_none=True)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        d.step(step, loss=loss, model=model, inputs=x, taps=taps)
    return model, taps, seen


def refused(call, kinds=(TypeError, ValueError, RuntimeError)):
    try:
        call()
    except kinds as e:
        return "%s: %s" % (type(e).__name__, e)
    raise AssertionError("not refused: %r" % (call,))


def check(out):
    res = {}
    # the eager path, .npy: every leaf in forward order, buffers equal to
    # what a forward hook sees, gradients too
    run = os.path.join(out, "taps_npy")
    model, taps, seen = train(run)
    order = ["fc1", "ln", "act", "block.0", "block.1", "head"]
    assert taps.order == order, taps.order
    with open(os.path.join(run, "manifest.json")) as f:
        entry = json.load(f)["run"]["taps"]
    want = {"modules": [{"name": n, "type": t} for n, t in zip(order, ["Linear", "LayerNorm", "GELU", "Linear", "ReLU", "Linear"])],
            "grads": True}
    assert entry == want, entry
    step2 = os.path.join(run, "step_000002")
    assert sorted(os.listdir(os.path.join(step2, "activations"))) == sorted(n + ".npy" for n in order)
    assert sorted(os.listdir(os.path.join(step2, "activation_grads"))) == sorted(n + ".npy" for n in order)
    for n in order:
        assert np.array_equal(load(os.path.join(step2, "activations", n + ".npy")), seen[n].numpy()), n
        assert np.array_equal(load(os.path.join(step2, "activation_grads", n + ".npy")), seen[n + "#grad"].numpy()), n
    # the buffers are the step's, not the first step's
    assert not np.array_equal(load(os.path.join(run, "step_000000", "activations", "head.npy")),
                              load(os.path.join(step2, "activations", "head.npy")))
    res["npy_order"] = entry["modules"][0]["name"] + ".." + entry["modules"][-1]["name"]

    # safetensors: one file per kind, keys = module names, same values
    st = os.path.join(out, "taps_st")
    train(st, fmt="safetensors")
    files = sorted(os.listdir(os.path.join(st, "step_000002")))
    assert "activations.safetensors" in files and "activation_grads.safetensors" in files, files
    acts = read_st(os.path.join(st, "step_000002", "activations.safetensors"))
    assert sorted(acts) == sorted(order), sorted(acts)
    for n in order:
        assert np.array_equal(acts[n], load(os.path.join(step2, "activations", n + ".npy"))), n
    res["st_files"] = files

    # grads=False: no activation_grads kind, and the manifest says so
    plain = os.path.join(out, "taps_plain")
    train(plain, grads=False, steps=1)
    assert not os.path.exists(os.path.join(plain, "step_000000", "activation_grads"))
    with open(os.path.join(plain, "manifest.json")) as f:
        assert json.load(f)["run"]["taps"]["grads"] is False

    # tuple and dict outputs: the first tensor
    tup = os.path.join(out, "taps_tuple")
    _, ttaps, tseen = train(tup, model_cls=TupleNet, taps_kw={"leaves": False})
    # a hook fires when its module returns: a container after its children
    assert ttaps.order == ["inp", "pair.lin", "pair", "dicty", "out"], ttaps.order
    assert np.array_equal(load(os.path.join(tup, "step_000002", "activations", "pair.npy")), tseen["pair"].numpy())
    assert np.array_equal(load(os.path.join(tup, "step_000002", "activations", "dicty.npy")), tseen["dicty"].numpy())
    res["tuple_order"] = ttaps.order

    # patterns: include and exclude, fnmatch over qualified names
    pat = Taps(Net(), include=("block.*", "head"), exclude="*.1")
    assert pat.names == ["block.0", "head"], pat.names
    assert Taps(Net(), include="fc?").names == ["fc1"]
    assert Taps(Net(), include="block", leaves=False).names == ["block"]
    assert Taps(Net(), leaves=False).names == ["fc1", "ln", "act", "block", "block.0", "block.1", "head"]

    # remove(): the hooks are gone, the buffers keep their last values
    m = Net()
    t = Taps(m)
    m(torch.ones(2, 4))
    before = t.activations()["head"].clone()
    t.remove()
    m(torch.zeros(2, 4))
    assert torch.equal(t.activations()["head"], before)

    # paused(): another batch size passes untapped; outside, it is refused
    m = Net()
    t = Taps(m)
    m(torch.ones(2, 4))
    with t.paused():
        m(torch.ones(7, 4))
    res["shape_change"] = refused(lambda: m(torch.ones(7, 4)), RuntimeError)
    assert "fc1" in res["shape_change"] and "paused" in res["shape_change"], res["shape_change"]

    # wrong calls: refused with a message naming what was given
    wrong = {
        "no_match": refused(lambda: Taps(Net(), include="encoder.*")),
        "all_excluded": refused(lambda: Taps(Net(), exclude="*")),
        "leaf_model": refused(lambda: Taps(torch.nn.Linear(2, 2))),
        "not_module": refused(lambda: Taps({"fc": torch.nn.Linear(2, 2)})),
        "pattern_type": refused(lambda: Taps(Net(), include=[3])),
        "taps_type": refused(lambda: Dumper(os.path.join(out, "taps_w1")).step(0, taps=["fc1"])),
        "no_forward": refused(lambda: Dumper(os.path.join(out, "taps_w2")).step(0, taps=Taps(Net()))),
    }
    assert "encoder.*" in wrong["no_match"] and "fc1" in wrong["no_match"], wrong["no_match"]
    assert "no submodules" in wrong["leaf_model"], wrong["leaf_model"]
    assert "no forward" in wrong["no_forward"], wrong["no_forward"]

    # a later step whose forward order differs from the manifest's: refused
    run = os.path.join(out, "taps_order")
    m = Net()
    t = Taps(m)
    d = Dumper(run)
    m(torch.ones(2, 4))
    d.step(0, taps=t)
    t.order.reverse()  # as if another forward order had been seen
    wrong["order_changed"] = refused(lambda: d.step(1, taps=t), ValueError)
    assert "forward order differs" in wrong["order_changed"] and "fc1 there, head now" in wrong["order_changed"], \
        wrong["order_changed"]
    for k, msg in wrong.items():
        assert msg.split(": ", 1)[1].startswith(("graphdiff taps:", "graphdiff dump:")), (k, msg)
    res["wrong"] = wrong
    return res


if __name__ == "__main__":
    print(json.dumps(check(sys.argv[1]), indent=1))
