#!/usr/bin/env python3
"""Generate graphdiff's labelled corpus: small eager-vs-CUDA-graph training
runs over six model families, correct ones and ones with CUDA-graph bugs,
each with a label.json in the schema of ../shared/score/README.md.

Usage (from the repository root):

    python3 testdata/gen/corpus.py [--out testdata/corpus] [--only NAME,...] [--cpu]

Layout written (under --out, default testdata/corpus):

  <family>/<scenario>/eager/        the reference run, eager PyTorch
  <family>/<scenario>/graph/        the same program, graphed (possibly with a bug)
  <family>/<scenario>/label.json    family, verdict, causes, first_divergent_step,
                                    compute_dtype (autocast only), note: how it was
                                    made and what the data showed
  <family>/<scenario>/measured.json per-step numbers behind the label
  README.md                         one row per scenario

A run directory holds, per step k (after the k-th optimizer step, k from 0):
step_00000k/loss, grads/<param>, params/<state_dict entry> (parameters and
buffers), inputs/x, outputs/out, in the scenario's dump format: .npy files
(bfloat16 as numpy's raw '<V2', the bits), one .safetensors file per kind
(bfloat16 native), or one torch.save .pt file per kind; and losses.npy, the
loss curve. Some scenarios dump only some kinds.

Labels are observed, never assumed. A correct scenario is the same program
graphed; it passes by construction (its differences come from the capture:
optimizer implementation, capturable state, fusions, TF32). A buggy scenario
is also run with the bug fixed, graphed the same way; its first divergent
step is the first step at which any dumped tensor of the buggy graphed run
differs, bit for bit, from the fixed graphed run. The fixed run is made twice
and must repeat itself bit for bit (else the scenario is reported and
skipped). A bug that never shows in the dumps is reported and skipped.

Captures: torch.cuda.graph of the whole step (forward, backward, clipping,
optimizer step; three warm-up steps on a side stream, after which
parameters, gradients and optimizer state are restored in place), per-module
torch.cuda.make_graphed_callables (optimizer eager), and
torch.compile(mode="reduce-overhead").

--cpu is a logic test without CUDA (for Debian's torch): graphs are
simulated (capture records the step function, each replay runs it eagerly),
capturable and fused optimizers fall back to the plain ones, compile and
make_graphed_callables run the module eagerly, safetensors dumps are written
as .npy when the package is missing. Bugs that need a real graph do not show
and are reported. --cpu output is not a fixture.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import platform
import random
import shutil
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import safetensors.torch as st
except ImportError:  # --cpu only
    st = None

GENERATOR = "testdata/gen/corpus.py"
SEED_INIT, SEED_DATA, SEED_NOISE = 0, 1, 2
BATCH = 8
WARMUP = 3

# --------------------------------------------------------------------------
# model families: small, a few thousand parameters each


class MLP(nn.Module):
    """Linear, LayerNorm (its input bias is removed by the norm), GELU."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 32)
        self.head = nn.Linear(32, 4)

    def features(self, x):
        h = F.gelu(self.norm(self.fc1(x)))
        return F.gelu(self.fc2(h))


class CNNBN(nn.Module):
    """Conv2d with biases feeding BatchNorm (the bias gets a rounding-level
    gradient; the running mean tracks it)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.head = nn.Linear(8, 4)

    def features(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(self.bn2(self.conv2(h)))
        return h.mean((2, 3))


class GPT2(nn.Module):
    """GPT-2 style: token and position embeddings, pre-LayerNorm attention
    with a qkv bias (softmax ignores the key bias), GELU MLP."""

    def __init__(self, vocab=32, d=12, seq=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 2 * d)
        self.out = nn.Linear(2 * d, d)
        self.head = nn.Linear(d, 4)
        self.d = d

    def features(self, x):
        t = self.tok(x) + self.pos.weight[: x.shape[1]]
        q, k, v = self.qkv(self.ln1(t)).split(self.d, dim=-1)
        att = (q @ k.transpose(1, 2)) / math.sqrt(self.d)
        mask = torch.ones(x.shape[1], x.shape[1], device=x.device, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        t = t + self.proj(att @ v)
        t = t + self.out(F.gelu(self.fc(self.ln2(t))))
        return t.mean(1)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Llama(nn.Module):
    """Llama style: RMSNorm, rotary positions, SwiGLU, no biases."""

    def __init__(self, vocab=32, d=12, seq=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.n1 = RMSNorm(d)
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, d, bias=False)
        self.wv = nn.Linear(d, d, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.n2 = RMSNorm(d)
        self.w1 = nn.Linear(d, 2 * d, bias=False)
        self.w3 = nn.Linear(d, 2 * d, bias=False)
        self.w2 = nn.Linear(2 * d, d, bias=False)
        self.head = nn.Linear(d, 4, bias=False)
        self.d = d
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        ang = torch.arange(seq).float()[:, None] * inv[None]
        self.register_buffer("cos", ang.cos(), persistent=False)
        self.register_buffer("sin", ang.sin(), persistent=False)

    def rope(self, x):
        x1, x2 = x[..., 0::2], x[..., 1::2]
        c, s = self.cos[: x.shape[1]].to(x.dtype), self.sin[: x.shape[1]].to(x.dtype)
        return torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), -1).flatten(-2)

    def features(self, x):
        t = self.tok(x)
        h = self.n1(t)
        q, k, v = self.rope(self.wq(h)), self.rope(self.wk(h)), self.wv(h)
        att = (q @ k.transpose(1, 2)) / math.sqrt(self.d)
        mask = torch.ones(x.shape[1], x.shape[1], device=x.device, dtype=torch.bool).tril()
        t = t + self.wo(att.masked_fill(~mask, float("-inf")).softmax(-1) @ v)
        h = self.n2(t)
        t = t + self.w2(F.silu(self.w1(h)) * self.w3(h))
        return t.mean(1)


class Embed(nn.Module):
    """An embedding-heavy recommender: a 256-row table of which a batch
    touches few rows, mean-pooled, and a small MLP."""

    def __init__(self, rows=256, d=8):
        super().__init__()
        self.table = nn.Embedding(rows, d)
        self.fc = nn.Linear(d, 16)
        self.head = nn.Linear(16, 4)

    def features(self, x):
        return F.relu(self.fc(self.table(x).mean(1)))


class GRU(nn.Module):
    """A GRU over a short sequence of feature vectors."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(6, 16, batch_first=True)
        self.head = nn.Linear(16, 4)

    def features(self, x):
        _, h = self.rnn(x)
        return h[-1]


FAMILIES = {"mlp": MLP, "cnn_bn": CNNBN, "gpt2": GPT2, "llama": Llama, "embed": Embed, "rnn": GRU}
TOKENS = {"gpt2", "llama", "embed"}  # integer inputs


class Net(nn.Module):
    """A family's body with the head, and a spare head no forward uses (a
    disabled module: its parameters never get a gradient). The bug
    uninitialized_memory swaps the zeros of a feature accumulator for
    torch.empty_like."""

    def __init__(self, family: str, layerdrop: bool = False):
        super().__init__()
        self.body = FAMILIES[family]()
        self.spare = nn.Linear(4, 4)
        self.uninit = False
        self.temp_f = None  # a temperature kept as a Python float (temp_float)
        self.gate = None  # LayerDrop's keep decision: a Python float, or a 0-d tensor
        if layerdrop:
            # a residual block LayerDrop skips at random (its own seed, so
            # that every run of a scenario starts from the same weights)
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(SEED_INIT + 7)
                self.extra = nn.Linear(self.body.head.in_features, self.body.head.in_features)

    def forward(self, x):
        f = self.body.features(x)
        if hasattr(self, "extra"):
            f = f + self.gate * self.extra(f)
        if hasattr(self, "temp"):  # a temperature the training schedules
            f = f * self.temp
        elif self.temp_f is not None:
            f = f * self.temp_f
        acc = torch.empty_like(f) if self.uninit else torch.zeros_like(f)
        acc += f
        return self.body.head(acc)


def batch_of(family: str, n: int, g: torch.Generator):
    if family in ("gpt2", "llama"):
        x = torch.randint(0, 32, (n, 8), generator=g)
        y = (x[:, -1] % 4)
    elif family == "embed":
        x = torch.randint(0, 24, (n, 5), generator=g) * 10 % 256  # few distinct rows
        y = (x[:, 0] // 10) % 4
    elif family == "cnn_bn":
        x = torch.randn(n, 3, 6, 6, generator=g)
        y = (x.mean((1, 2, 3)) * 8).long().clamp(-2, 1) + 2
    elif family == "rnn":
        x = torch.randn(n, 5, 6, generator=g)
        y = (x[:, -1, 0] > 0).long() + 2 * (x[:, 0, 1] > 0).long()
    else:
        x = torch.randn(n, 16, generator=g)
        y = (x[:, :4].argmax(1))
    return x, y


# --------------------------------------------------------------------------
# scenarios


@dataclass
class Sc:
    name: str
    family: str
    bug: str | None = None       # None for a correct run
    cause: str | None = None     # the cause ID the label accepts
    optim: str = "adam"          # sgdm | adam | adamw
    eager_impl: str = "foreach"  # foreach | fused (the eager optimizer)
    graph_impl: str = "capturable"  # capturable | fused (whole-step capture)
    wd: float = 0.0
    clip: bool = False
    sched: str | None = None     # None | decay | warmup | cosine
    prec: str = "fp32"           # fp32 | tf32 | bf16 | autocast | fp16
    capture: str = "graph"       # graph | callables | compile
    dump: str = "npy"            # npy | safetensors | pt
    kinds: tuple = ("loss", "grads", "params", "inputs", "outputs")
    steps: int = 8
    lr: float = 0.01
    batches: tuple = ()          # batch sizes, default all BATCH
    note: str = ""
    extra: dict = field(default_factory=dict)

    def sizes(self):
        return self.batches or (BATCH,) * self.steps


ALL = ("loss", "grads", "params", "inputs", "outputs")
NO_INPUTS = ("loss", "grads", "params", "outputs")
LOSS_ONLY = ("loss",)
GRADS_ONLY = ("loss", "grads")


def scenarios() -> list[Sc]:
    out = []
    fams = list(FAMILIES)
    # correct runs: each family gets six, over optimizers, precisions,
    # captures and dump formats
    correct = [
        dict(tag="fp32_adam", optim="adam", prec="fp32", dump="npy"),
        dict(tag="bf16_adamw", optim="adamw", wd=0.1, prec="bf16", dump="safetensors", graph_impl="fused"),
        dict(tag="autocast_adam_cosine", optim="adam", prec="autocast", sched="cosine", clip=True, dump="pt",
             kinds=NO_INPUTS),
        dict(tag="tf32_sgdm", optim="sgdm", prec="tf32", dump="npy", kinds=GRADS_ONLY, lr=0.05),
        dict(tag="callables_adamw", optim="adamw", wd=0.05, capture="callables", eager_impl="fused",
             dump="safetensors"),
        dict(tag="fp16_scaler", optim="adam", prec="fp16", capture="callables", dump="npy", steps=12),
    ]
    for fam in fams:
        for c in correct:
            c = dict(c)
            tag = c.pop("tag")
            out.append(Sc(name=f"{fam}_{tag}_ok", family=fam, **c))
    for fam in ("mlp", "embed", "rnn"):
        out.append(Sc(name=f"{fam}_fused_adamw_clip_ok", family=fam, optim="adamw", wd=0.01, clip=True,
                      graph_impl="fused", eager_impl="fused", dump="pt", kinds=NO_INPUTS))
    for fam in ("mlp", "gpt2"):
        out.append(Sc(name=f"{fam}_compile_ok", family=fam, optim="adam", capture="compile",
                      kinds=LOSS_ONLY if fam == "gpt2" else ALL, steps=8))
    # bugs: each family gets the generic ones, in rotating precisions and formats
    bugs = [
        dict(bug="stale_input", cause="stale_input"),
        dict(bug="input_lag", cause="input_lag"),
        dict(bug="grad_accumulation", cause="grad_accumulation"),
        dict(bug="captured_lr", cause="captured_scalar", sched="decay"),
        dict(bug="output_aliasing", cause="output_aliasing", kinds=("loss", "outputs", "grads")),
        dict(bug="captured_branch", cause="captured_branch"),
        dict(bug="dynamic_shape", cause="dynamic_shape"),
        dict(bug="uninitialized_memory", cause="uninitialized_memory"),
        dict(bug="wd_zero_grads", cause="grads_zero_not_none", optim="adamw", wd=0.1),
    ]
    precs = [("fp32", "npy"), ("bf16", "safetensors"), ("autocast", "pt"), ("tf32", "npy")]
    n = 0
    for i, fam in enumerate(fams):
        # six of the nine per family, rotating: each bug in four families
        for t in range(6):
            b = dict(bugs[(3 * i + t) % len(bugs)])
            prec, dump = precs[n % len(precs)]
            n += 1
            out.append(Sc(name=f"{fam}_{b['bug']}", family=fam, prec=prec, dump=dump, **b))
    # TF32 with a capturable optimizer, and longer runs (differences grow)
    out += [
        Sc(name="gpt2_tf32_adam_ok", family="gpt2", optim="adam", prec="tf32"),
        Sc(name="llama_tf32_adamw_ok", family="llama", optim="adamw", wd=0.05, prec="tf32", graph_impl="fused",
           dump="pt"),
        Sc(name="gpt2_fp32_adam_long_ok", family="gpt2", optim="adam", steps=24),
        Sc(name="cnn_bn_autocast_long_ok", family="cnn_bn", optim="adam", prec="autocast", steps=24),
        Sc(name="llama_bf16_adamw_long_ok", family="llama", optim="adamw", wd=0.1, prec="bf16",
           dump="safetensors", steps=24),
    ]
    # make_graphed_callables with two micro-batches a step: labelled by
    # what the dumps show (every other per-module capture here is bit for
    # bit eager, so a difference is the capture's)
    for fam in ("mlp", "cnn_bn", "gpt2", "rnn"):
        out.append(Sc(name=f"{fam}_callables_accum", family=fam, optim="adamw", wd=0.05, capture="callables",
                      eager_impl="fused", extra={"accum": 2, "observe": "callables_accumulation"}))
    out += [
        Sc(name="embed_stale_input", family="embed", bug="stale_input", cause="stale_input", dump="pt"),
        Sc(name="embed_grad_accumulation", family="embed", bug="grad_accumulation", cause="grad_accumulation",
           prec="bf16", dump="safetensors"),
        Sc(name="cnn_bn_stale_input", family="cnn_bn", bug="stale_input", cause="stale_input", prec="bf16",
           dump="safetensors"),
        Sc(name="rnn_captured_branch", family="rnn", bug="captured_branch", cause="captured_branch", dump="pt"),
        Sc(name="mlp_uninitialized_memory_long", family="mlp", bug="uninitialized_memory",
           cause="uninitialized_memory", steps=24, prec="autocast"),
    ]
    # autocast's weight cache kept across capture, and a scheduled tensor
    # attribute reassigned after capture (its correct twin copies in place)
    for fam in ("mlp", "cnn_bn", "gpt2", "llama"):
        out.append(Sc(name=f"{fam}_autocast_cache", family=fam, bug="autocast_cache", cause="autocast_cache",
                      prec="autocast", dump="npy" if fam in ("mlp", "gpt2") else "pt"))
    for fam in ("mlp", "embed", "gpt2", "rnn"):
        out.append(Sc(name=f"{fam}_temp_copy_ok", family=fam, optim="adam", extra={"temp": True},
                      dump="safetensors" if fam in ("embed", "rnn") else "npy"))
        out.append(Sc(name=f"{fam}_reassigned_buffer", family=fam, bug="reassigned_buffer",
                      cause="reassigned_tensor", extra={"temp": True},
                      dump="safetensors" if fam in ("embed", "rnn") else "npy"))
    # a temperature kept as a Python float (captured at its first value),
    # whose fix copies it into a tensor: the twin of reassigned_buffer that
    # dumps no buffer
    for fam, prec, dump in (("mlp", "fp32", "npy"), ("embed", "fp32", "safetensors"), ("gpt2", "bf16", "safetensors"),
                            ("rnn", "tf32", "pt")):
        out.append(Sc(name=f"{fam}_temp_float", family=fam, bug="temp_float", cause="captured_scalar",
                      extra={"temp": True}, prec=prec, dump=dump))
    # LayerDrop deciding with Python's random module: the capture bakes in
    # its first decision; the fix multiplies by a device tensor filled
    # each step
    for fam, prec, dump in (("mlp", "fp32", "npy"), ("gpt2", "tf32", "pt"), ("llama", "fp32", "safetensors")):
        out.append(Sc(name=f"{fam}_layerdrop", family=fam, bug="layerdrop", cause="captured_branch",
                      extra={"layerdrop": True, "also": ["frozen_rng"]}, prec=prec, dump=dump))
    # gradients logged by reference (a gradient history), outputs and
    # losses copied
    for fam, prec, dump in (("cnn_bn", "fp32", "npy"), ("llama", "bf16", "safetensors"), ("rnn", "fp32", "pt")):
        out.append(Sc(name=f"{fam}_grads_by_ref", family=fam, bug="grads_by_ref", cause="output_aliasing",
                      prec=prec, dump=dump))
    # the must-fail cases
    out.append(Sc(name="gpt2_warmup_lr_frozen", family="gpt2", bug="captured_lr", cause="captured_scalar",
                  sched="warmup", prec="fp32", note="learning rate frozen during warm-up, fp32"))
    out.append(Sc(name="llama_decay20_bf16", family="llama", bug="captured_lr", cause="captured_scalar",
                  sched="decay20", prec="bf16", dump="safetensors",
                  note="a 20% per step learning-rate decay frozen, pure bf16"))
    for fam in ("mlp", "cnn_bn", "rnn"):
        out.append(Sc(name=f"{fam}_frozen_rng", family=fam, bug="frozen_rng", cause="frozen_rng",
                      prec="fp32", extra={"noise": True}))
    return out


# --------------------------------------------------------------------------
# training


class Ctx:
    def __init__(self, cpu: bool):
        self.cpu = cpu
        self.device = torch.device("cpu" if cpu else "cuda")
        self.warnings: list[str] = []

    def warn(self, msg):
        print("WARNING: " + msg)
        self.warnings.append(msg)


def model_dtype(sc: Sc):
    return torch.bfloat16 if sc.prec == "bf16" else torch.float32


def amp(sc: Sc, ctx: Ctx, cache: bool = False):
    # autocast's weight cache off: make_graphed_callables requires it, and
    # it changes no number within one step (autocast_cache's bug turns it on)
    if sc.prec == "autocast":
        return torch.autocast(ctx.device.type, dtype=torch.bfloat16, cache_enabled=cache)
    if sc.prec == "fp16" and not ctx.cpu:
        return torch.autocast("cuda", dtype=torch.float16, cache_enabled=False)
    return torch.autocast(ctx.device.type, enabled=False)


def lr_at(sc: Sc, k: int) -> float:
    """The schedule's learning rate for step k (0-based). Besides the named
    schedules: "steps", the learning rate times each factor of
    sc.extra["lr_steps"] ([(step, factor), ...]) from its step on;
    "warmup_n", a linear warm-up over sc.extra["warmup"] steps;
    "decay_slow", times sc.extra["decay"] every step."""
    if sc.sched == "steps":
        f = 1.0
        for at, factor in sc.extra["lr_steps"]:
            if k >= at:
                f *= factor
        return sc.lr * f
    if sc.sched == "warmup_n":
        return sc.lr * min(1.0, (k + 1) / sc.extra["warmup"])
    if sc.sched == "decay_slow":
        return sc.lr * sc.extra["decay"] ** k
    if sc.sched == "decay":
        return sc.lr * 0.7 ** k
    if sc.sched == "decay20":
        return sc.lr * 0.8 ** k
    if sc.sched == "warmup":
        return sc.lr * min(1.0, (k + 1) / 5)
    if sc.sched == "cosine":
        return sc.lr * 0.5 * (1 + math.cos(math.pi * k / sc.steps))
    return sc.lr


def make_opt(sc: Sc, ctx: Ctx, params, graphed: bool, lr_tensor: bool):
    """The optimizer: eager_impl for eager runs and captures that leave the
    optimizer eager; graph_impl (capturable or fused-capturable) for
    whole-step capture. A scheduled whole-step capture takes its learning
    rate as a tensor (updated in place) unless the bug is a frozen one."""
    lr = lr_at(sc, 0)
    kw = {}
    if sc.optim == "sgdm":
        cls = torch.optim.SGD
        kw = dict(momentum=0.9, weight_decay=sc.wd)
    else:
        cls = torch.optim.AdamW if sc.optim == "adamw" else torch.optim.Adam
        kw = dict(weight_decay=sc.wd)
        if not ctx.cpu:
            impl = sc.graph_impl if graphed else sc.eager_impl
            if impl == "fused":
                kw["fused"] = True
                kw["capturable"] = graphed
            elif graphed:
                kw["capturable"] = True
                kw["foreach"] = True
            else:
                kw["foreach"] = True
    if lr_tensor and not ctx.cpu:
        lr = torch.tensor(lr, device=ctx.device)
    return cls(params, lr=lr, **kw)


def set_lr(opt, value: float):
    for g in opt.param_groups:
        if torch.is_tensor(g["lr"]):
            g["lr"].fill_(value)
        else:
            g["lr"] = value


class Run:
    """One training run's dumps: per step, name → CPU tensor (clones)."""

    def __init__(self):
        self.steps: list[dict] = []
        self.losses: list[float] = []


def init_state(family: str) -> dict:
    torch.manual_seed(SEED_INIT)
    m = Net(family)
    return {k: v.detach().clone() for k, v in m.state_dict().items()}


def data_for(sc: Sc):
    g = torch.Generator().manual_seed(SEED_DATA)
    return [batch_of(sc.family, n, g) for n in sc.sizes()]


def loss_of(sc: Sc, out, y):
    return F.cross_entropy(out.float(), y)


def record(sc: Sc, run: Run, model, loss, x, out, refs=False):
    """Keeps what the scenario dumps at this step; refs keeps references
    (output_aliasing: read after the loop) instead of copies, of every kind
    or, given as a tuple, of those kinds."""
    def taker(kind):
        if refs is True or (isinstance(refs, tuple) and kind in refs):
            return lambda t: t
        return lambda t: t.detach().clone()
    take = taker("loss")
    d = {"loss": take(loss)}
    if "grads" in sc.kinds:
        take_grad = taker("grads")
        for n, p in model.named_parameters():
            if p.grad is not None:
                d["grads/" + n] = take_grad(p.grad)
    if "params" in sc.kinds:
        for n, t in model.state_dict().items():
            if n == "temp" and sc.bug == "temp_float":
                continue  # the fix's tensor; eager and the bug keep a float
            if t.is_floating_point():
                d["params/" + n] = take(t)
    if "inputs" in sc.kinds:
        d["inputs/x"] = take(x)
    if "outputs" in sc.kinds:
        d["outputs/out"] = take(out)
    run.steps.append(d)


def finish(run: Run):
    """Copies every kept tensor to the host (references are read now)."""
    for d in run.steps:
        for k in d:
            d[k] = d[k].detach().cpu().clone()
    run.losses = [float(d["loss"]) for d in run.steps]
    return run


def setup(sc: Sc, ctx: Ctx, state: dict, bugged: bool, eager: bool = False):
    if not ctx.cpu:
        tf32 = sc.prec == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
    model = Net(sc.family, layerdrop=bool(sc.extra.get("layerdrop")))
    model.load_state_dict(state, strict=not sc.extra.get("layerdrop"))
    model = model.to(device=ctx.device, dtype=model_dtype(sc))
    model.uninit = bugged and sc.bug == "uninitialized_memory"
    if sc.extra.get("temp") and not temp_as_float(sc, bugged or eager):
        model.register_buffer("temp", torch.ones((), device=ctx.device, dtype=model_dtype(sc)))
    if sc.extra.get("temp") and temp_as_float(sc, bugged or eager):
        model.temp_f = temp_at(0)
    if sc.extra.get("layerdrop"):
        # eager and the bug: a Python float; the fix: a device tensor
        model.gate = (torch.full((), gate_at(0), device=ctx.device, dtype=model_dtype(sc))
                      if sc.bug == "layerdrop" and not bugged else gate_at(0))
    model.train()
    data = [(x.to(ctx.device) if x.dtype == torch.long else x.to(ctx.device, model_dtype(sc)), y.to(ctx.device))
            for x, y in data_for(sc)]
    return model, data


class Noise:
    """Input augmentation drawn on the CPU from a seeded generator into a
    staging buffer and copied to the device (frozen_rng: inside a capture
    the CPU draw happens once; the fix draws before each replay)."""

    def __init__(self, ctx: Ctx, shape, dtype):
        self.gen = torch.Generator().manual_seed(SEED_NOISE)
        self.host = torch.empty(shape, dtype=dtype, pin_memory=not ctx.cpu)
        self.ctx = ctx

    def draw(self):
        self.host.normal_(generator=self.gen)

    def device(self):
        return self.host.to(self.ctx.device, non_blocking=True)

    def reset(self):
        self.gen.manual_seed(SEED_NOISE)


def aux_term(model):
    """An auxiliary L2 term on the weights (captured_branch's first steps)."""
    return sum((p.float() ** 2).sum() for n, p in model.named_parameters()
               if n.endswith("weight") and "spare" not in n)


def forward_loss(sc: Sc, ctx: Ctx, model, x, y, aux, noise: Noise | None, draw_inside: bool,
                 cache: bool = False):
    """The loss of a batch. aux is captured_branch's auxiliary weight: a
    Python float (0 leaves the term out, as a Python branch does) or a
    device tensor (the term always computed, weighted on the device)."""
    if noise is not None:
        if draw_inside:
            noise.draw()
        x = x + 0.1 * noise.device()
    with amp(sc, ctx, cache):
        out = model(x)
        loss = loss_of(sc, out, y)
        if torch.is_tensor(aux) or aux:
            loss = loss + aux * aux_term(model)
    return loss, out


def temp_as_float(sc: Sc, float_run: bool) -> bool:
    """temp_float keeps the temperature as a Python float in eager and in
    the bug (a capture bakes it in; float_run is either); the fix keeps a
    tensor, copied into."""
    return sc.bug == "temp_float" and float_run


def gate_at(k: int) -> float:
    """LayerDrop's decision at step k (layerdrop scenarios): keep the block
    (1.0) or skip it (0.0), drawn from Python's random module."""
    return 1.0 if random.Random(1000 + k).random() >= 0.5 else 0.0


def temp_at(k: int) -> float:
    """The scheduled temperature at step k (temp scenarios)."""
    return 1.0 + 0.25 * k


def aux_at(sc: Sc, k: int) -> float:
    """captured_branch's auxiliary weight at step k: 0.01 for the first
    sc.extra["branch_until"] steps, default 3 (a Python `if k < 3`), else
    none."""
    return 0.01 if sc.bug == "captured_branch" and k < sc.extra.get("branch_until", 3) else 0.0


def run_eager(sc: Sc, ctx: Ctx, state: dict) -> Run:
    model, data = setup(sc, ctx, state, bugged=False, eager=True)
    opt = make_opt(sc, ctx, model.parameters(), graphed=False, lr_tensor=False)
    scaler = grad_scaler() if sc.prec == "fp16" and not ctx.cpu else None
    noise = Noise(ctx, (BATCH,) + tuple(data[0][0].shape[1:]), model_dtype(sc)) if sc.extra.get("noise") else None
    run = Run()
    for k, (x, y) in enumerate(data):
        set_lr(opt, lr_at(sc, k))
        if sc.extra.get("temp") and sc.bug == "temp_float":
            model.temp_f = temp_at(k)  # eagerly fine
        elif sc.extra.get("temp"):
            model.temp = torch.tensor(temp_at(k), device=ctx.device, dtype=model_dtype(sc))  # eagerly fine
        if sc.extra.get("layerdrop"):
            model.gate = gate_at(k)  # eagerly fine
        opt.zero_grad(set_to_none=True)
        if sc.extra.get("accum"):
            loss, out = accumulate(sc, ctx, model, model, opt, x, y, scaler)
        else:
            loss, out = forward_loss(sc, ctx, model, x, y, aux_at(sc, k), noise, draw_inside=True)
            step_backward(sc, model, opt, loss, scaler)
        record(sc, run, model, loss, x, out)
    return finish(run)


def clip(params):
    """Clips the gradients' total norm to 1 (foreach where torch has it)."""
    try:
        nn.utils.clip_grad_norm_(params, 1.0, foreach=True)
    except TypeError:  # torch before 2.0 (--cpu on Debian)
        nn.utils.clip_grad_norm_(params, 1.0)


def grad_scaler():
    return torch.amp.GradScaler("cuda") if hasattr(torch.amp, "GradScaler") else torch.cuda.amp.GradScaler()


def step_backward(sc: Sc, model, opt, loss, scaler):
    (scaler.scale(loss) if scaler is not None else loss).backward()
    optimizer_step(sc, model, opt, scaler)


def optimizer_step(sc: Sc, model, opt, scaler):
    """Clipping (after unscaling) and the optimizer step, through the
    GradScaler when there is one."""
    if scaler is not None:
        if sc.clip:
            scaler.unscale_(opt)
            clip(model.parameters())
        scaler.step(opt)
        scaler.update()
        return
    if sc.clip:
        clip(model.parameters())
    opt.step()


def accumulate(sc: Sc, ctx: Ctx, fwd, model, opt, x, y, scaler):
    """One step of sc.extra["accum"] micro-batches: each one's loss (over
    the count) backpropagated into the same gradients, then one optimizer
    step. Returns the step's loss and the outputs of every micro-batch."""
    m = sc.extra["accum"]
    losses, outs = [], []
    for xi, yi in zip(x.chunk(m), y.chunk(m)):
        with amp(sc, ctx):
            out = fwd(xi)
            loss = loss_of(sc, out, yi) / m
        (scaler.scale(loss) if scaler is not None else loss).backward()
        losses.append(loss.detach())
        outs.append(out.detach())
    optimizer_step(sc, model, opt, scaler)
    return torch.stack(losses).sum(), torch.cat(outs)


class SimGraph:
    """--cpu: a 'graph' whose capture records the step function and whose
    replay runs it eagerly."""

    def __init__(self):
        self.fn = None

    def capture(self, fn):
        self.fn = fn
        return None

    def replay(self):
        return self.fn()


def run_graph(sc: Sc, ctx: Ctx, state: dict, bugged: bool) -> Run:
    if sc.capture == "graph":
        return run_whole_step(sc, ctx, state, bugged)
    return run_module_capture(sc, ctx, state, bugged)


def run_module_capture(sc: Sc, ctx: Ctx, state: dict, bugged: bool) -> Run:
    """make_graphed_callables (per module) or torch.compile(mode=
    "reduce-overhead"): the model's forward and backward are graphed, the
    optimizer (and GradScaler) run eagerly."""
    model, data = setup(sc, ctx, state, bugged)
    opt = make_opt(sc, ctx, model.parameters(), graphed=False, lr_tensor=False)
    scaler = grad_scaler() if sc.prec == "fp16" and not ctx.cpu else None
    x0 = data[0][0].chunk(sc.extra.get("accum", 1))[0]  # one (micro-)batch: the graphed shape
    if ctx.cpu:
        fwd = model
    elif sc.capture == "callables":
        # make_graphed_callables runs warm-up passes in training mode, which
        # move BatchNorm's running statistics: they are put back, as the
        # eager run never saw those passes
        saved = {n: t.detach().clone() for n, t in model.state_dict().items()}
        with amp(sc, ctx):
            body = torch.cuda.make_graphed_callables(_Body(model), (x0.clone(),),
                                                     allow_unused_input=True)  # the spare head
        with torch.no_grad():
            for n, t in model.state_dict().items():
                t.copy_(saved[n])
        fwd = _Graphed(body, model)
    else:
        fwd = torch.compile(model, mode="reduce-overhead")
    run = Run()
    for k, (x, y) in enumerate(data):
        set_lr(opt, lr_at(sc, k))
        opt.zero_grad(set_to_none=True)
        if sc.capture == "compile" and not ctx.cpu:
            torch.compiler.cudagraph_mark_step_begin()
        if sc.extra.get("accum"):
            loss, out = accumulate(sc, ctx, fwd, model, opt, x, y, scaler)
        else:
            with amp(sc, ctx):
                out = fwd(x)
                loss = loss_of(sc, out, y)
            step_backward(sc, model, opt, loss, scaler)
        record(sc, run, model, loss, x, out)
    return finish(run)


class _Body(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)


class _Graphed:
    def __init__(self, body, net):
        self.body = body
        self.net = net

    def __call__(self, x):
        return self.body(x)


def run_whole_step(sc: Sc, ctx: Ctx, state: dict, bugged: bool) -> Run:
    """torch.cuda.graph of the whole step, as PyTorch's CUDA-graph notes
    show: static inputs, warm-up on a side stream, capture, replay."""
    bug = sc.bug if bugged else None
    model, data = setup(sc, ctx, state, bugged)
    # captured_lr: a Python-float learning rate, which a capture bakes in;
    # the bug schedules it anyway, the fix captures again when it changes
    # (the same kernels as the bug's, so only the learning rate differs)
    float_lr = sc.bug == "captured_lr"
    recapture = float_lr and not bug and not ctx.cpu
    opt = make_opt(sc, ctx, model.parameters(), graphed=True, lr_tensor=sc.sched is not None and not float_lr)
    sizes = sc.sizes()
    static_x = data[0][0].clone()
    static_y = data[0][1].clone()
    noise = Noise(ctx, tuple(static_x.shape), model_dtype(sc)) if sc.extra.get("noise") else None
    params = [p for p in model.parameters()]
    if bug == "wd_zero_grads":
        # grads preallocated for every parameter, the unused ones included
        for p in params:
            p.grad = torch.zeros_like(p)
    elif sc.bug == "wd_zero_grads":
        for n, p in model.named_parameters():  # the fix: only parameters the forward uses
            p.grad = None if "spare" in n else torch.zeros_like(p)

    # captured_branch: the bug decides the Python branch once, at capture
    # (step 0); the fix weights the term by a device tensor set every step
    aux_t = torch.zeros((), device=ctx.device) if sc.bug == "captured_branch" and not bug else None
    aux_now = [aux_at(sc, 0)]

    def body():
        if sc.bug == "wd_zero_grads":
            opt.zero_grad(set_to_none=False)
        aux = aux_t if aux_t is not None else aux_now[0]
        loss, out = forward_loss(sc, ctx, model, static_x, static_y, aux, noise,
                                 draw_inside=(bug == "frozen_rng"), cache=(bug == "autocast_cache"))
        loss.backward()
        if sc.clip:
            clip(params)
        opt.step()
        return loss, out

    saved = {n: t.detach().clone() for n, t in model.state_dict().items()}
    region = contextlib.ExitStack()
    if bug == "autocast_cache":
        # BUG: one autocast region, its weight cache on, around warm-up,
        # capture and the replays: the casts of the first warm-up step are
        # reused at capture, so the graph never casts the updated weights
        region.enter_context(torch.autocast(ctx.device.type, dtype=torch.bfloat16, cache_enabled=True))
    # warm-up on a side stream, then restore parameters, buffers and state
    def warm_up():
        for _ in range(WARMUP):
            if sc.bug != "wd_zero_grads":
                opt.zero_grad(set_to_none=True)
            body()

    if ctx.cpu:
        graph = SimGraph()
        warm_up()
    else:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            warm_up()
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
    with torch.no_grad():
        for n, t in model.state_dict().items():
            t.copy_(saved[n])
        for st_ in opt.state.values():
            for v in st_.values():
                if torch.is_tensor(v):
                    v.zero_()
    if noise is not None:
        noise.reset()
        if bug != "frozen_rng":
            noise.draw()  # the fix draws outside the graph, before each replay
    if aux_t is not None:
        aux_t.fill_(aux_at(sc, 0))
    if sc.bug == "wd_zero_grads":
        for p in params:
            if p.grad is not None:
                p.grad.zero_()
    elif bug == "grad_accumulation":
        opt.zero_grad(set_to_none=False)  # BUG: zeroed once, outside: replays accumulate
    else:
        opt.zero_grad(set_to_none=True)
    if ctx.cpu:
        graph.capture(body)
        static = None
    else:
        with torch.cuda.graph(graph):
            static = body()
    run = Run()
    for k, (x, y) in enumerate(data):
        if ctx.cpu:
            aux_now[0] = aux_at(sc, k)  # the simulation re-runs the Python
        if aux_t is not None:
            aux_t.fill_(aux_at(sc, k))
        if sc.extra.get("layerdrop"):
            if torch.is_tensor(model.gate):
                model.gate.fill_(gate_at(k))
            else:
                model.gate = gate_at(k)  # BUG: a Python float; the capture baked in gate_at(0)
        if sc.extra.get("temp") and temp_as_float(sc, True) and bug:
            model.temp_f = temp_at(k)  # BUG: a Python float; the capture baked in temp_at(0)
        elif sc.extra.get("temp"):
            t = torch.tensor(temp_at(k), device=ctx.device, dtype=model_dtype(sc))
            if bug == "reassigned_buffer":
                model.temp = t  # BUG: a new tensor; the graph reads the old one's freed block
            else:
                model.temp.copy_(t)
        # a float learning rate: the scheduler updates a Python float the
        # graph never reads again (unless captured anew); otherwise a tensor
        # the graph reads
        if recapture and lr_at(sc, k) != lr_at(sc, k - 1 if k else 0):
            set_lr(opt, lr_at(sc, k))
            opt.zero_grad(set_to_none=True)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static = body()
        set_lr(opt, lr_at(sc, k))
        n = x.shape[0]
        dumped_x = static_x
        if n != static_x.shape[0] and bug != "dynamic_shape":
            loss, out = replay_small(sc, ctx, model, opt, x, y)
            record(sc, run, model, loss, x, out)
            continue
        if bug == "stale_input":
            dumped_x = x  # BUG: static_x = x rebinds a name; the graph reads the old tensor
        elif bug == "input_lag":
            pass  # BUG: the copy comes after the replay
        elif bug == "dynamic_shape" and n != static_x.shape[0]:
            static_x[:n].copy_(x)  # BUG: the tail rows keep an earlier batch
            static_y[:n].copy_(y)
        else:
            static_x.copy_(x)
            static_y.copy_(y)
        if noise is not None and bug != "frozen_rng" and k > 0:
            noise.draw()
        if ctx.cpu:
            if bug != "grad_accumulation" and sc.bug != "wd_zero_grads":
                opt.zero_grad(set_to_none=True)  # a replay writes fresh gradients
            loss, out = graph.replay()
        else:
            graph.replay()
            loss, out = static
        refs = True if bug == "output_aliasing" else ("grads",) if bug == "grads_by_ref" else False
        record(sc, run, model, loss, dumped_x, out, refs=refs)
        if bug == "input_lag":
            static_x.copy_(x)
            static_y.copy_(y)
    region.close()
    return finish(run)


def replay_small(sc, ctx, model, opt, x, y):
    """dynamic_shape's fix: a batch of another size runs eagerly (what a
    second graph captured for that shape computes)."""
    opt.zero_grad(set_to_none=True)
    loss, out = forward_loss(sc, ctx, model, x, y, 0.0, None, False)
    loss.backward()
    if sc.clip:
        clip(model.parameters())
    opt.step()
    return loss, out


# --------------------------------------------------------------------------
# writing


def np_of(t: torch.Tensor) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().view(np.uint16).view("V2")
    return t.numpy()


def write_run(ctx: Ctx, d: Path, sc: Sc, run: Run):
    d.mkdir(parents=True)
    fmt = sc.dump
    if fmt == "safetensors" and st is None:
        ctx.warn(f"{sc.name}: safetensors missing, written as .npy")
        fmt = "npy"
    for k, tensors in enumerate(run.steps):
        sd = d / f"step_{k:06d}"
        sd.mkdir()
        kinds: dict[str, dict] = {}
        for name, t in tensors.items():
            kind, _, rest = name.partition("/")
            if kind == "loss":
                rest = "loss"
            kinds.setdefault(kind, {})[rest] = t.contiguous()
        for kind, ts in kinds.items():
            if fmt == "npy":
                for n, t in ts.items():
                    p = sd / (n + ".npy") if kind == "loss" else sd / kind / (n + ".npy")
                    p.parent.mkdir(parents=True, exist_ok=True)
                    np.save(p, np_of(t), allow_pickle=False)
            elif fmt == "safetensors":
                st.save_file(ts, str(sd / f"{kind}.safetensors"))
            else:
                torch.save(ts, sd / f"{kind}.pt")
    np.save(d / "losses.npy", np.array(run.losses, dtype=np.float32), allow_pickle=False)


def differs(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return True
    return any(not torch.equal(a[k], b[k]) or a[k].dtype != b[k].dtype for k in a)


def first_diff(x: Run, y: Run):
    for k, (a, b) in enumerate(zip(x.steps, y.steps)):
        if differs(a, b):
            return k
    return None


def rel(a: torch.Tensor, b: torch.Tensor):
    """‖a−b‖/‖a‖, or a word where it has no value."""
    if a.shape != b.shape:
        return "shapes differ"
    a, b = a.double(), b.double()
    n = a.norm().item()
    d = (a - b).norm().item()
    v = d / n if n > 0 else (0.0 if d == 0 else math.inf)
    return v if math.isfinite(v) else str(v)


def per_step(x: Run, y: Run):
    rows = []
    for k, (a, b) in enumerate(zip(x.steps, y.steps)):
        worst = {}
        for kind in ("loss", "grads", "params", "outputs"):
            vals = [rel(a[n], b[n]) for n in a if n.split("/")[0] == kind and n in b]
            nums = [v for v in vals if isinstance(v, float)]
            if vals:
                worst[kind] = max(nums) if len(nums) == len(vals) else sorted(set(map(str, vals)))
        rows.append({"step": k, "max_rel_l2": worst, "bitwise_equal": not differs(a, b)})
    return rows


def describe(sc: Sc) -> str:
    cap = {"graph": "torch.cuda.graph of the whole step", "callables": "make_graphed_callables (per module)",
           "compile": 'torch.compile(mode="reduce-overhead")'}[sc.capture]
    opt = {"sgdm": "SGD(momentum=0.9)", "adam": "Adam", "adamw": f"AdamW(weight_decay={sc.wd})"}[sc.optim]
    impl = sc.graph_impl if sc.capture == "graph" and sc.optim != "sgdm" else sc.eager_impl
    parts = [f"{sc.family}, {sc.prec}, {opt} (eager {sc.eager_impl}, graph {impl}), {cap}, {sc.dump} dumps"]
    if sc.sched:
        parts.append(f"schedule {sc.sched}")
    if sc.clip:
        parts.append("grad clipping 1.0")
    if tuple(sc.kinds) != ALL:
        parts.append("dumps " + ", ".join(sc.kinds))
    return "; ".join(parts)


def run_scenario(ctx: Ctx, sc: Sc, root: Path, states: dict) -> dict | None:
    t0 = time.perf_counter()
    if sc.bug == "dynamic_shape":
        sc = replace(sc, batches=(BATCH,) * 6 + (BATCH - 2,) * (sc.steps - 6))
    state = states[sc.family]
    eager = run_eager(sc, ctx, state)
    graph = run_graph(sc, ctx, state, bugged=True)
    label = {"family": sc.family, "harness": "corpus", "kind": "compare", "a": "eager", "b": "graph"}
    if sc.prec == "autocast":
        label["compute_dtype"] = "bf16"
    elif sc.prec == "fp16":
        label["compute_dtype"] = "f16"
    measured = {"eager_vs_graph": per_step(eager, graph)}
    if sc.bug is None and sc.extra.get("observe"):
        again, eager2 = run_graph(sc, ctx, state, bugged=True), run_eager(sc, ctx, state)
        if first_diff(graph, again) is not None or first_diff(eager, eager2) is not None:
            ctx.warn(f"{sc.name}: a run does not repeat itself bit for bit: skipped")
            return None
        step = first_diff(eager, graph)
        if step is None:
            label.update(verdict="pass", causes=[], first_divergent_step=None)
            note = "the graphed run is bit for bit the eager one"
        else:
            label.update(verdict="fail", causes=[sc.extra["observe"]], first_divergent_step=step)
            note = (f"the graphed run departs from the eager one, bit for bit, at step {step}, where every "
                    f"other per-module capture of this corpus is bit for bit eager (both runs repeat "
                    f"themselves bit for bit)")
    elif sc.bug is None:
        label.update(verdict="pass", causes=[], first_divergent_step=None)
        note = "correct by construction: the same program graphed"
    else:
        fixed = run_graph(sc, ctx, state, bugged=False)
        fixed2 = run_graph(sc, ctx, state, bugged=False)
        if first_diff(fixed, fixed2) is not None:
            ctx.warn(f"{sc.name}: the fixed graphed run does not repeat itself bit for bit: skipped")
            return None
        step = first_diff(graph, fixed)
        measured["graph_vs_fixed_graph"] = per_step(fixed, graph)
        if step is None:
            ctx.warn(f"{sc.name}: the bug never shows in the dumps: skipped")
            return None
        label.update(verdict="fail", causes=[sc.cause] + sc.extra.get("also", []), first_divergent_step=step)
        note = (f"bug {sc.bug}; first divergent step {step}: the first step at which a dumped tensor "
                f"of the buggy graphed run differs bit for bit from the fixed graphed run (which "
                f"repeats itself bit for bit)")
    label["note"] = f"{describe(sc)}. {note}. {sc.note}".strip()
    d = root / sc.family / sc.name
    if d.exists():
        shutil.rmtree(d)
    write_run(ctx, d / "eager", sc, eager)
    write_run(ctx, d / "graph", sc, graph)
    (d / "label.json").write_text(json.dumps(label, indent=1) + "\n")
    (d / "measured.json").write_text(json.dumps(measured, indent=1, allow_nan=False,
                                                default=str) + "\n")
    secs = time.perf_counter() - t0
    print(f"{sc.name}: {label['verdict']} step {label.get('first_divergent_step')} ({secs:.1f} s)")
    return {"name": sc.name, "family": sc.family, "verdict": label["verdict"],
            "causes": label["causes"], "step": label["first_divergent_step"], "what": describe(sc)}


def write_readme(root: Path, versions: dict | None):
    """README.md: one row per scenario under root, read from the label.json
    files (so that runs made with --only join the others); versions, when
    given, replace the line saying what made the corpus."""
    made = f"Made by `{GENERATOR}` ({json.dumps(versions)})." if versions else ""
    old = root / "README.md"
    if not made and old.exists():
        made = next((l for l in old.read_text().splitlines() if l.startswith("Made by")), "")
    lines = ["# Corpus", "", made, "",
             "| scenario | family | verdict | causes | first divergent step | how |", "|---|---|---|---|---|---|"]
    for lab in sorted(root.glob("*/*/label.json")):
        l = json.loads(lab.read_text())
        step = l.get("first_divergent_step")
        lines.append(f"| {lab.parent.name} | {l['family']} | {l['verdict']} | {', '.join(l.get('causes') or [])} | "
                     f"{'' if step is None else step} | {l.get('note', '').split('. ')[0]} |")
    old.write_text("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "corpus"))
    ap.add_argument("--only", default="")
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--readme", action="store_true", help="only write README.md from the labels under --out")
    args = ap.parse_args()
    if args.readme:
        write_readme(Path(args.out), None)
        return
    if not args.cpu and not torch.cuda.is_available():
        sys.exit("no CUDA device: use --cpu for a logic test")
    ctx = Ctx(args.cpu)
    root = Path(args.out)
    root.mkdir(parents=True, exist_ok=True)
    states = {f: init_state(f) for f in FAMILIES}
    only = set(filter(None, args.only.split(",")))
    rows = []
    for sc in scenarios():
        if only and sc.name not in only:
            continue
        if ctx.cpu and sc.prec in ("bf16", "fp16"):
            ctx.warn(f"{sc.name}: {sc.prec} skipped on the CPU")
            continue
        try:
            r = run_scenario(ctx, sc, root, states)
        except Exception as e:  # noqa: BLE001 - reported, the rest still run
            ctx.warn(f"{sc.name}: {type(e).__name__}: {e}")
            continue
        if r:
            rows.append(r)
    versions = {"python": platform.python_version(), "torch": torch.__version__,
                "numpy": np.__version__, "device": "cpu" if ctx.cpu else torch.cuda.get_device_name()}
    write_readme(root, versions if rows else None)
    print(f"{len(rows)} scenarios written; {len(ctx.warnings)} warnings")
    for w in ctx.warnings:
        print("  " + w)


if __name__ == "__main__":
    main()
