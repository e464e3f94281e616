#!/usr/bin/env python3
"""taps_gpu: a labelled corpus of graphed training runs dumped with module
taps (graphdiff_dump.Taps), each bug placed in a known module, for
locating the first module that departs.

Usage (from the repository root):

    python3 testdata/gen/taps_gpu.py OUTDIR            # CUDA machine, PyTorch 2.x: every run, then OUTDIR.tar.xz
    python3 testdata/gen/taps_gpu.py --cpu-check OUTDIR  # no GPU: the eager halves only, labels from two eager runs
    python3 testdata/gen/taps_gpu.py --only NAME,... OUTDIR
    python3 testdata/gen/taps_gpu.py --relabel testdata/taps   # refine_label on the committed runs

Unpack: mkdir -p testdata/taps && tar -xJf OUTDIR.tar.xz -C testdata/taps
(the archive holds <run>/{eager,graph,label.json}, README.md, taps_gpu.log).

How the runs are made (PyTorch's "CUDA Graphs" notes):
- cuda.graph: the whole step (forward, loss, backward, optimizer.step())
  captured with torch.cuda.graph after 3 warm-up steps on a side stream
  (training steps, in both runs); static input and target, refilled with
  .copy_() before each g.replay(). Dumped steps 3..7.
- make_graphed_callables: the model alone graphed
  (torch.cuda.make_graphed_callables(model, (sample_x,))), loss, backward
  and optimizer eager. Its own 3 warm-up forwards (which move BatchNorm
  statistics and draw random numbers) are mirrored in the eager twin by 3
  forwards of the same sample under no_grad. Dumped steps 0..4.
- compile: torch.compile(model, mode="reduce-overhead") (inductor's CUDA
  graphs), with torch._inductor.config.fallback_random so dropout draws as
  eager does; the taps' buffers are made by one eval forward first.
Every run: float32, TF32 off, deterministic algorithms (warn only), one
seed; Dumper(..., graphed=...) with loss, model (params, grads, buffers),
inputs and the taps (grads=True on some). Eager twin: the same user code,
bug included (every bug here is harmless eagerly), without graphs.

Families: mlp (fc1, ln, act, drop, fc2, [fgain], scale, gate, head: an MLP with
LayerNorm, dropout, a scheduled scale and an activation clamp switched on
later; SGD momentum), tfm (a pre-LN transformer block over 6 positions:
inp, [noise], ln1, attn.qkv, attn.core, attn.proj, ln2, mlp.fc1, mlp.act,
mlp.clip, mlp.fc2, lnf, head; key-padding mask and softmax temperature in
attn.core; Adam capturable), conv (norm, conv1, bn1, relu1, [cgain], [jitter], pool,
conv2, gn, relu2, gap, head, temp: dataset normalisation, BatchNorm,
GroupNorm, a pooling switch and a logit temperature; SGD momentum); the
bracketed modules only in the runs of the bug that needs them.

Bugs (each a graph bug users make, each harmless eagerly):
- stale_input: static_x = batch instead of static_x.copy_(batch): the graph
  reads the capture's batch every replay (the first module departs);
- input_lag: static_x.copy_(batch) after g.replay() instead of before: each
  replay reads the batch before (the first module departs);
- frozen_rng: a dropout mask drawn with numpy (into a pinned buffer copied
  to the GPU), Gaussian noise likewise, or a Python random.uniform jitter
  factor, all drawn in forward(): drawn once at capture, baked in;
- captured_scalar: a Python float attribute (scale, softmax temperature,
  logit temperature) scheduled after capture;
- reassigned_tensor: a tensor attribute (a scale schedule's element, the
  batch's key-padding mask, per-batch normalisation statistics, a gain per
  feature or per channel set each step) reassigned (module.x = t) instead
  of copied into (module.x.copy_(t));
- captured_branch: a Python `if` in forward (an activation clamp, max vs
  average pooling) switched by a flag after capture.

Labels are observed: each buggy graphed run is run again with the bug fixed
(the fix users apply: copy_ into the static tensor, a device tensor for the
scalar, the draw moved out of the graph into the loop, torch.where on a
device flag); the fixed twin is run twice (it must repeat bit for bit). The
label's module is the first tapped module, in forward order, whose output
in the buggy run departs (bitwise) from the fixed twin's at the first step
where any dumped tensor departs, while its input (the previous tapped
module's output, or inputs/x for the first) agrees bit for bit.
placed_module is where the bug was put; the log says where they disagree.
"""
import argparse
import json
import os
import random
import shutil
import sys
import tarfile
import time
import traceback

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
from graphdiff_dump import Dumper, Taps  # noqa: E402

SEED = 1234
WARMUP = 3   # cuda.graph recipe's warm-up steps (training steps)
STEPS = 5    # dumped steps
LOG = []


def log(*parts):
    line = " ".join(str(p) for p in parts)
    print(line, flush=True)
    LOG.append(line)


def capturing():
    return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


# ---------------------------------------------------------------- modules

class Scale(nn.Module):
    """x * temp: temp a Python float (mode "float"), or a tensor attribute
    (mode "tensor": set by copy_ when fixed, reassigned when buggy)."""

    def __init__(self, mode, value=1.0, device="cpu"):
        super().__init__()
        self.mode = mode
        self.temp = float(value) if mode == "float" else torch.full((), float(value), device=device)

    def forward(self, x):
        return x * self.temp


class HostNoise(nn.Module):
    """Noise drawn with numpy into a pinned host buffer and copied to the
    GPU (non_blocking, which capture allows): a dropout mask (kind "mask")
    or additive Gaussian noise (kind "gauss"). in_forward=True draws inside
    forward() (eagerly fine; under a graph drawn once, at capture);
    in_forward=False reads the device buffer the loop refreshes (draw())
    before each step or replay: the fix."""

    def __init__(self, shape, kind, p_or_alpha, in_forward, device, seed):
        super().__init__()
        self.kind, self.p, self.in_forward = kind, float(p_or_alpha), in_forward
        self.rng = np.random.default_rng(seed)
        pin = torch.cuda.is_available() and str(device).startswith("cuda")
        self.host = torch.zeros(shape, pin_memory=pin)
        self.dev = torch.zeros(shape, device=device)

    def draw(self):
        if not capturing():
            # the previous non_blocking copy must have read the host
            # buffer before it is written again (a harness detail)
            if self.dev.is_cuda:
                torch.cuda.current_stream().synchronize()
        if self.kind == "mask":
            v = (self.rng.random(tuple(self.host.shape)) >= self.p).astype(np.float32) / (1.0 - self.p)
        else:
            v = self.rng.standard_normal(tuple(self.host.shape)).astype(np.float32) * self.p
        self.host.copy_(torch.from_numpy(v))
        self.dev.copy_(self.host, non_blocking=True)

    def forward(self, x):
        if self.in_forward:
            self.draw()
        return x * self.dev if self.kind == "mask" else x + self.dev


class PyJitter(nn.Module):
    """x * a factor drawn with Python's random.uniform: in forward() a
    Python float (baked in at capture), or (fixed) a device tensor the loop
    fills before each step."""

    def __init__(self, in_forward, device, seed):
        super().__init__()
        self.in_forward = in_forward
        self.rng = random.Random(seed)
        self.factor = torch.ones((), device=device)

    def draw(self):
        self.factor.fill_(self.rng.uniform(0.8, 1.2))

    def forward(self, x):
        if self.in_forward:
            return x * self.rng.uniform(0.8, 1.2)
        return x * self.factor


class SwitchClamp(nn.Module):
    """Clamps to [-c, c] once switched on. branch=True: a Python `if` on
    self.clip (decided at capture); else a device limit, inf until on."""

    def __init__(self, branch, device, c=0.5):
        super().__init__()
        self.branch, self.c, self.clip = branch, c, None
        self.limit = torch.full((), float("inf"), device=device)

    def switch_on(self):
        if self.branch:
            self.clip = self.c
        else:
            self.limit.fill_(self.c)

    def forward(self, x):
        if self.branch:
            if self.clip is not None:
                x = x.clamp(-self.clip, self.clip)
            return x
        return torch.minimum(torch.maximum(x, -self.limit), self.limit)


class SwitchPool(nn.Module):
    """Average pooling, max pooling once switched: a Python `if`
    (branch=True) or torch.where on a device flag."""

    def __init__(self, branch, device):
        super().__init__()
        self.branch, self.use_max = branch, False
        self.flag = torch.zeros((), dtype=torch.bool, device=device)

    def switch_on(self):
        if self.branch:
            self.use_max = True
        else:
            self.flag.fill_(True)

    def forward(self, x):
        if self.branch:
            return F.max_pool2d(x, 2) if self.use_max else F.avg_pool2d(x, 2)
        return torch.where(self.flag, F.max_pool2d(x, 2), F.avg_pool2d(x, 2))


class AttnCore(nn.Module):
    """Multi-head attention from a qkv projection: softmax(q k^T / sqrt(d)
    / temp + mask) v, with a key-padding mask attribute (B, T) and a
    temperature (Python float or tensor attribute)."""

    def __init__(self, heads, temp_mode, device, batch, seq):
        super().__init__()
        self.heads = heads
        self.temp = 1.0 if temp_mode == "float" else torch.ones((), device=device)
        self.mask = torch.zeros(batch, seq, device=device)

    def forward(self, qkv):
        b, t, three_d = qkv.shape
        d = three_d // 3
        q, k, v = qkv.view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5
        scores = scores / self.temp + self.mask[:, None, None, :]
        return (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)


class FeatureGain(nn.Module):
    """x times a gain tensor attribute g (per feature or per channel,
    broadcast), set from the loop each step."""

    def __init__(self, shape, device):
        super().__init__()
        self.g = torch.ones(shape, device=device)

    def forward(self, x):
        return x * self.g


class Normalize(nn.Module):
    """(x - mean) / std per channel, mean and std tensor attributes."""

    def __init__(self, device):
        super().__init__()
        self.mean = torch.zeros(1, 3, 1, 1, device=device)
        self.std = torch.ones(1, 3, 1, 1, device=device)

    def forward(self, x):
        return (x - self.mean) / self.std


class GlobalPool(nn.Module):
    def forward(self, x):
        return x.mean((2, 3))


# ---------------------------------------------------------------- families

class MLP(nn.Module):
    B, DIN, H, C = 8, 8, 32, 4

    def __init__(self, cfg, device):
        super().__init__()
        bug, fixed = cfg["bug_code"], cfg["fixed"]
        self.fc1 = nn.Linear(self.DIN, self.H)
        self.ln = nn.LayerNorm(self.H)
        self.act = nn.GELU()
        if bug == "numpy_dropout":
            self.drop = HostNoise((self.B, self.H), "mask", 0.1, not fixed, device, SEED)
        else:
            self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(self.H, self.H)
        self.fgain = FeatureGain((self.H,), device) if bug == "gain_reassigned" else None
        self.scale = Scale("float" if bug == "scale_float" and not fixed else "tensor", 1.0, device)
        self.gate = SwitchClamp(bug == "clip_branch" and not fixed, device)
        self.head = nn.Linear(self.H, self.C)

    def forward(self, x):
        h = self.fc2(self.drop(self.act(self.ln(self.fc1(x)))))
        if self.fgain is not None:
            h = self.fgain(h)
        return self.head(self.gate(self.scale(h)))


class Block(nn.Module):
    def __init__(self, d, device, cfg, batch, seq):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.core = AttnCore(2, "float" if cfg["bug_code"] == "temp_float" and not cfg["fixed"] else "tensor",
                             device, batch, seq)
        self.proj = nn.Linear(d, d)


class FF(nn.Module):
    def __init__(self, d, device, cfg):
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.act = nn.GELU()
        self.clip = SwitchClamp(cfg["bug_code"] == "clip_branch" and not cfg["fixed"], device, c=0.3)
        self.fc2 = nn.Linear(2 * d, d)


class TFM(nn.Module):
    B, T, DIN, D, C = 4, 6, 8, 16, 5

    def __init__(self, cfg, device):
        super().__init__()
        self.inp = nn.Linear(self.DIN, self.D)
        self.noise = (HostNoise((self.B, self.T, self.D), "gauss", 0.1, not cfg["fixed"], device, SEED)
                      if cfg["bug_code"] == "numpy_noise" else None)
        self.ln1 = nn.LayerNorm(self.D)
        self.attn = Block(self.D, device, cfg, self.B, self.T)
        self.ln2 = nn.LayerNorm(self.D)
        self.mlp = FF(self.D, device, cfg)
        self.lnf = nn.LayerNorm(self.D)
        self.head = nn.Linear(self.D, self.C)

    def forward(self, x):
        h = self.inp(x)
        if self.noise is not None:
            h = self.noise(h)
        a = self.attn
        h = h + a.proj(a.core(a.qkv(self.ln1(h))))
        m = self.mlp
        h = h + m.fc2(m.clip(m.act(m.fc1(self.ln2(h)))))
        return self.head(self.lnf(h).mean(1))


class Conv(nn.Module):
    B, HW, C = 4, 8, 4

    def __init__(self, cfg, device):
        super().__init__()
        bug, fixed = cfg["bug_code"], cfg["fixed"]
        self.norm = Normalize(device)
        self.conv1 = nn.Conv2d(3, 6, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(6)
        self.relu1 = nn.ReLU()
        self.cgain = FeatureGain((1, 6, 1, 1), device) if bug == "gain_reassigned" else None
        self.jitter = PyJitter(not fixed, device, SEED) if bug == "py_jitter" else None
        self.pool = SwitchPool(bug == "pool_branch" and not fixed, device)
        self.conv2 = nn.Conv2d(6, 8, 3, padding=1)
        self.gn = nn.GroupNorm(4, 8)
        self.relu2 = nn.ReLU()
        self.gap = GlobalPool()
        self.head = nn.Linear(8, self.C)
        self.temp = Scale("float" if bug == "temp_float" and not fixed else "tensor", 1.0, device)

    def forward(self, x):
        h = self.relu1(self.bn1(self.conv1(self.norm(x))))
        if self.cgain is not None:
            h = self.cgain(h)
        if self.jitter is not None:
            h = self.jitter(h)
        h = self.relu2(self.gn(self.conv2(self.pool(h))))
        return self.temp(self.head(self.gap(h)))


FAMILIES = {"mlp": MLP, "tfm": TFM, "conv": Conv}


def batches(family, n, device):
    """n (x, y) pairs, the same for every run of a family; per-step extras
    (tfm: key-padding masks; conv: normalisation statistics)."""
    g = torch.Generator().manual_seed(SEED + 1)
    cls = FAMILIES[family]
    out, extras = [], []
    for _ in range(n):
        if family == "mlp":
            x = torch.randn(cls.B, cls.DIN, generator=g)
        elif family == "tfm":
            x = torch.randn(cls.B, cls.T, cls.DIN, generator=g)
        else:
            x = torch.rand(cls.B, 3, cls.HW, cls.HW, generator=g) * 2 + 0.5
        y = torch.randint(0, cls.C, (cls.B,), generator=g)
        out.append((x.to(device), y.to(device)))
        if family == "tfm":
            lengths = torch.randint(3, cls.T + 1, (cls.B,), generator=g)
            mask = torch.where(torch.arange(cls.T)[None, :] < lengths[:, None], 0.0, -1e4)
            extras.append(mask.to(device))
        elif family == "conv":
            extras.append((x.mean((0, 2, 3), keepdim=True).to(device), x.std((0, 2, 3), keepdim=True).to(device)))
        else:
            extras.append(None)
    return out, extras


# ---------------------------------------------------------------- the runs

# name, family, graphed_with, bug (cause id or None), bug_code, placed module, grads, note
RUNS = [
    ("mlp_stale_input", "mlp", "cuda.graph", "stale_input", "stale_input", "fc1", True,
     "static_x = x instead of static_x.copy_(x) before g.replay()"),
    ("mlp_numpy_dropout", "mlp", "cuda.graph", "frozen_rng", "numpy_dropout", "drop", False,
     "dropout mask drawn with numpy in forward() into a pinned buffer copied to the GPU"),
    ("mlp_scale_float", "mlp", "cuda.graph", "captured_scalar", "scale_float", "scale", True,
     "scale.temp, a Python float, scheduled (x0.8 a step from step 5) after capture"),
    ("mlp_scale_reassigned", "mlp", "make_graphed_callables", "reassigned_tensor", "scale_reassigned", "scale", False,
     "scale.temp = schedule[step] (an element of a device tensor) instead of scale.temp.copy_(...)"),
    ("mlp_clip_branch", "mlp", "cuda.graph", "captured_branch", "clip_branch", "gate", False,
     "gate: `if self.clip is not None: x = x.clamp(...)`, clip set at step 6, after capture"),
    ("tfm_stale_input", "tfm", "cuda.graph", "stale_input", "stale_input", "inp", True,
     "static_x = x instead of static_x.copy_(x) before g.replay()"),
    ("tfm_temp_float", "tfm", "cuda.graph", "captured_scalar", "temp_float", "attn.core", False,
     "attn.core.temp, a Python float softmax temperature, annealed from step 4 after capture"),
    ("tfm_mask_reassigned", "tfm", "make_graphed_callables", "reassigned_tensor", "mask_reassigned", "attn.core", True,
     "attn.core.mask = the batch's key-padding mask (reassigned) instead of copy_"),
    ("tfm_numpy_noise", "tfm", "make_graphed_callables", "frozen_rng", "numpy_noise", "noise", False,
     "embedding noise drawn with numpy in forward() into a pinned buffer copied to the GPU"),
    ("tfm_clip_branch", "tfm", "make_graphed_callables", "captured_branch", "clip_branch", "mlp.clip", True,
     "mlp.clip: a Python `if` on self.clip, switched on at step 2, after capture"),
    ("conv_stale_input", "conv", "cuda.graph", "stale_input", "stale_input", "norm", False,
     "static_x = x instead of static_x.copy_(x) before g.replay()"),
    ("conv_norm_reassigned", "conv", "cuda.graph", "reassigned_tensor", "norm_reassigned", "norm", True,
     "norm.mean, norm.std = the batch's statistics (reassigned) instead of copy_"),
    ("conv_py_jitter", "conv", "cuda.graph", "frozen_rng", "py_jitter", "jitter", False,
     "feature jitter factor random.uniform(0.8, 1.2) drawn in forward()"),
    ("conv_temp_float", "conv", "make_graphed_callables", "captured_scalar", "temp_float", "temp", True,
     "temp.temp, a Python float logit temperature, annealed from step 2 after capture"),
    ("conv_pool_branch", "conv", "cuda.graph", "captured_branch", "pool_branch", "pool", False,
     "pool: `if self.use_max` max else average pooling, switched at step 6, after capture"),
    ("mlp_input_lag", "mlp", "cuda.graph", "input_lag", "input_lag", "fc1", False,
     "static_x.copy_(x) after g.replay(): each replay reads the batch before"),
    ("tfm_input_lag", "tfm", "cuda.graph", "input_lag", "input_lag", "inp", True,
     "static_x.copy_(x) after g.replay(): each replay reads the batch before"),
    ("conv_input_lag", "conv", "cuda.graph", "input_lag", "input_lag", "norm", True,
     "static_x.copy_(x) after g.replay(): each replay reads the batch before"),
    ("mlp_gain_reassigned", "mlp", "make_graphed_callables", "reassigned_tensor", "gain_reassigned", "fgain", False,
     "fgain.g = the step's gain per feature (reassigned) instead of fgain.g.copy_(...)"),
    ("conv_gain_reassigned", "conv", "cuda.graph", "reassigned_tensor", "gain_reassigned", "cgain", True,
     "cgain.g = the step's gain per channel (reassigned) instead of cgain.g.copy_(...)"),
    ("mlp_ok", "mlp", "cuda.graph", None, None, None, True, "correct"),
    ("tfm_ok", "tfm", "make_graphed_callables", None, None, None, True, "correct"),
    ("conv_ok", "conv", "cuda.graph", None, None, None, True, "correct"),
    ("mlp_compile_ok", "mlp", "compile", None, None, None, False, "correct; torch.compile(mode='reduce-overhead')"),
]


def schedule(bug_code, model, step, fixed, extras):
    """What the loop does before step `step` (warm-up steps included):
    schedules, per-batch attributes, draws moved out of the graph."""
    bug = not fixed  # the buggy run rebinds where the fixed one copies
    if isinstance(model, MLP):
        if bug_code == "scale_reassigned":
            set_value(model.scale, "temp", extras["sched"][step], bug)
        else:
            set_value(model.scale, "temp", 1.0 if step < 5 else 0.8 ** (step - 4), bug and bug_code == "scale_float")
        if step == 6:
            model.gate.switch_on()
        if bug_code == "numpy_dropout" and fixed:
            model.drop.draw()
        if bug_code == "gain_reassigned":
            set_value(model.fgain, "g", extras["gain"][step], bug)
    elif isinstance(model, TFM):
        set_value(model.attn.core, "temp", 1.0 if step < 4 else 1.0 + 0.5 * (step - 3), bug and bug_code == "temp_float")
        set_value(model.attn.core, "mask", extras["data"][step], bug and bug_code == "mask_reassigned")
        if step == 2:
            model.mlp.clip.switch_on()
        if bug_code == "numpy_noise" and fixed:
            model.noise.draw()
    else:
        mean, std = extras["data"][step]
        set_value(model.norm, "mean", mean, bug and bug_code == "norm_reassigned")
        set_value(model.norm, "std", std, bug and bug_code == "norm_reassigned")
        set_value(model.temp, "temp", 1.0 if step < 2 else 1.0 + 0.25 * (step - 1), bug and bug_code == "temp_float")
        if step == 6:
            model.pool.switch_on()
        if bug_code == "py_jitter" and fixed:
            model.jitter.draw()
        if bug_code == "gain_reassigned":
            set_value(model.cgain, "g", extras["gain"][step], bug)


def set_value(module, name, value, rebind):
    """The loop's new value for module.name, a tensor the graph reads:
    copied into it in place (fill_ for a Python number), or, where rebind
    (the bug), the attribute bound to the new value (a tensor, or a Python
    float where the module keeps a number), which the graph never reads."""
    if rebind:
        setattr(module, name, value)
    elif isinstance(value, torch.Tensor):
        getattr(module, name).copy_(value)
    else:
        getattr(module, name).fill_(value)


def make_optimizer(family, model):
    if family == "tfm":
        return torch.optim.Adam(model.parameters(), lr=3e-3, capturable=next(model.parameters()).is_cuda)
    return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def build(family, bug_code, fixed, device):
    torch.manual_seed(SEED)
    model = FAMILIES[family]({"bug_code": bug_code, "fixed": fixed}, device).to(device)
    extras = {}
    n = WARMUP + STEPS
    data, per_step = batches(family, n, device)
    extras["data"] = per_step
    if bug_code == "scale_reassigned":
        extras["sched"] = torch.tensor([1.0 if s < 2 else 0.8 ** (s - 1) for s in range(n)], device=device)
    if bug_code == "gain_reassigned":
        g = torch.Generator().manual_seed(SEED + 2)
        shape = model.fgain.g.shape if family == "mlp" else model.cgain.g.shape
        extras["gain"] = [(1 + 0.25 * torch.randn(shape, generator=g)).to(device) for _ in range(n)]
    return model, data, extras


def train_eager(run_dir, family, method, bug_code, grads, device, fixed=False):
    """The user's loop without graphs (the bug's code is harmless here)."""
    model, data, extras = build(family, bug_code, fixed, device)
    taps = Taps(model, grads=grads)
    opt = make_optimizer(family, model)
    d = Dumper(run_dir, graphed=False, existing="clear", labels={"harness": "taps_gpu", "method": method})
    first = WARMUP if method == "cuda.graph" else 0
    if method == "make_graphed_callables":
        schedule(bug_code, model, 0, fixed, extras)
        with torch.no_grad():  # mirrors make_graphed_callables' 3 warm-up forwards
            for _ in range(3):
                model(data[0][0])
    if method == "compile":
        model.eval()
        with torch.no_grad():  # mirrors the compiled run's priming forward
            model(data[0][0])
        model.train()
    for step in range(first + STEPS):
        schedule(bug_code, model, step, fixed, extras)
        x, y = data[step]
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if step >= first:
            d.step(step, loss=loss, model=model, inputs=x, taps=taps)


def train_cuda_graph(run_dir, family, bug_code, grads, fixed):
    """PyTorch's whole-network capture recipe."""
    model, data, extras = build(family, bug_code, fixed, "cuda")
    taps = Taps(model, grads=grads)
    opt = make_optimizer(family, model)
    static_x, static_y = data[0][0].clone(), data[0][1].clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(WARMUP):
            schedule(bug_code, model, i, fixed, extras)
            static_x.copy_(data[i][0])
            static_y.copy_(data[i][1])
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(static_x), static_y)
            loss.backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        static_loss = F.cross_entropy(model(static_x), static_y)
        static_loss.backward()
        opt.step()
    d = Dumper(run_dir, graphed=True, existing="clear", labels={"harness": "taps_gpu", "method": "cuda.graph"})
    for step in range(WARMUP, WARMUP + STEPS):
        schedule(bug_code, model, step, fixed, extras)
        x, y = data[step]
        lag = bug_code == "input_lag" and not fixed
        if bug_code == "stale_input" and not fixed:
            static_x = x  # the bug: the graph still reads the old static_x
        elif not lag:
            static_x.copy_(x)
        static_y.copy_(y)
        g.replay()
        if lag:
            static_x.copy_(x)  # the bug: the batch reaches the static input after the replay
        d.step(step, loss=static_loss, model=model, inputs=static_x, taps=taps)


def train_graphed_callables(run_dir, family, bug_code, grads, fixed):
    """The model alone graphed with make_graphed_callables."""
    model, data, extras = build(family, bug_code, fixed, "cuda")
    taps = Taps(model, grads=grads)
    opt = make_optimizer(family, model)
    schedule(bug_code, model, 0, fixed, extras)
    graphed = torch.cuda.make_graphed_callables(model, (data[0][0].clone(),))
    d = Dumper(run_dir, graphed=True, existing="clear",
               labels={"harness": "taps_gpu", "method": "make_graphed_callables"})
    for step in range(STEPS):
        schedule(bug_code, model, step, fixed, extras)
        x, y = data[step]
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(graphed(x), y)
        loss.backward()
        opt.step()
        d.step(step, loss=loss, model=model, inputs=x, taps=taps)


def train_compiled(run_dir, family, bug_code, grads, fixed):
    """torch.compile(mode="reduce-overhead"): inductor's CUDA graphs."""
    import torch._inductor.config as inductor_config
    inductor_config.fallback_random = True
    model, data, extras = build(family, bug_code, fixed, "cuda")
    taps = Taps(model, grads=grads)
    model.eval()
    with torch.no_grad():  # makes the taps' buffers before compiling
        model(data[0][0])
    model.train()
    opt = make_optimizer(family, model)
    compiled = torch.compile(model, mode="reduce-overhead")
    d = Dumper(run_dir, graphed=True, existing="clear", labels={"harness": "taps_gpu", "method": "compile"})
    for step in range(STEPS):
        schedule(bug_code, model, step, fixed, extras)
        x, y = data[step]
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(compiled(x), y)
        loss.backward()
        opt.step()
        d.step(step, loss=loss, model=model, inputs=x, taps=taps)
    try:
        from torch._dynamo.utils import counters
        skips = dict(counters["inductor"]) if "inductor" in counters else {}
        log("   compile counters:", {k: v for k, v in skips.items() if "cudagraph" in k})
    except Exception as e:  # noqa: BLE001
        log("   compile counters unavailable:", e)


GRAPHED = {"cuda.graph": train_cuda_graph, "make_graphed_callables": train_graphed_callables,
           "compile": train_compiled}


# ---------------------------------------------------------------- labels

def read_dump(run_dir):
    """step -> relative path (no .npy) -> array, and the manifest."""
    steps = {}
    for e in sorted(os.listdir(run_dir)):
        if not e.startswith("step_"):
            continue
        step = int(e[5:])
        base = os.path.join(run_dir, e)
        tensors = {}
        for dirpath, _, files in os.walk(base):
            for f in files:
                if f.endswith(".npy"):
                    rel = os.path.relpath(os.path.join(dirpath, f), base)[:-4].replace(os.sep, "/")
                    tensors[rel] = np.load(os.path.join(dirpath, f), allow_pickle=False)
        steps[step] = tensors
    with open(os.path.join(run_dir, "manifest.json")) as f:
        manifest = json.load(f)
    return steps, manifest


def same(a, b):
    return a is not None and b is not None and a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def first_divergence(a, b):
    """The first step where any tensor of a and b differs bitwise, and the
    names that differ there."""
    for step in sorted(set(a) | set(b)):
        ta, tb = a.get(step, {}), b.get(step, {})
        names = sorted(n for n in set(ta) | set(tb) if not same(ta.get(n), tb.get(n)))
        if names:
            return step, names
    return None, []


def first_module(a_step, b_step, order):
    """The first tapped module whose output departs while its input (the
    previous tapped output, or inputs/x) agrees; (module, why not)."""
    prev = "inputs/x"
    for name in order:
        rel = "activations/" + name
        if not same(a_step.get(rel), b_step.get(rel)):
            if same(a_step.get(prev), b_step.get(prev)):
                return name, None
            return None, "%s departs but its input %s departs too" % (name, prev)
        prev = rel
    return None, "no tapped module departs"


def rel_l2(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(a), 1e-30))


def compare_summary(a, b):
    """Per step: bitwise equal or not, the loss's relative difference."""
    out = []
    for step in sorted(set(a) & set(b)):
        ta, tb = a[step], b[step]
        diff = sorted(n for n in set(ta) | set(tb) if not same(ta.get(n), tb.get(n)))
        out.append({"step": step, "tensors_differ": len(diff),
                    "loss_rel": rel_l2(ta["loss"], tb["loss"]) if "loss" in ta and "loss" in tb else None})
    return out


def label_run(spec, run_dir, graph_dir, fixed_dir, fixed2_dir, eager_dir):
    name, family, method, bug, bug_code, placed, grads, note = spec
    graph, manifest = read_dump(graph_dir)
    eager, _ = read_dump(eager_dir)
    order = [m["name"] for m in manifest["run"]["taps"]["modules"]]
    label = {"harness": "taps_gpu", "family": family, "verdict": "fail" if bug else "pass", "bug": bug,
             "causes": [bug] if bug else [],
             "kind": "compare", "a": "eager", "b": "graph", "graphed_with": method, "grads": grads,
             "placed_module": placed, "module": None, "first_divergent_step": None, "note": note}
    fixed, _ = read_dump(fixed_dir)
    fixed2, _ = read_dump(fixed2_dir)
    rep_step, _ = first_divergence(fixed, fixed2)
    label["twin_repeats_bitwise"] = rep_step is None
    if bug is not None:
        step, names = first_divergence(fixed, graph)
        set_first(label, step, names, fixed, graph, order)
        refine_label(label, eager, graph, order)
    label["eager_vs_graph"] = compare_summary(eager, graph)
    label["eager_vs_twin_bitwise"] = first_divergence(eager, fixed)[0] is None
    label["label_agrees_with_placed"] = label["module"] == placed
    with open(os.path.join(run_dir, "label.json"), "w") as f:
        json.dump(label, f, indent=1)
        f.write("\n")
    return label


def set_first(label, step, names, ref, graph, order):
    """The label's first divergent step and module: where graph departs
    from ref (the fixed twin, or the eager run: refine_label)."""
    label["first_divergent_step"] = step
    label["module"] = None
    label.pop("module_note", None)
    if step is not None:
        mod, why = first_module(ref[step], graph[step], order)
        label["module"] = mod
        label["departing_at_first_step"] = names[:12] + (["..."] if len(names) > 12 else [])
        if why:
            label["module_note"] = why


def refine_label(label, eager, graph, order):
    """The twin stands for the bug-free graphed run where it is the eager
    run's equal. At a step where the buggy run departs from the twin but
    equals the eager run bit for bit, the departure is the fix's, not the
    bug's (a draw moved out of the graph into the loop reads the random
    stream at another place, so the twin differs from eager there), and
    no eager-vs-graph comparison can see it: the label moves to the first
    later step at which the buggy run departs from the eager run, its
    module observed against the eager run (label_reference "eager")."""
    step = label.get("first_divergent_step")
    if step is None or first_divergence({step: eager.get(step, {})}, {step: graph.get(step, {})})[0] is not None:
        return
    later = sorted(s for s in graph if s > step)
    step, names = first_divergence({s: eager.get(s, {}) for s in later}, {s: graph[s] for s in later})
    set_first(label, step, names, eager, graph, order)
    label["label_reference"] = "eager"
    label["label_note"] = ("the buggy run equals the eager run bit for bit where it first departs from the fixed twin, "
                           "which differs from eager there: labelled where it first departs from the eager run")


def relabel(taps_dir):
    """Applies refine_label to the committed runs of taps_dir (their eager
    and graph dumps and labels; the twins are not kept), rewriting the
    labels it changes."""
    for name in sorted(os.listdir(taps_dir)):
        path = os.path.join(taps_dir, name, "label.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            label = json.load(f)
        if label.get("verdict") != "fail" or label.get("label_reference"):
            continue
        graph, manifest = read_dump(os.path.join(taps_dir, name, "graph"))
        eager, _ = read_dump(os.path.join(taps_dir, name, "eager"))
        before = (label["first_divergent_step"], label["module"])
        refine_label(label, eager, graph, [m["name"] for m in manifest["run"]["taps"]["modules"]])
        if (label["first_divergent_step"], label["module"]) != before:
            label["label_agrees_with_placed"] = label["module"] == label["placed_module"]
            with open(path, "w") as f:
                json.dump(label, f, indent=1)
                f.write("\n")
            print("%s: step %s module %s -> step %s module %s" % ((name,) + before + (label["first_divergent_step"], label["module"])))


# ---------------------------------------------------------------- main

def run_one(spec, out, scratch, cpu_check):
    name, family, method, bug, bug_code, placed, grads, note = spec
    run_dir = os.path.join(out, name)
    t0 = time.time()
    eager_dir = os.path.join(run_dir, "eager")
    if cpu_check:
        # the eager halves only; the "graph" and twins are eager runs too,
        # so that the label code runs (its labels mean nothing here)
        train_eager(eager_dir, family, method, bug_code, grads, "cpu")
        twin = os.path.join(scratch, name + "_fixed")
        train_eager(twin, family, method, bug_code, grads, "cpu", fixed=True)
        lab = label_run(spec, run_dir, eager_dir, twin, twin, eager_dir)
        log("%-22s cpu-check eager ok (%.1fs): label code ran, module %s" % (name, time.time() - t0, lab["module"]))
        return lab
    train_eager(eager_dir, family, method, bug_code, grads, "cuda")
    graph_dir = os.path.join(run_dir, "graph")
    GRAPHED[method](graph_dir, family, bug_code, grads, False)
    fixed_dir, fixed2_dir = os.path.join(scratch, name + "_fixed"), os.path.join(scratch, name + "_fixed2")
    if bug is None:  # the twin of a correct run: the run itself, repeated
        GRAPHED[method](fixed2_dir, family, bug_code, grads, False)
        fixed_dir = graph_dir
    else:
        GRAPHED[method](fixed_dir, family, bug_code, grads, True)
        GRAPHED[method](fixed2_dir, family, bug_code, grads, True)
    lab = label_run(spec, run_dir, graph_dir, fixed_dir, fixed2_dir, eager_dir)
    ev = lab["eager_vs_graph"]
    log("%-22s %-22s bug %-17s placed %-9s label %-9s step %-4s %s twin repeats %s, eager==twin %s, "
        "eager vs graph: %s (%.1fs)" % (
            name, method, bug, placed, lab["module"], lab["first_divergent_step"],
            "AGREE" if lab["label_agrees_with_placed"] else "DISAGREE" + (" (%s)" % lab.get("module_note", "")),
            lab["twin_repeats_bitwise"], lab["eager_vs_twin_bitwise"],
            " ".join("%d:%d/%.1e" % (e["step"], e["tensors_differ"], e["loss_rel"] or 0) for e in ev),
            time.time() - t0))
    return lab


def write_readme(out, labels):
    lines = ["# taps: graphed runs dumped with module taps", "",
             "Made by testdata/gen/taps_gpu.py (its docstring says how). Each run: eager/ (the user's loop without",
             "graphs), graph/ (graphed), label.json (observed: the first module departing from the bug-free",
             "graphed twin, and where the bug was placed).", "",
             "| run | family | graphed with | bug | placed in | label module | first step | grads taps |",
             "|---|---|---|---|---|---|---|---|"]
    for name, lab in labels:
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, lab["family"], lab["graphed_with"], lab["bug"] or "none", lab["placed_module"] or "-",
            lab["module"] or "-", lab["first_divergent_step"] if lab["first_divergent_step"] is not None else "-",
            "yes" if lab["grads"] else "no"))
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def pack(out):
    archive = out.rstrip("/") + ".tar.xz"

    def clean(ti):
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = ""
        ti.mtime = 0
        return ti
    with tarfile.open(archive, "w:xz", preset=9) as tar:
        for e in sorted(os.listdir(out)):
            if e.startswith("."):
                continue
            tar.add(os.path.join(out, e), arcname=e, filter=clean)
    return archive


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--relabel", action="store_true",
                    help="apply refine_label to the committed runs in OUT (eager and graph dumps, labels); no GPU")
    ap.add_argument("--cpu-check", action="store_true", help="no GPU: the eager halves only")
    ap.add_argument("--only", default="", help="comma-separated run names")
    args = ap.parse_args()
    if args.relabel:
        relabel(args.out)
        return
    cpu = args.cpu_check or not torch.cuda.is_available()
    if cpu and not args.cpu_check:
        log("taps_gpu: no CUDA device; running the eager halves only (as --cpu-check)")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True, warn_only=True)
    out = args.out
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    scratch = os.path.join(out, ".scratch")
    log("taps_gpu: torch %s, numpy %s, %s" % (torch.__version__, np.__version__,
                                              torch.cuda.get_device_name() if not cpu else "CPU (check only)"))
    only = set(filter(None, args.only.split(",")))
    labels, failed = [], []
    for spec in RUNS:
        if only and spec[0] not in only:
            continue
        try:
            labels.append((spec[0], run_one(spec, out, scratch, cpu)))
        except Exception:  # noqa: BLE001 -- a run that fails is reported, the rest still run
            failed.append(spec[0])
            log("%-22s FAILED\n%s" % (spec[0], traceback.format_exc()))
            shutil.rmtree(os.path.join(out, spec[0]), ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)
    bugs = [lab for _, lab in labels if lab["bug"]]
    if not cpu:
        agree = sum(lab["label_agrees_with_placed"] for lab in bugs)
        log("taps_gpu: %d runs (%d buggy, %d correct), %d failed%s; label module == placed module in %d of %d buggy runs" % (
            len(labels), len(bugs), len(labels) - len(bugs), len(failed),
            " (%s)" % ", ".join(failed) if failed else "", agree, len(bugs)))
    else:
        log("taps_gpu: cpu check: %d eager runs written, %d failed%s; graphed runs skipped (no CUDA)" % (
            len(labels), len(failed), " (%s)" % ", ".join(failed) if failed else ""))
    write_readme(out, labels)
    with open(os.path.join(out, "taps_gpu.log"), "w") as f:
        f.write("\n".join(LOG) + "\n")
    archive = pack(out)
    size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(out) for f in fs)
    print("taps_gpu: %s (%d bytes; %d bytes unpacked)" % (archive, os.path.getsize(archive), size), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
