#!/usr/bin/env python3
"""Generate graphdiff's scenario fixtures: small eager-vs-CUDA-graph training runs,
correct ones and ones with the CUDA-graph bugs users actually hit, plus long
loss curves.

Usage (from the repository root):

    python3 testdata/gen/scenarios.py [--out testdata] [--only NAME,...] [--cpu]

What it writes (under --out, default: the testdata/ directory next to gen/):

  scenarios/<name>/{eager,graph}/     one training run each, graphdiff's dump layout:
                                      step_00000k/loss.npy (0-d), grads/<param>.npy,
                                      params/<param>.npy (after the optimizer step),
                                      inputs/{x,y}.npy, outputs/out.npy (what is
                                      dumped varies per scenario), losses.npy and
                                      manifest.json (labels: scenario, bug,
                                      expected_first_divergent_step, what, optimizer ...)
  scenarios/<name>/baseline/          fp32_adam and bf16_adam only: a second eager
                                      run, mathematically identical but rounding
                                      differently (batch processed as two halves),
                                      a noise floor
  scenarios/<name>/scenario.json      the scenario's description and the numbers
                                      this script measured (eager vs graph)
  scenarios/README.md                 table of all scenarios found under scenarios/
  curves/<name>/{eager,graph}/        1000-step runs, losses only: losses.npy,
                                      manifest.json; for fp32_long and
                                      frozen_scalar_long also loss.csv, loss.jsonl
                                      and tb/ (TensorBoard event file)
  curves/<name>/curve.json, curves/README.md

Directories owned (deleted and recreated when their scenario/curve runs):
scenarios/<name>/ and curves/<name>/ for every name run; the two README.md
files are rewritten from the scenario.json/curve.json files present.  Nothing
else is touched.

How it is meant to be run: once, on a machine with one NVIDIA H100/H200,
Python 3.12, torch 2.11 (CUDA), numpy 2.x, ml_dtypes (bfloat16 dumps are
np.save of ml_dtypes.bfloat16 arrays, descr '<V2') and tensorboard.  The
graph runs use the real CUDA-graph API: torch.cuda.CUDAGraph, three warm-up
steps on a side stream, parameters and optimizer state restored in place,
torch.cuda.graph(g) capture of the whole step (forward, backward,
optimizer.step()), then g.replay() per step.  Each bug is introduced the way
users hit it (see SCENARIOS below and scenarios/README.md).  The
eager run is the reference.

--cpu is a logic test for machines without CUDA: everything runs on the CPU,
the "graph" runs execute the same Python eagerly (a replay re-runs the step
function and copies its results into the "static" tensors returned at
"capture"), their manifests say "graphed": false and carry the label
cpu_simulation=true; parts needing ml_dtypes (bfloat16 dumps) or tensorboard
are skipped with a NOTE.  Several bugs cannot show on the CPU; the WARNINGs
printed then are expected.  --cpu outputs are not fixtures.

Deterministic: fixed seeds, TF32 off, the same batches (drawn up front on the
CPU from a seeded generator) for eager and graph.  torch.use_deterministic_
algorithms is NOT enabled: with it, torch.empty fills memory with NaN
(torch.utils.deterministic.fill_uninitialized_memory), which would change the
uninitialized_memory scenario.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_fixtures as gf  # noqa: E402  helpers only (save_npy, to_host, ...)

ml_dtypes = gf.ml_dtypes   # None when missing (tolerated with --cpu only)

GENERATOR = "testdata/gen/scenarios.py"
MAX_TOTAL_BYTES = 4_000_000

IN, HID, OUT, BATCH = 16, 32, 4, 8
SEED_INIT, SEED_DATA, SEED_NOISE, SEED_DROP, SEED_CURVE = 0, 1, 2, 3, 4
DROP_P = 0.25
NOISE_STD = 0.3
AUX_COEF = 0.01
WARMUP = 3
CURVE_STEPS = 1000
TB_WALLTIME0 = 1_700_000_000.0
TB_LR_EVERY = 50

MODEL_DESC = ("SmallMLP fc1=Linear(16,32) relu fc2=Linear(32,32) relu fc3=Linear(32,4) "
              "(1732 parameters)")
ALL_KINDS = ("loss", "grads", "params", "inputs", "outputs")

# assert_close default tolerances (torch.testing) by dumped dtype
TOL = {"float32": (1.3e-6, 1e-5), "bfloat16": (1.6e-2, 1e-5)}
# a correct scenario warns above this relative L2 (by compute dtype)
CORRECT_REL_L2 = {"float32": 1e-3, "bfloat16": 5e-2}


# --------------------------------------------------------------------------
# context


class Ctx:
    def __init__(self, out: Path, cpu: bool):
        self.out = out
        self.cpu = cpu
        self.device = torch.device("cpu") if cpu else torch.device("cuda")
        self.device_name = "cpu" if cpu else torch.cuda.get_device_name()
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.timings: list[tuple[str, float]] = []
        self.versions = {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "torch": torch.__version__,
            "torch_cuda": torch.version.cuda,
            "ml_dtypes": getattr(ml_dtypes, "__version__", None),
            "device": self.device_name,
        }
        self._noted = set()
        self.unwritten_bytes = 0   # --cpu: estimated size of what was skipped

    def note(self, msg: str) -> None:
        if msg in self._noted:
            return
        self._noted.add(msg)
        print("NOTE: " + msg)
        self.notes.append(msg)

    def warn(self, msg: str) -> None:
        print("WARNING: " + msg)
        self.warnings.append(msg)

    def sync(self) -> None:
        if not self.cpu:
            torch.cuda.synchronize()

    def banner(self) -> str:
        if not self.cpu:
            return ""
        return ("**Written with --cpu (logic test, no CUDA, graph runs executed eagerly, NOT "
                "graphed): not a fixture, do not commit.**\n\n")


def dtype_name(dt: torch.dtype) -> str:
    return {torch.float32: "float32", torch.bfloat16: "bfloat16"}[dt]


def can_write(ctx: Ctx, dt: torch.dtype) -> bool:
    return dt != torch.bfloat16 or ml_dtypes is not None


# --------------------------------------------------------------------------
# model, data, loss


class SmallMLP(nn.Module):
    def __init__(self, dropout: bool = False):
        super().__init__()
        self.fc1 = nn.Linear(IN, HID)
        self.fc2 = nn.Linear(HID, HID)
        self.fc3 = nn.Linear(HID, OUT)
        # nn.Dropout has no parameters: the parameter names stay fc1.weight ...
        self.drop = nn.Dropout(DROP_P) if dropout else nn.Identity()

    def forward(self, x):
        h = self.drop(torch.relu(self.fc1(x)))
        return self.fc3(torch.relu(self.fc2(h)))


class SmallConv(nn.Module):
    """The (n, 16) input read as a 1-channel signal of length 16: two 1-D
    convolutions with ReLU and a linear head (about 750 parameters)."""

    def __init__(self, dropout: bool = False):
        super().__init__()
        self.conv1 = nn.Conv1d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv1d(8, 8, 3, padding=1)
        self.head = nn.Linear(8 * IN, OUT)

    def forward(self, x):
        h = torch.relu(self.conv1(x.unsqueeze(1)))
        h = torch.relu(self.conv2(h))
        return self.head(h.flatten(1))


class TinyAttention(nn.Module):
    """The (n, 16) input read as 4 tokens of 4 features: embedding, one
    self-attention head, a GELU MLP with a residual, mean pooling and a
    linear head (about 700 parameters)."""

    def __init__(self, dropout: bool = False):
        super().__init__()
        self.embed = nn.Linear(4, 8)
        self.attn = nn.MultiheadAttention(8, 1, batch_first=True)
        self.norm = nn.LayerNorm(8)
        self.mlp1 = nn.Linear(8, 16)
        self.mlp2 = nn.Linear(16, 8)
        self.head = nn.Linear(8, OUT)

    def forward(self, x):
        t = self.embed(x.view(x.shape[0], 4, 4))
        a, _ = self.attn(t, t, t, need_weights=False)
        t = self.norm(t + a)
        t = t + self.mlp2(F.gelu(self.mlp1(t)))
        return self.head(t.mean(1))


MODELS = {"mlp": SmallMLP, "conv": SmallConv, "attn": TinyAttention}
MODEL_DESCS = {
    "conv": "SmallConv conv1=Conv1d(1,8,3) relu conv2=Conv1d(8,8,3) relu head=Linear(128,4)",
    "attn": "TinyAttention embed=Linear(4,8) attn=MultiheadAttention(8,1) norm=LayerNorm(8) "
            "mlp1=Linear(8,16) gelu mlp2=Linear(16,8) head=Linear(8,4), input as 4 tokens x 4",
}


def init_state(model: str = "mlp") -> dict:
    torch.manual_seed(SEED_INIT)
    m = MODELS[model]()
    return {k: v.detach().clone() for k, v in m.state_dict().items()}


def new_model(ctx: Ctx, state: dict, dtype, dropout=False, model: str = "mlp") -> nn.Module:
    m = MODELS[model](dropout).to(device=ctx.device, dtype=dtype)
    m.load_state_dict({k: v.to(dtype) for k, v in state.items()})
    m.train()
    return m


def make_batches(sizes, seed: int):
    """Inputs x ~ N(0,1) of shape (n, 16); targets y = tanh(x @ W_t) of a fixed
    random teacher W_t (16, 4); all drawn on the CPU from one seeded generator."""
    g = torch.Generator().manual_seed(seed)
    w_t = torch.randn(IN, OUT, generator=g) * 0.5
    xs, ys = [], []
    for n in sizes:
        x = torch.randn(n, IN, generator=g)
        xs.append(x)
        ys.append(torch.tanh(x @ w_t))
    return xs, ys


def mse(ctx: Ctx, out, y):
    if ctx.cpu and out.dtype == torch.bfloat16:
        ctx.note(f"torch {torch.__version__} has no CPU bfloat16 mse_loss: --cpu uses "
                 "mean((out - y)**2) for bfloat16 runs")
        return ((out - y) ** 2).mean()
    return F.mse_loss(out, y)


def reseed_default_rng(ctx: Ctx, seed: int) -> None:
    if ctx.cpu:
        torch.manual_seed(seed)
    else:
        torch.cuda.manual_seed(seed)


# --------------------------------------------------------------------------
# scenario description


class Scenario:
    def __init__(self, name, bug, expected, what, *, steps=6, dtype=torch.float32,
                 compute_dtype=None, optim="sgd", lr=0.05, dumps=ALL_KINDS, dropout=False,
                 fwd=None, feed="copy", grads_at_capture="none", alias=False, autocast=None,
                 lr_gamma=None, setup=None, before_capture=None, before_loop=None,
                 baseline=False, batch_sizes=None, eager_code="", graph_code="", notes="",
                 model="mlp"):
        self.name = name
        self.model = model                  # mlp | conv | attn (MODELS)
        self.bug = bug
        self.expected = expected            # "none" or a step number as a string
        self.what = what
        self.steps = steps
        self.dtype = dtype
        self.compute_dtype = compute_dtype or dtype_name(dtype)
        self.optim = optim
        self.lr = lr
        self.dumps = tuple(dumps)
        self.dropout = dropout
        self.fwd = fwd or fwd_plain
        self.feed = feed                    # copy | rebind_x | copy_after | prefix
        self.grads_at_capture = grads_at_capture   # none | zeros
        self.alias = alias
        self.autocast = autocast            # None | "cache_off" | "cache_on"
        self.lr_gamma = lr_gamma
        self.setup = setup
        self.before_capture = before_capture
        self.before_loop = before_loop
        self.baseline = baseline
        self.batch_sizes = tuple(batch_sizes or [BATCH] * steps)
        assert len(self.batch_sizes) == steps
        self.eager_code = eager_code
        self.graph_code = graph_code
        self.notes = notes


class Env:
    """Per-run state handed to the forward functions."""

    def __init__(self, ctx: Ctx, sc: Scenario, run: str):
        self.ctx = ctx
        self.sc = sc
        self.run = run          # eager | graph | baseline
        self.k = 0              # the step the Python code believes it is at
        self.state: dict = {}


def opt_label(sc: Scenario, graphed: bool, ctx: Ctx) -> str:
    if sc.optim == "adam":
        cap = graphed and not ctx.cpu
        lab = f"Adam(lr={sc.lr!r}, capturable={cap})"
        if graphed and ctx.cpu:
            lab += " [--cpu: capturable=True needs CUDA]"
    else:
        lab = f"SGD(lr={sc.lr!r}, momentum=0.9)"
    if sc.lr_gamma is not None:
        lab += f" + ExponentialLR(gamma={sc.lr_gamma!r}), scheduler.step() after every step"
    return lab


def make_opt(sc: Scenario, params, graphed: bool, ctx: Ctx):
    if sc.optim == "adam":
        opt = torch.optim.Adam(params, lr=sc.lr, capturable=graphed and not ctx.cpu)
    else:
        opt = torch.optim.SGD(params, lr=sc.lr, momentum=0.9)
    sched = (torch.optim.lr_scheduler.ExponentialLR(opt, gamma=sc.lr_gamma)
             if sc.lr_gamma is not None else None)
    return opt, sched


def autocast_ctx(ctx: Ctx, sc: Scenario):
    if sc.autocast is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=ctx.device.type, dtype=torch.bfloat16,
                          cache_enabled=(sc.autocast == "cache_on"))


# ---- forward functions: (env, model, x, y) -> (loss, out)


def fwd_plain(env: Env, model, x, y):
    out = model(x)
    # under autocast the output is bfloat16: the loss is taken in float32
    return mse(env.ctx, out if out.dtype == y.dtype else out.float(), y), out


def setup_noise(env: Env, model) -> None:
    # data augmentation: Gaussian noise drawn on the CPU from a seeded generator
    # into a pinned staging buffer and sent to the GPU with non_blocking=True
    # (a plain .to(device) from pageable memory is refused during capture)
    env.state["noise_gen"] = torch.Generator().manual_seed(SEED_NOISE)
    env.state["noise_host"] = torch.empty(BATCH, IN, dtype=env.sc.dtype,
                                          pin_memory=not env.ctx.cpu)
    if env.ctx.cpu:
        env.ctx.note("--cpu: frozen_rng's staging buffer is not pinned (pinning needs CUDA)")


def reseed_noise(env: Env) -> None:
    env.state["noise_gen"].manual_seed(SEED_NOISE)


def fwd_noise(env: Env, model, x, y):
    host = env.state["noise_host"]
    host.normal_(generator=env.state["noise_gen"])      # CPU op: runs once at capture
    noise = host.to(env.ctx.device, non_blocking=True)  # captured H2D copy of that buffer
    out = model(x + NOISE_STD * noise)
    return mse(env.ctx, out, y), out


def draw_mask(env: Env, shape):
    u = torch.rand(shape, device=env.ctx.device, generator=env.state["drop_gen"])
    return (u >= DROP_P).to(env.sc.dtype)


def setup_mask(env: Env, model) -> None:
    env.state["drop_gen"] = torch.Generator(device=env.ctx.device).manual_seed(SEED_DROP)
    if env.run == "graph":
        # sampling from a custom CUDA generator inside capture raises (it is not
        # registered with the graph), so the user samples the mask outside the
        # graph, once, before capture ... and it never changes again
        env.state["mask"] = draw_mask(env, (BATCH, HID))


def fwd_mask(env: Env, model, x, y):
    h = torch.relu(model.fc1(x))
    mask = env.state["mask"] if env.run == "graph" else draw_mask(env, h.shape)
    h = h * mask / (1.0 - DROP_P)
    out = model.fc3(torch.relu(model.fc2(h)))
    return mse(env.ctx, out, y), out


def fwd_uninit(env: Env, model, x, y):
    h1 = torch.relu(model.fc1(x))
    with torch.no_grad():
        # activation statistic for logging; its (8, 32) temporary is freed at once
        env.state["act_ms"] = (h1 * h1).mean()
    if env.run == "graph":
        acc = torch.empty_like(h1)   # BUG: read before written (should be zeros)
    else:
        acc = torch.zeros_like(h1)
    acc += h1                        # sum of branch outputs (a single branch here)
    out = model.fc3(torch.relu(model.fc2(acc)))
    return mse(env.ctx, out, y), out


def aux_l2(model):
    return AUX_COEF * sum((p * p).sum() for n, p in model.named_parameters()
                          if n.endswith("weight"))


def fwd_branch(env: Env, model, x, y):
    out = model(x)
    loss = mse(env.ctx, out, y)
    if env.k < 3:                    # Python branch: decided once, at capture (k = 0)
        loss = loss + aux_l2(model)
    return loss, out


def fwd_weight(env: Env, model, x, y):
    out = model(x)
    w = 1.0 / (env.k + 1)            # Python float: baked into the graph at capture (k = 0)
    return w * mse(env.ctx, out, y), out


def reseed_dropout(env: Env) -> None:
    reseed_default_rng(env.ctx, SEED_DROP)


# --------------------------------------------------------------------------
# scenario list

NO_INPUTS = ("loss", "grads", "params")
NO_OUTPUTS = ("loss", "grads", "params", "inputs")
LOSS_ONLY = ("loss",)

SCENARIOS = [
    Scenario("fp32_adam", "none", "none",
             "A small MLP trained with Adam(lr=1e-3) in float32; the graph run captures the "
             "whole step with Adam(capturable=True), as PyTorch requires for capture.",
             dumps=NO_OUTPUTS, steps=8, optim="adam", lr=1e-3, baseline=True,
             eager_code="zero_grad; loss=mse(model(x_k),y_k); backward; step",
             graph_code="static_x.copy_(x_k); static_y.copy_(y_k); g.replay()"),
    Scenario("bf16_adam", "none", "none",
             "Pure bfloat16 (parameters, data, optimizer state) MLP with Adam(lr=1e-3); "
             "the graph run uses Adam(capturable=True).",
             dumps=NO_OUTPUTS, steps=8, dtype=torch.bfloat16, optim="adam", lr=1e-3, baseline=True,
             eager_code="zero_grad; loss=mse(model(x_k),y_k); backward; step",
             graph_code="static_x.copy_(x_k); static_y.copy_(y_k); g.replay()"),
    Scenario("autocast_bf16_ok", "none", "none",
             "float32 parameters, forward under torch.autocast(bfloat16, cache_enabled=False) "
             "in both runs, SGD(lr=0.05, momentum=0.9); dumps are float32.",
             dumps=NO_OUTPUTS, compute_dtype="bfloat16", autocast="cache_off",
             eager_code="per step: with autocast(cache_enabled=False): zero_grad, forward, "
                        "backward, step",
             graph_code="warm-up, capture and replay loop all inside one "
                        "autocast(cache_enabled=False) region (the casts are captured)"),
    Scenario("sgd_identical", "none", "none",
             "float32 MLP with SGD(lr=0.05, momentum=0.9) in both runs: the same kernels, "
             "expected bitwise equal.",
             dumps=NO_OUTPUTS, eager_code="zero_grad; loss=mse(model(x_k),y_k); backward; step",
             graph_code="static_x.copy_(x_k); static_y.copy_(y_k); g.replay()"),
    Scenario("dropout_ok", "none", "none",
             "MLP with nn.Dropout(0.25) after the first ReLU, drawn from PyTorch's default "
             "CUDA generator, which CUDA graphs handle (fresh masks every replay); the default "
             "generator is seeded just before the training loop in both runs.",
             dropout=True, before_loop=reseed_dropout,
             eager_code="torch.cuda.manual_seed(3) before the loop; plain steps",
             graph_code="torch.cuda.manual_seed(3) after capture, before the loop; "
                        "copy_ + g.replay()"),
    Scenario("captured_lr", "captured_scalar", "1",
             "Pure bfloat16 MLP, SGD(lr=0.2, momentum=0.9) with ExponentialLR(gamma=0.5) "
             "stepped every step; the graph captured optimizer.step() with the Python float "
             "lr of capture time, so it keeps using lr=0.2.",
             dtype=torch.bfloat16, lr=0.2, lr_gamma=0.5, dumps=NO_INPUTS,
             eager_code="step; scheduler.step() (next step reads the new group['lr'])",
             graph_code="copy_; g.replay(); scheduler.step() (changes group['lr'], which the "
                        "graph never reads again)",
             notes="Step 0 uses lr 0.2 in both; step 1's update is the first to use a "
                   "changed LR (0.1 eager, 0.2 graph): params differ from step 1, loss from "
                   "step 2."),
    Scenario("stale_input", "stale_input", "1",
             "The graph run feeds each batch with `static_x = x_k` (rebinding the Python name) "
             "instead of `static_x.copy_(x_k)`, so every replay reads the capture-time batch.",
             feed="rebind_x",
             eager_code="loss=mse(model(x_k),y_k) ...",
             graph_code="static_x = x_k  (BUG: rebinding); static_y.copy_(y_k); g.replay()",
             notes="inputs/x.npy is x_k in both runs (what the user dumps); step 0 used the "
                   "capture batch, which is batch 0."),
    Scenario("frozen_rng", "frozen_rng", "1",
             "Data augmentation: Gaussian noise (std 0.3) from a seeded CPU generator is "
             "added to the input inside the step; in the graph the CPU-side draw runs once "
             "at capture, and every replay copies the same noise.",
             setup=setup_noise, before_capture=reseed_noise, fwd=fwd_noise,
             eager_code="noise_host.normal_(generator=cpu_gen); "
                        "x + 0.3*noise_host.to(dev, non_blocking=True)",
             graph_code="same code inside the captured step; cpu_gen seeded right before "
                        "capture so that replay 0 uses draw 0",
             notes="The noise lives in a pinned staging buffer (torch 2.x refuses an "
                   "H2D copy from pageable memory during capture and says to pin it); the "
                   "captured memcpy re-reads that buffer, whose contents no longer change. "
                   "inputs/x.npy is the clean batch x_k in both runs."),
    Scenario("frozen_rng_dropout", "frozen_rng", "1",
             "Dropout-like mask drawn with torch.rand(..., generator=custom CUDA generator); "
             "the graph run samples it once, outside the graph, before capture (sampling a "
             "custom generator that is not registered with the graph inside capture raises), "
             "so every replay applies the same mask.",
             setup=setup_mask, fwd=fwd_mask,
             eager_code="mask = rand(.., generator=drop_gen) >= 0.25 every step",
             graph_code="mask drawn once before capture from drop_gen; g.replay()",
             notes="g.register_generator_state(drop_gen) before capture would make it correct."),
    Scenario("grad_accumulation", "grad_accumulation", "1",
             "The graph run zeroes the grads in place (zero_grad(set_to_none=False)) once "
             "before capture instead of setting them to None, and nothing zeroes them inside "
             "the graph: the captured backward accumulates, replay k sees the sum of grads "
             "0..k.",
             grads_at_capture="zeros", dumps=NO_INPUTS,
             eager_code="zero_grad(set_to_none=True) every step",
             graph_code="zero_grad(set_to_none=False) once before capture; copy_; g.replay()"),
    Scenario("input_lag", "input_lag", "1",
             "The graph run copies the new batch into the static inputs after the replay "
             "(g.replay(); static_x.copy_(x_k)), so step k computes on batch k-1 (step 0 on "
             "the capture batch, batch 0).",
             feed="copy_after",
             eager_code="loss=mse(model(x_k),y_k) ...",
             graph_code="g.replay(); static_x.copy_(x_k); static_y.copy_(y_k)  (BUG: order)",
             notes="inputs/x.npy is static_x after the copy, i.e. x_k, in both runs."),
    Scenario("output_aliasing", "output_aliasing", "0",
             "The user keeps references to the static loss and output "
             "(losses.append(static_loss)) instead of .clone()/.item() and dumps them after "
             "the loop: every step's loss and output show the last step's values.",
             alias=True,
             eager_code="losses.append(loss); outs.append(out); dumped after the loop "
                        "(fresh tensors every step: correct)",
             graph_code="losses.append(static_loss); outs.append(static_out); dumped after "
                        "the loop (BUG: all alias the same static tensors)",
             notes="grads, params and inputs are copied right after every step, so only "
                   "loss.npy, outputs/out.npy and losses.npy show it; the last step agrees."),
    Scenario("uninitialized_memory", "uninitialized_memory", "0",
             "An accumulator is created with torch.empty_like inside the captured step and "
             "then added to (acc += h), instead of torch.zeros_like: the graph reads whatever "
             "its private memory pool holds there.",
             fwd=fwd_uninit,
             eager_code="acc = torch.zeros_like(h1); acc += h1",
             graph_code="acc = torch.empty_like(h1); acc += h1  (BUG)",
             notes="Just before, a logging statistic (h1*h1).mean() frees an (8, 32) "
                   "temporary; the graph's allocator hands that block to acc, so the garbage "
                   "is h1*h1 of the same replay: visible from step 0."),
    Scenario("captured_branch", "captured_branch", "3",
             "A Python `if step < 3:` adds an L2 weight penalty (0.01 * sum of squared "
             "weights) to the loss; the graph was captured at step 0, so it always includes "
             "the penalty, while eager drops it from step 3.",
             dumps=NO_OUTPUTS, fwd=fwd_branch,
             eager_code="if step < 3: loss = loss + 0.01*L2",
             graph_code="captured with step=0: the penalty is always in the graph"),
    Scenario("captured_loss_weight", "captured_scalar", "1",
             "The loss is multiplied by a Python float weight w = 1/(step+1); the graph "
             "baked the capture-time weight w = 1.0.",
             fwd=fwd_weight, dumps=LOSS_ONLY,
             eager_code="loss = (1.0/(step+1)) * mse(...)",
             graph_code="captured with step=0: w = 1.0 forever",
             notes="Only losses.npy and step_*/loss.npy are dumped (the weighted loss)."),
    Scenario("autocast_cache", "autocast_cache", "1",
             "Forward under torch.autocast(bfloat16) with the default cache_enabled=True in "
             "one autocast region spanning warm-up, capture and the replay loop: the bf16 "
             "weight casts cached in the first warm-up step are reused at capture, so the "
             "graph never re-casts the weights and its forward ignores every update.",
             compute_dtype="bfloat16", autocast="cache_on",
             eager_code="per step: with autocast(): zero_grad, forward, backward, step "
                        "(the cache is cleared when the region exits)",
             graph_code="with autocast():  warm-up, capture, replay loop  (BUG: "
                        "cache_enabled=True; PyTorch says to use cache_enabled=False)",
             notes="The cached casts are of the initial weights (first warm-up step), and the "
                   "weights are restored to the initial ones before capture, so step 0 agrees; "
                   "step 1's forward is the first to use stale weights."),
    Scenario("dynamic_shape", "dynamic_shape", "2",
             "Batches of sizes 8, 8, 6, 8, 5, 8; the graph was captured for batch 8 and a "
             "smaller batch is copied into the first rows of the static input, leaving the "
             "tail rows stale from the previous batch; eager runs the real smaller batch.",
             batch_sizes=(8, 8, 6, 8, 5, 8), feed="prefix",
             eager_code="loss=mse(model(x_k),y_k) on the real (n, 16) batch",
             graph_code="static_x[:n].copy_(x_k); static_y[:n].copy_(y_k); g.replay()  "
                        "(BUG: tail rows stale)",
             notes="Each run dumps the inputs/outputs it computed on: eager the real batch "
                   "(6 or 5 rows at steps 2 and 4), graph static_x/static_out (always 8 "
                   "rows), so inputs/x, inputs/y and outputs/out differ in shape at steps 2 "
                   "and 4."),
    # ---- held out: other models, dtypes and dumps than the scenarios above,
    # for checking diagnoses on runs they were not tuned on
    Scenario("conv_adam_ok", "none", "none",
             "A small 1-D convolutional net trained with Adam in float32; the graph run "
             "uses Adam(capturable=True).",
             model="conv", optim="adam", lr=1e-3,
             eager_code="zero_grad; loss=mse(model(x_k),y_k); backward; step",
             graph_code="static_x.copy_(x_k); static_y.copy_(y_k); g.replay()"),
    Scenario("attn_bf16_ok", "none", "none",
             "A tiny attention model in pure bfloat16, SGD in both runs; only loss, grads "
             "and params dumped.",
             model="attn", dtype=torch.bfloat16, dumps=NO_INPUTS,
             eager_code="zero_grad; loss=mse(model(x_k),y_k); backward; step",
             graph_code="static_x.copy_(x_k); static_y.copy_(y_k); g.replay()"),
    Scenario("conv_stale_input", "stale_input", "1",
             "The conv net's graph run rebinds `static_x = x_k`; only loss, grads and params "
             "are dumped (no outputs).",
             model="conv", feed="rebind_x", dumps=NO_INPUTS,
             eager_code="loss=mse(model(x_k),y_k) ...",
             graph_code="static_x = x_k  (BUG: rebinding); static_y.copy_(y_k); g.replay()"),
    Scenario("attn_input_lag", "input_lag", "1",
             "The attention model in bfloat16 copies each batch after replay; loss, grads "
             "and params dumped.",
             model="attn", dtype=torch.bfloat16, feed="copy_after", dumps=NO_INPUTS,
             eager_code="loss=mse(model(x_k),y_k) ...",
             graph_code="g.replay(); static_x.copy_(x_k); static_y.copy_(y_k)  (BUG)"),
    Scenario("conv_grad_accumulation", "grad_accumulation", "1",
             "The conv net in bfloat16 with grads zeroed in place once before capture and "
             "never inside the graph; grads and params dumped, no loss.",
             model="conv", dtype=torch.bfloat16, grads_at_capture="zeros",
             dumps=("grads", "params"),
             eager_code="zero_grad(set_to_none=True) every step",
             graph_code="zero_grad(set_to_none=False) once before capture; copy_; g.replay()"),
    Scenario("attn_captured_lr", "captured_scalar", "1",
             "The attention model in float32 with Adam(capturable=True) and an ExponentialLR "
             "scheduler: the graph baked the capture-time Python float lr.",
             model="attn", optim="adam", lr=1e-2, lr_gamma=0.5, dumps=NO_INPUTS,
             eager_code="step; scheduler.step()",
             graph_code="copy_; g.replay(); scheduler.step() (the graph never reads the new lr)"),
    Scenario("conv_frozen_rng", "frozen_rng", "1",
             "The conv net with CPU-generated input noise inside the captured step (as "
             "frozen_rng); only loss, grads and params dumped.",
             model="conv", setup=setup_noise, before_capture=reseed_noise, fwd=fwd_noise,
             dumps=NO_INPUTS,
             eager_code="x + 0.3*noise (fresh noise every step)",
             graph_code="the noise drawn at capture is replayed every step"),
    Scenario("attn_output_aliasing", "output_aliasing", "0",
             "The attention model keeps references to the static loss and output instead of "
             "clones; loss and outputs dumped after the loop, no grads or params.",
             model="attn", alias=True, dumps=("loss", "outputs"),
             eager_code="losses.append(loss.detach().clone())",
             graph_code="losses.append(static_loss)  (BUG: a reference)"),
    Scenario("branch_losses_only", "captured_branch", "3",
             "As captured_branch (a Python `if step < 3` adds a penalty), with only the "
             "losses dumped.",
             fwd=fwd_branch, dumps=LOSS_ONLY,
             eager_code="if step < 3: loss = loss + 0.01*L2",
             graph_code="captured with step=0: the penalty is always in the graph"),
    Scenario("conv_autocast_cache", "autocast_cache", "1",
             "The conv net under autocast(bfloat16, cache_enabled=True) around warm-up, "
             "capture and replay; loss, grads and params dumped in float32.",
             model="conv", autocast="cache_on", compute_dtype="bfloat16", dumps=NO_INPUTS,
             eager_code="with autocast(bfloat16): eager steps",
             graph_code="one autocast(cache_enabled=True) region around capture and replays"),
    Scenario("lr_decay_small", "captured_scalar", "2",
             "SGD with an ExponentialLR(gamma=0.999): the graph bakes the initial learning "
             "rate, which the eager run lowers by 0.1% a step.",
             lr_gamma=0.999, dumps=NO_INPUTS,
             eager_code="step; scheduler.step()",
             graph_code="copy_; g.replay(); scheduler.step() (the graph never reads the new lr)",
             notes="The graph goes wrong at step 1 (updates x1.001), inside float32's "
                   "thresholds; the difference passes them at step 2."),
    Scenario("lr_decay_tiny", "captured_scalar", "none",
             "SGD with an ExponentialLR(gamma=0.9999): the graph bakes the initial learning "
             "rate, which the eager run lowers by 0.01% a step. The difference stays inside "
             "float32's thresholds: a passing verdict, with a warning.",
             lr_gamma=0.9999, dumps=NO_INPUTS,
             eager_code="step; scheduler.step()",
             graph_code="copy_; g.replay(); scheduler.step() (the graph never reads the new lr)",
             notes="Expected: pass, with a captured_scalar warning (updates x1.0001, x1.0002, ...)."),
]
SCENARIO_BY_NAME = {s.name: s for s in SCENARIOS}


# --------------------------------------------------------------------------
# running


def snap(model, loss, out, inputs: dict, out_dtype=None) -> dict:
    """Host copies, taken right after the step (before the next replay). Under
    autocast the model output is bfloat16: it is dumped widened (exactly) to
    the scenario's dtype, float32, like everything else of that run."""
    host = {}
    if loss is not None:
        host["loss"] = gf.to_host(loss)
    for n, p in model.named_parameters():
        host[f"grads/{n}"] = gf.to_host(p.grad)
    for n, p in model.named_parameters():
        host[f"params/{n}"] = gf.to_host(p)
    for n, t in inputs.items():
        host[f"inputs/{n}"] = gf.to_host(t)
    if out is not None:
        host["outputs/out"] = gf.to_host(out)
        if out_dtype is not None:
            host["outputs/out"] = host["outputs/out"].to(out_dtype)
    return host


def restore_in_place(model, opt, initial) -> None:
    """Parameters back to their initial values, optimizer state tensors zeroed in
    place (Adam: step, exp_avg, exp_avg_sq; SGD: momentum_buffer), so the
    addresses the graph captures are the ones used later."""
    with torch.no_grad():
        for p, p0 in zip(model.parameters(), initial):
            p.copy_(p0)
        for st in opt.state.values():
            for v in st.values():
                if torch.is_tensor(v):
                    v.zero_()


def warmup(ctx: Ctx, body, n=WARMUP) -> None:
    if ctx.cpu:
        for _ in range(n):
            body()
        return
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(n):
            body()
    torch.cuda.current_stream().wait_stream(s)


class Capture:
    """torch.cuda.graph capture; with --cpu the same step function is re-run on
    every 'replay' and its results are copied into the tensors returned at
    'capture' (which is what a replay does to its static outputs)."""

    def __init__(self, ctx: Ctx, model, opt):
        self.ctx = ctx
        self.model = model
        self.opt = opt
        self.g = None

    def capture(self, fn):
        self.grads_none = all(p.grad is None for p in self.model.parameters())
        if self.ctx.cpu:
            # a capture runs no GPU work: undo what running fn did to the
            # parameters, grads and optimizer state (CPU-side effects such as a
            # CPU generator's draw do happen at a real capture and are kept)
            params = [p.detach().clone() for p in self.model.parameters()]
            grads = [None if p.grad is None else p.grad.detach().clone()
                     for p in self.model.parameters()]
            ostate = [(v, v.detach().clone()) for st in self.opt.state.values()
                      for v in st.values() if torch.is_tensor(v)]
            self.fn = fn
            self.static = fn()
            with torch.no_grad():
                for p, p0, g0 in zip(self.model.parameters(), params, grads):
                    p.copy_(p0)
                    p.grad = g0
                for v, v0 in ostate:
                    v.copy_(v0)
            return self.static
        self.g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.g):
            res = fn()
        return res

    def replay(self) -> None:
        if not self.ctx.cpu:
            self.g.replay()
            return
        if self.grads_none:   # the captured backward assigns fresh grads
            for p in self.model.parameters():
                p.grad = None
        res = self.fn()
        with torch.no_grad():
            for s, r in zip(self.static, res):
                s.detach().copy_(r.detach())


def run_eager(ctx: Ctx, sc: Scenario, data, state, run="eager") -> dict:
    xs, ys = data
    env = Env(ctx, sc, run)
    model = new_model(ctx, state, sc.dtype, sc.dropout, sc.model)
    opt, sched = make_opt(sc, model.parameters(), False, ctx)
    if sc.setup:
        sc.setup(env, model)
    if sc.before_loop:
        sc.before_loop(env)
    steps, kept = [], []
    for k in range(sc.steps):
        env.k = k
        x, y = xs[k], ys[k]
        with autocast_ctx(ctx, sc):
            opt.zero_grad(set_to_none=True)
            if run == "baseline":
                # the same math as one batch of 8, rounded differently: two halves,
                # loss = (loss_a + loss_b) / 2, grads accumulated
                h = x.shape[0] // 2
                la, oa = sc.fwd(env, model, x[:h], y[:h])
                (la / 2).backward()
                lb, ob = sc.fwd(env, model, x[h:], y[h:])
                (lb / 2).backward()
                loss = (la.detach() + lb.detach()) / 2
                out = torch.cat([oa.detach(), ob.detach()])
            else:
                loss, out = sc.fwd(env, model, x, y)
                loss.backward()
            opt.step()
        if sched:
            sched.step()
        if sc.alias:
            kept.append((loss, out))    # references, dumped after the loop
            steps.append(snap(model, None, None, {"x": x, "y": y}))
        else:
            steps.append(snap(model, loss, out, {"x": x, "y": y}, sc.dtype))
    if sc.alias:
        for host, (loss, out) in zip(steps, kept):
            host["loss"] = gf.to_host(loss)
            host["outputs/out"] = gf.to_host(out).to(sc.dtype)
    ctx.sync()
    return {"steps": steps, "opt_label": opt_label(sc, False, ctx),
            "code": sc.eager_code if run == "eager" else
            "per step: zero_grad; for each half h of the batch: (mse(model(x_h),y_h)/2)"
            ".backward(); loss=(loss_a+loss_b)/2; step"}


def run_graph(ctx: Ctx, sc: Scenario, data, state) -> dict:
    xs, ys = data
    env = Env(ctx, sc, "graph")
    model = new_model(ctx, state, sc.dtype, sc.dropout, sc.model)
    opt, sched = make_opt(sc, model.parameters(), True, ctx)
    if sc.setup:
        sc.setup(env, model)
    static_x = xs[0].clone()
    static_y = ys[0].clone()
    initial = [p.detach().clone() for p in model.parameters()]

    def train_step():
        loss, out = sc.fwd(env, model, static_x, static_y)
        loss.backward()
        opt.step()
        return loss, out

    def warm_body():
        opt.zero_grad(set_to_none=True)
        train_step()

    steps, kept = [], []
    with autocast_ctx(ctx, sc):     # only autocast scenarios: one region around it all
        env.k = 0
        warmup(ctx, warm_body)
        restore_in_place(model, opt, initial)
        if sc.grads_at_capture == "zeros":
            opt.zero_grad(set_to_none=False)   # grads exist (zeros) at capture
        else:
            opt.zero_grad(set_to_none=True)    # backward allocates them in the graph pool
        if sc.before_capture:
            sc.before_capture(env)
        cap = Capture(ctx, model, opt)
        static_loss, static_out = cap.capture(train_step)
        if sc.before_loop:
            sc.before_loop(env)
        for k in range(sc.steps):
            env.k = k
            x_k, y_k = xs[k], ys[k]
            if sc.feed == "copy":
                static_x.copy_(x_k)
                static_y.copy_(y_k)
                cap.replay()
            elif sc.feed == "rebind_x":
                static_x = x_k             # BUG: rebinds the name, the graph keeps the old tensor
                static_y.copy_(y_k)
                cap.replay()
            elif sc.feed == "copy_after":
                cap.replay()               # BUG: replays before the new batch is in place
                static_x.copy_(x_k)
                static_y.copy_(y_k)
            elif sc.feed == "prefix":
                n = x_k.shape[0]
                static_x[:n].copy_(x_k)    # BUG: rows n.. keep the previous batch
                static_y[:n].copy_(y_k)
                cap.replay()
            else:
                raise ValueError(sc.feed)
            if sched:
                sched.step()
            inputs = {"x": static_x, "y": static_y}
            if sc.alias:
                kept.append((static_loss, static_out))   # BUG: no .clone()
                steps.append(snap(model, None, None, inputs))
            else:
                steps.append(snap(model, static_loss, static_out, inputs, sc.dtype))
        if sc.alias:
            for host, (loss, out) in zip(steps, kept):
                host["loss"] = gf.to_host(loss)
                host["outputs/out"] = gf.to_host(out).to(sc.dtype)
    ctx.sync()
    del cap
    return {"steps": steps, "opt_label": opt_label(sc, True, ctx), "code": sc.graph_code}


# --------------------------------------------------------------------------
# writing


def kind_of(rel: str) -> str:
    return rel.split("/", 1)[0]


def losses_of(steps) -> list:
    return [float(h["loss"].float()) for h in steps]


def run_manifest(ctx: Ctx, sc: Scenario, run: str, res: dict) -> dict:
    graphed = run == "graph" and not ctx.cpu
    role = {"eager": "reference: eager, correct",
            "graph": ("CUDA graph" if not ctx.cpu else "'graph' code run eagerly (--cpu)") +
                     ("" if sc.bug == "none" else f", with the bug {sc.bug}"),
            "baseline": "noise floor: eager, mathematically identical to 'eager', rounded "
                        "differently"}[run]
    labels = {
        "scenario": sc.name,
        "bug": "none" if run == "baseline" else sc.bug,
        "expected_first_divergent_step": "none" if run == "baseline" else sc.expected,
        "what": sc.what,
        "optimizer": res["opt_label"],
        "role": role,
        "code": res["code"],
        "model": MODEL_DESCS.get(sc.model, MODEL_DESC) + (", nn.Dropout(0.25) after the first ReLU" if sc.dropout else ""),
        "loss": "F.mse_loss (mean)",
        "data": (f"torch.Generator().manual_seed({SEED_DATA}); W_t=randn(16,4)*0.5; per step "
                 f"x=randn(n,16), y=tanh(x@W_t); batch sizes {list(sc.batch_sizes)}"),
        "init": f"torch.manual_seed({SEED_INIT}); SmallMLP()",
        "steps": str(sc.steps),
        "dumped": ", ".join(sc.dumps),
        "generator": GENERATOR,
        "float32_matmul_precision": gf.matmul_precision(),
        "allow_tf32": "False",
    }
    if sc.autocast:
        labels["autocast"] = (f"torch.autocast(bfloat16, cache_enabled="
                              f"{sc.autocast == 'cache_on'})")
    if run == "graph":
        labels["capture"] = (f"whole step (forward+backward+optimizer.step) in torch.cuda.graph "
                             f"after {WARMUP} side-stream warm-up steps; params restored and "
                             f"optimizer state zeroed in place before capture")
    if sc.notes:
        labels["notes"] = sc.notes
    if ctx.cpu:
        labels["cpu_simulation"] = "true"
        labels["note"] = "--cpu logic test: NOT a fixture" + (
            "; the 'graph' run was executed eagerly, NOT CUDA-graphed" if run == "graph" else "")
    return {"graphdiff_manifest": 1,
            "run": {"name": run, "graphed": graphed, "torch_version": torch.__version__,
                    "device": ctx.device_name, "compute_dtype": sc.compute_dtype,
                    "labels": labels},
            "tensors": []}


def write_run(ctx: Ctx, run_dir: Path, sc: Scenario, run: str, res: dict) -> None:
    run_dir.mkdir(parents=True)
    for k, host in enumerate(res["steps"]):
        sd = run_dir / f"step_{k:06d}"
        for rel, t in host.items():
            if kind_of(rel) not in sc.dumps:
                continue
            descr = gf.save_host_tensor(sd / f"{rel}.npy", t)
            want = "<V2" if t.dtype == torch.bfloat16 else "<f4"
            assert descr == want, (sd / rel, descr, want)
    descr = gf.save_npy(run_dir / "losses.npy", np.array(losses_of(res["steps"]), np.float32))
    assert descr == "<f4"
    gf.write_json(run_dir / "manifest.json", run_manifest(ctx, sc, run, res))


# --------------------------------------------------------------------------
# metrics


def tol_for(t: torch.Tensor):
    return TOL["bfloat16" if t.dtype == torch.bfloat16 else "float32"]


def group_stats(es: list, gs: list) -> dict:
    """max |e-g|, ||e-g||/||e|| and the fraction of elements outside
    assert_close's default tolerance (|e-g| > atol + rtol*|e|), over the
    concatenation of the tensors; NaN on one side only counts as infinite."""
    rtol, atol = tol_for(es[0])
    e = torch.cat([t.double().reshape(-1) for t in es])
    g = torch.cat([t.double().reshape(-1) for t in gs])
    both_nan = torch.isnan(e) & torch.isnan(g)
    d = (e - g).abs()
    d = torch.where(both_nan, torch.zeros_like(d), d)
    d = torch.where(torch.isnan(d), torch.full_like(d, math.inf), d)
    en = torch.where(torch.isnan(e), torch.zeros_like(e), e)
    ne = float(en.norm())
    nd = float(d.norm()) if torch.isfinite(d).all() else math.inf
    rel = (nd / ne) if ne > 0 else (0.0 if nd == 0 else math.inf)
    beyond = d > (atol + rtol * en.abs())
    bitwise = not bool((d != 0).any())
    return {"max_abs": float(d.max()) if d.numel() else 0.0, "rel_l2": rel,
            "frac_beyond_tol": float(beyond.double().mean()) if d.numel() else 0.0,
            "any_beyond_tol": bool(beyond.any()), "bitwise_equal": bitwise}


def compare(sc: Scenario, ea: list, gb: list) -> list:
    """Per step: stats for loss, grads, params (what is dumped), and whether any
    dumped tensor (inputs and outputs included) differs bitwise / beyond
    tolerance / in shape."""
    per_step = []
    for k, (he, hg) in enumerate(zip(ea, gb)):
        row = {"step": k}
        any_beyond, any_bitwise, shape_diff = False, False, []
        for group in ("loss", "grads", "params", "inputs", "outputs"):
            if group not in sc.dumps:
                continue
            keys = [r for r in he if kind_of(r) == group]
            if not keys:
                continue
            same_shape = [r for r in keys if he[r].shape == hg[r].shape]
            shape_diff += [r for r in keys if he[r].shape != hg[r].shape]
            if not same_shape:
                continue
            st = group_stats([he[r] for r in same_shape], [hg[r] for r in same_shape])
            if group in ("loss", "grads", "params"):
                # 4 significant digits: measurements, not data
                row[group] = {k: float(f"{st[k]:.4g}") for k in
                              ("max_abs", "rel_l2", "frac_beyond_tol")}
            any_beyond |= st["any_beyond_tol"]
            any_bitwise |= not st["bitwise_equal"]
        row["shape_differs"] = shape_diff
        row["any_beyond_tol"] = any_beyond or bool(shape_diff)
        row["any_bitwise_diff"] = any_bitwise or bool(shape_diff)
        per_step.append(row)
    return per_step


def first_step(per_step, key):
    for r in per_step:
        if r[key]:
            return r["step"]
    return None


def sanity(ctx: Ctx, sc: Scenario, per_step: list, label: str) -> None:
    if sc.expected != "none":
        s = int(sc.expected)
        if not per_step[s]["any_beyond_tol"]:
            ctx.warn(f"{label}: bug {sc.bug} shows no difference beyond tolerance at its "
                     f"expected step {s}" + (" (expected with --cpu)" if ctx.cpu else ""))
        early = first_step(per_step, "any_beyond_tol")
        if early is not None and early < s:
            ctx.warn(f"{label}: differs beyond tolerance already at step {early}, before the "
                     f"expected step {s}" + (" (expected with --cpu)" if ctx.cpu else ""))
    else:
        lim = CORRECT_REL_L2[sc.compute_dtype]
        for r in per_step:
            for g in ("loss", "grads", "params"):
                if g in r and r[g]["rel_l2"] > lim:
                    ctx.warn(f"{label}: correct scenario, step {r['step']}: relative L2 of "
                             f"{g} {r[g]['rel_l2']:.3e} > {lim:g}")


# --------------------------------------------------------------------------
# the probe (informational): is sampling an unregistered custom CUDA generator
# inside capture refused on this torch?

PROBE = r'''
import json, torch
r = {}
try:
    gen = torch.Generator(device="cuda"); gen.manual_seed(3)
    x = torch.zeros(8, 32, device="cuda")
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = x + torch.rand(x.shape, device="cuda", generator=gen)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x + torch.rand(x.shape, device="cuda", generator=gen)
    g.replay(); a = y.clone(); g.replay(); b = y.clone()
    r["capture"] = "ok"
    r["replays_repeat_the_mask"] = bool(torch.equal(a, b))
except Exception as e:
    r["capture"] = type(e).__name__ + ": " + (str(e).strip().splitlines() or [""])[0][:300]
print("PROBE " + json.dumps(r))
'''


def probe_custom_generator(ctx: Ctx) -> str:
    if ctx.cpu:
        return "not run (--cpu)"
    try:
        p = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                           timeout=120)
        for line in p.stdout.splitlines():
            if line.startswith("PROBE "):
                r = json.loads(line[6:])
                if r.get("capture") == "ok":
                    return ("capture with an unregistered custom CUDA generator succeeded; "
                            f"consecutive replays repeat the values: "
                            f"{r.get('replays_repeat_the_mask')}")
                return f"capture with an unregistered custom CUDA generator raised {r['capture']}"
        return f"probe gave no answer (rc {p.returncode}): {p.stderr.strip()[-300:]}"
    except Exception as e:  # noqa: BLE001 - informational only
        return f"probe failed: {type(e).__name__}: {e}"


# --------------------------------------------------------------------------
# scenarios: run, write, measure


def run_scenario(ctx: Ctx, sc: Scenario, state: dict) -> None:
    t0 = time.perf_counter()
    d = ctx.out / "scenarios" / sc.name
    gf.reset_dir(d)
    xs, ys = make_batches(sc.batch_sizes, SEED_DATA)
    data = ([x.to(device=ctx.device, dtype=sc.dtype) for x in xs],
            [y.to(device=ctx.device, dtype=sc.dtype) for y in ys])
    results = {"eager": run_eager(ctx, sc, data, state),
               "graph": run_graph(ctx, sc, data, state)}
    if sc.baseline:
        results["baseline"] = run_eager(ctx, sc, data, state, run="baseline")
    write = can_write(ctx, sc.dtype)
    if write:
        for run, res in results.items():
            write_run(ctx, d / run, sc, run, res)
    else:
        ctx.note(f"ml_dtypes missing: {sc.name} (bfloat16) trained and measured, dumps not "
                 "written")
        for res in results.values():
            # np.save of a small array: 128-byte header + the data
            ctx.unwritten_bytes += sum(128 + t.numel() * t.element_size()
                                       for h in res["steps"] for r, t in h.items()
                                       if kind_of(r) in sc.dumps) + 128 + 4 * sc.steps + 1500

    per_step = compare(sc, results["eager"]["steps"], results["graph"]["steps"])
    sanity(ctx, sc, per_step, sc.name)
    base = None
    if sc.baseline:
        base = compare(sc, results["eager"]["steps"], results["baseline"]["steps"])
    extra = {}
    if sc.name == "frozen_rng_dropout":
        extra["probe"] = probe_custom_generator(ctx)
        print(f"  probe: {extra['probe']}")
    secs = time.perf_counter() - t0
    info = {
        "name": sc.name, "bug": sc.bug, "expected_first_divergent_step": sc.expected,
        "what": sc.what, "notes": sc.notes, "steps": sc.steps,
        "batch_sizes": list(sc.batch_sizes), "dumped": list(sc.dumps),
        "dtype": dtype_name(sc.dtype), "compute_dtype": sc.compute_dtype,
        "optimizer_eager": results["eager"]["opt_label"],
        "optimizer_graph": results["graph"]["opt_label"],
        "eager_code": sc.eager_code, "graph_code": sc.graph_code,
        "written": write, "cpu_simulation": ctx.cpu,
        "versions": ctx.versions,
        "measured": {
            "first_step_beyond_tolerance": first_step(per_step, "any_beyond_tol"),
            "first_step_bitwise_different": first_step(per_step, "any_bitwise_diff"),
            "losses_eager": losses_of(results["eager"]["steps"]),
            "losses_graph": losses_of(results["graph"]["steps"]),
            "per_step": per_step,
        },
        **extra,
    }
    if base is not None:
        info["baseline_vs_eager"] = {
            "first_step_bitwise_different": first_step(base, "any_bitwise_diff"),
            "losses_baseline": losses_of(results["baseline"]["steps"]),
            "per_step": base}
    write_json_rows(d / "scenario.json", json_safe(info))
    ctx.timings.append((f"scenario {sc.name}", secs))
    m = info["measured"]
    print(f"  {sc.name}: {secs:.2f} s; expected first divergent step {sc.expected}, measured "
          f"beyond tolerance {m['first_step_beyond_tolerance']}, bitwise "
          f"{m['first_step_bitwise_different']}")


def write_json_rows(path: Path, obj) -> None:
    """JSON with indent 1, except that a dict inside a list takes one line."""
    def enc(o, ind):
        pad = " " * ind
        if isinstance(o, dict) and o:
            items = [f'{pad} {json.dumps(k)}: {enc(v, ind + 1)}' for k, v in o.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(o, list) and o and any(isinstance(v, (dict, list)) for v in o):
            items = [pad + " " + json.dumps(v, allow_nan=False) for v in o]
            return "[\n" + ",\n".join(items) + "\n" + pad + "]"
        return json.dumps(o, allow_nan=False)
    text = enc(obj, 0) + "\n"
    assert json.loads(text) == obj
    path.write_text(text)


def json_safe(obj):
    """Non-finite floats as "nan"/"inf"/"-inf" strings (JSON has none)."""
    if isinstance(obj, float):
        return gf.jfloat(obj)
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if isinstance(v, float):
        if math.isinf(v) or math.isnan(v):
            return str(v)
        return "0" if v == 0 else f"{v:.3e}"
    return str(v)


def numbers_rows(info: dict) -> list:
    """(label, step, stats row) for the step of interest and the last step."""
    m = info["measured"]
    ps = m["per_step"]
    rows = []
    if info["expected_first_divergent_step"] != "none":
        s = int(info["expected_first_divergent_step"])
        rows.append((info["name"], f"{s} (expected first)", ps[s]))
    elif m["first_step_bitwise_different"] is not None:
        s = m["first_step_bitwise_different"]
        rows.append((info["name"], f"{s} (first bitwise diff)", ps[s]))
    last = len(ps) - 1
    if not rows or not rows[0][1].startswith(f"{last} "):
        rows.append((info["name"], f"{last} (last)", ps[last]))
    if "baseline_vs_eager" in info:
        b = info["baseline_vs_eager"]["per_step"]
        rows.append((info["name"] + " eager vs baseline", f"{last} (last)", b[last]))
    return rows


def stat_cells(row: dict) -> list:
    cells = []
    for g, keys in (("loss", ("max_abs", "rel_l2")),
                    ("grads", ("max_abs", "rel_l2", "frac_beyond_tol")),
                    ("params", ("max_abs", "rel_l2"))):
        for key in keys:
            cells.append(fmt(row[g][key]) if g in row else "-")
    return cells


NUM_HEADER = ["scenario", "step", "loss max|e-g|", "loss relL2", "grads max|e-g|",
              "grads relL2", "grads frac>tol", "params max|e-g|", "params relL2"]


def load_infos(dirpath: Path, fname: str) -> list:
    infos = []
    if dirpath.is_dir():
        for sub in sorted(dirpath.iterdir()):
            f = sub / fname
            if f.is_file():
                infos.append(json.loads(f.read_text()))
    order = {s.name: i for i, s in enumerate(SCENARIOS)}
    order.update({n: i for i, n in enumerate(CURVES)})
    infos.sort(key=lambda i: (order.get(i["name"], 999), i["name"]))
    return infos


def print_table(header, rows) -> None:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    for r in [header] + rows:
        print("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)))


def md_table(header, rows) -> str:
    s = ("| " + " | ".join(str(c).replace("|", "\\|") for c in header) + " |\n|" +
         "---|" * len(header) + "\n")
    for r in rows:
        s += "| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |\n"
    return s


def write_scenarios_readme(ctx: Ctx) -> None:
    d = ctx.out / "scenarios"
    infos = load_infos(d, "scenario.json")
    if not infos:
        return
    desc_header = ["scenario", "cause (bug)", "expected first divergent step",
                   "measured: first step beyond tol", "measured: first bitwise diff",
                   "dumped", "dtype (dumped / compute)", "steps", "optimizer eager / graph"]
    desc_rows = []
    num_rows = []
    for i in infos:
        m = i["measured"]
        desc_rows.append([
            i["name"] + ("" if i["written"] else " (not written)"), i["bug"],
            i["expected_first_divergent_step"], fmt(m["first_step_beyond_tolerance"]),
            fmt(m["first_step_bitwise_different"]), ", ".join(i["dumped"]),
            f"{i['dtype']} / {i['compute_dtype']}", str(i["steps"]),
            f"{i['optimizer_eager']} / {i['optimizer_graph']}"])
        for name, step, row in numbers_rows(i):
            num_rows.append([name, step] + stat_cells(row))
    v = infos[0]["versions"]
    text = ["# scenarios/: eager vs CUDA-graph runs, correct and buggy\n\n", ctx.banner(),
            f"Generated by `{GENERATOR}` on {v['device']} with torch {v['torch']} "
            f"(CUDA {v['torch_cuda']}), numpy {v['numpy']}, ml_dtypes {v['ml_dtypes']}, "
            f"Python {v['python']}. Do not edit by hand.\n\n",
            "Each `scenarios/<name>/` holds `eager/` (the reference), `graph/` (captured with "
            "`torch.cuda.graph` and replayed; the bug, if any, is in this run) and, for "
            "fp32_adam and bf16_adam, `baseline/` (a second eager run that is mathematically "
            "identical but processes the batch as two halves: a noise floor). "
            "`scenario.json` holds the description and every number below, per step.\n\n",
            f"Model: {MODEL_DESC}, MSE loss, batch 8. Initial weights `torch.manual_seed("
            f"{SEED_INIT}); SmallMLP()`; data from `torch.Generator().manual_seed({SEED_DATA})`: "
            "x ~ N(0,1) (n, 16), y = tanh(x @ W_t) with a random teacher W_t (16, 4). Both runs "
            "of a scenario start from the same weights and see the same batches. Graph runs: "
            f"{WARMUP} warm-up steps on a side stream, parameters restored and optimizer state "
            "zeroed in place, `zero_grad(set_to_none=True)` (except grad_accumulation), the "
            "whole step (forward, backward, `optimizer.step()`) captured, then per step "
            "`static_x.copy_(x_k)`, `static_y.copy_(y_k)`, `g.replay()` (except where the bug "
            "changes that), and the dumped tensors copied to the host before the next replay "
            "(except output_aliasing). TF32 is off.\n\n",
            "Steps are numbered from 0; `params/` are taken after the optimizer step. The "
            "expected first divergent step is the first step at which some dumped tensor of "
            "the graph run differs from eager beyond rounding (for a bug in the update, the "
            "params of that step differ while its loss does not yet).\n\n",
            md_table(desc_header, desc_rows),
            f"\nRegenerate: `python3 {GENERATOR}` on a CUDA machine (see its docstring); "
            "`--only NAME,...` reruns some scenarios and rewrites this file from every "
            "`scenario.json` present.\n",
            "\n## Measured differences (eager vs graph)\n\n",
            "max|e-g| is the largest absolute difference, relL2 = ||e-g|| / ||e||, over all "
            "elements of the group (grads and params: all parameters concatenated); "
            "frac>tol is the fraction of grad elements with |e-g| > atol + rtol*|e| at "
            "torch.testing.assert_close's default tolerance for the dumped dtype (float32: "
            "rtol 1.3e-6, atol 1e-5; bfloat16: rtol 1.6e-2, atol 1e-5). `-`: not dumped.\n\n",
            md_table(NUM_HEADER, num_rows),
            "\n## Scenarios\n\n"]
    for i in infos:
        text.append(f"### {i['name']} (bug: {i['bug']}, expected first divergent step: "
                    f"{i['expected_first_divergent_step']})\n\n{i['what']}\n\n")
        text.append(f"- eager: {i['eager_code']}\n- graph: {i['graph_code']}\n")
        if i["notes"]:
            text.append(f"- notes: {i['notes']}\n")
        if "probe" in i:
            text.append(f"- probe on this machine: {i['probe']}\n")
        text.append("\n")
    (d / "README.md").write_text("".join(text))
    print("== scenario table")
    print_table(desc_header[:8], [r[:8] for r in desc_rows])
    print("== measured differences (eager vs graph)")
    print_table(NUM_HEADER, num_rows)


# --------------------------------------------------------------------------
# curves

CURVES = {
    "fp32_long": {"dtype": torch.float32, "optim": "adam", "lr": 1e-3, "halve_at": None,
                  "expected": "none", "formats": True,
                  "what": "1000 steps, float32, eager Adam(lr=1e-3) vs graph "
                          "Adam(lr=1e-3, capturable=True); correct (rounding drift only)."},
    "bf16_long": {"dtype": torch.bfloat16, "optim": "sgd", "lr": 0.05, "halve_at": None,
                  "expected": "none", "formats": False,
                  "what": "1000 steps, pure bfloat16, SGD(lr=0.05, momentum=0.9) in both "
                          "runs; correct."},
    "frozen_scalar_long": {"dtype": torch.float32, "optim": "sgd", "lr": 0.05, "halve_at": 500,
                           "expected": "500", "formats": True,
                           "what": "1000 steps, float32, SGD(lr=0.05, momentum=0.9); both runs "
                                   "set group['lr'] = 0.025 (a Python float) from step 500; "
                                   "the graph baked lr=0.05 into the captured optimizer.step(), "
                                   "so its update differs from step 500 and its loss from "
                                   "step 501."},
    "drift_then_break_long": {"dtype": torch.float32, "optim": "adam", "lr": 5e-3, "halve_at": 500,
                              "expected": "500", "formats": True,
                              "what": "1000 steps, float32, eager Adam(lr=5e-3) vs graph "
                                      "Adam(lr=5e-3, capturable=True): the losses drift apart "
                                      "by rounding from the first steps; both runs set the lr "
                                      "to 2.5e-3 (a Python float) from step 500, which the "
                                      "graph baked at capture, so its loss breaks away at "
                                      "step 501."},
    "bf16_adam_long": {"dtype": torch.bfloat16, "optim": "adam", "lr": 1e-3, "halve_at": None,
                       "expected": "none", "formats": False,
                       "what": "1000 steps, pure bfloat16, eager Adam(lr=1e-3) vs graph "
                               "Adam(lr=1e-3, capturable=True); correct, drifting by bf16 "
                               "rounding."},
}


def curve_lr(cfg, k: int) -> float:
    if cfg["halve_at"] is not None and k >= cfg["halve_at"]:
        return cfg["lr"] / 2
    return cfg["lr"]


def curve_run(ctx: Ctx, cfg, run: str, state, data):
    xs, ys = data
    model = new_model(ctx, state, cfg["dtype"])
    graphed = run == "graph"
    if cfg["optim"] == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"], capturable=graphed and not ctx.cpu)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    losses, lrs = [], []

    def set_lr(k):
        lr = curve_lr(cfg, k)
        for g in opt.param_groups:
            g["lr"] = lr       # read by eager; a graph captured the old float
        return lr

    if not graphed:
        for k in range(CURVE_STEPS):
            lrs.append(set_lr(k))
            opt.zero_grad(set_to_none=True)
            loss = mse(ctx, model(xs[k]), ys[k])
            loss.backward()
            opt.step()
            losses.append(float(loss.float()))
        return losses, lrs
    static_x, static_y = xs[0].clone(), ys[0].clone()
    initial = [p.detach().clone() for p in model.parameters()]

    def train_step():
        loss = mse(ctx, model(static_x), static_y)
        loss.backward()
        opt.step()
        return (loss,)

    def warm_body():
        opt.zero_grad(set_to_none=True)
        train_step()

    warmup(ctx, warm_body)
    restore_in_place(model, opt, initial)
    opt.zero_grad(set_to_none=True)
    cap = Capture(ctx, model, opt)
    (static_loss,) = cap.capture(train_step)
    for k in range(CURVE_STEPS):
        lrs.append(set_lr(k))
        static_x.copy_(xs[k])
        static_y.copy_(ys[k])
        cap.replay()
        losses.append(float(static_loss.float()))   # to the host before the next replay
    ctx.sync()
    del cap
    return losses, lrs


def curve_manifest(ctx: Ctx, name: str, cfg, run: str) -> dict:
    graphed = run == "graph" and not ctx.cpu
    optim = (f"Adam(lr={cfg['lr']!r}, capturable={graphed})" if cfg["optim"] == "adam"
             else f"SGD(lr={cfg['lr']!r}, momentum=0.9)")
    labels = {
        "scenario": name,
        "bug": "captured_scalar" if cfg["halve_at"] is not None else "none",
        "expected_first_divergent_step": cfg["expected"],
        "what": cfg["what"],
        "optimizer": optim + (f"; group['lr'] = {cfg['lr'] / 2!r} from step "
                              f"{cfg['halve_at']}" if cfg["halve_at"] is not None else ""),
        "model": MODEL_DESC,
        "loss": "F.mse_loss (mean)",
        "data": (f"torch.Generator().manual_seed({SEED_CURVE}); W_t=randn(16,4)*0.5; per step "
                 "x=randn(8,16), y=tanh(x@W_t)"),
        "steps": str(CURVE_STEPS),
        "generator": GENERATOR,
        "allow_tf32": "False",
    }
    if cfg["halve_at"] is not None:
        labels["expected_first_divergent_loss_step"] = str(cfg["halve_at"] + 1)
    if ctx.cpu:
        labels["cpu_simulation"] = "true"
        labels["note"] = "--cpu logic test: NOT a fixture"
    return {"graphdiff_manifest": 1,
            "run": {"name": run, "graphed": graphed, "torch_version": torch.__version__,
                    "device": ctx.device_name, "compute_dtype": dtype_name(cfg["dtype"]),
                    "labels": labels},
            "tensors": []}


def write_tb(ctx: Ctx, tbdir: Path, losses, lrs) -> bool:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except Exception as e:  # noqa: BLE001 - tensorboard missing or broken
        ctx.note(f"tensorboard unavailable ({type(e).__name__}): curves/*/tb/ not written")
        # ~49 bytes a scalar event: what the GPU run will add
        ctx.unwritten_bytes += 49 * (len(losses) + len(losses[::TB_LR_EVERY])) + 100
        return False
    # tb/: scalars as simple_value (SummaryWriter's default, what Megatron,
    # NeMo and Lightning write); tb_tensor/: the same as one-element tensors
    # (add_scalar(new_style=True), TensorFlow 2's form)
    for d, new_style in ((tbdir, False), (tbdir.parent / "tb_tensor", True)):
        d.mkdir(parents=True)
        w = SummaryWriter(log_dir=str(d))
        for k, (loss, lr) in enumerate(zip(losses, lrs)):
            wt = TB_WALLTIME0 + k
            w.add_scalar("train/loss", loss, k, walltime=wt, new_style=new_style)
            if k % TB_LR_EVERY == 0:     # a training script logs the LR less often
                w.add_scalar("train/lr", lr, k, walltime=wt, new_style=new_style)
        w.flush()
        w.close()
        # the default file name carries the time and the host name: give it a fixed one
        files = sorted(d.glob("events.out.tfevents.*"))
        assert len(files) == 1, files
        files[0].rename(d / f"events.out.tfevents.{int(TB_WALLTIME0)}.graphdiff")
    return True


def run_curve(ctx: Ctx, name: str, state: dict) -> None:
    t0 = time.perf_counter()
    cfg = CURVES[name]
    d = ctx.out / "curves" / name
    gf.reset_dir(d)
    xs, ys = make_batches([BATCH] * CURVE_STEPS, SEED_CURVE)
    data = ([x.to(device=ctx.device, dtype=cfg["dtype"]) for x in xs],
            [y.to(device=ctx.device, dtype=cfg["dtype"]) for y in ys])
    res = {run: curve_run(ctx, cfg, run, state, data) for run in ("eager", "graph")}
    tb_written = False
    for run, (losses, lrs) in res.items():
        rd = d / run
        rd.mkdir(parents=True)
        arr = np.array(losses, dtype=np.float32)
        assert gf.save_npy(rd / "losses.npy", arr) == "<f4"
        gf.write_json(rd / "manifest.json", curve_manifest(ctx, name, cfg, run))
        if cfg["formats"]:
            with open(rd / "loss.csv", "w", newline="") as f:
                cw = csv.writer(f)
                cw.writerow(["step", "loss", "lr"])
                for k, (loss, lr) in enumerate(zip(losses, lrs)):
                    cw.writerow([k, repr(loss), repr(lr)])
            with open(rd / "loss.jsonl", "w") as f:
                for k, loss in enumerate(losses):
                    f.write(json.dumps({"step": k, "loss": loss}) + "\n")
            tb_written = write_tb(ctx, rd / "tb", losses, lrs) or tb_written
            # read back: exact values
            with open(rd / "loss.csv", newline="") as f:
                back = [float(r["loss"]) for r in csv.DictReader(f)]
            assert back == losses
            with open(rd / "loss.jsonl") as f:
                assert [json.loads(line)["loss"] for line in f] == losses
    le = np.array(res["eager"][0], np.float64)
    lg = np.array(res["graph"][0], np.float64)
    diff = np.flatnonzero(le != lg)
    first_diff = int(diff[0]) if diff.size else None
    rel = np.abs(le - lg) / np.maximum(np.abs(le), 1e-30)
    big = np.flatnonzero(rel > 1e-4)
    first_big = int(big[0]) if big.size else None
    info = {"name": name, "what": cfg["what"], "steps": CURVE_STEPS,
            "dtype": dtype_name(cfg["dtype"]), "expected_first_divergent_step": cfg["expected"],
            "expected_first_divergent_loss_step":
                None if cfg["halve_at"] is None else cfg["halve_at"] + 1,
            "formats": (["losses.npy", "loss.csv", "loss.jsonl"] + (["tb/"] if tb_written else [])
                        if cfg["formats"] else ["losses.npy"]),
            "cpu_simulation": ctx.cpu, "versions": ctx.versions,
            "measured": {"first_step_loss_differs": first_diff,
                         "first_step_loss_rel_diff_above_1e-4": first_big,
                         "max_rel_loss_diff": float(rel.max()),
                         "max_rel_loss_diff_before_500": float(rel[:500].max()),
                         "final_loss_eager": res["eager"][0][-1],
                         "final_loss_graph": res["graph"][0][-1],
                         "loss_eager_step0": res["eager"][0][0]}}
    write_json_rows(d / "curve.json", json_safe(info))
    secs = time.perf_counter() - t0
    ctx.timings.append((f"curve {name}", secs))
    print(f"  {name}: {secs:.2f} s; first step where the losses differ: {first_diff} "
          f"(by more than 1e-4 relative: {first_big}); "
          f"max relative loss difference {rel.max():.3e}; final loss eager "
          f"{res['eager'][0][-1]!r} graph {res['graph'][0][-1]!r}")
    # sanity
    if cfg["halve_at"] is not None:
        want = cfg["halve_at"] + 1
        if first_big != want:
            ctx.warn(f"curve {name}: losses first differ by more than 1e-4 relative at step "
                     f"{first_big}, expected {want}"
                     + (" (expected with --cpu)" if ctx.cpu else ""))
        elif first_diff != want:
            ctx.note(f"curve {name}: losses differ by rounding from step {first_diff}, before "
                     f"the LR change shows at step {want}")
    else:
        lim = 1e-3 if cfg["dtype"] == torch.float32 else 5e-2
        if rel.max() > lim:
            ctx.warn(f"curve {name}: correct run, relative loss difference {rel.max():.3e} "
                     f"> {lim:g}")


def write_curves_readme(ctx: Ctx) -> None:
    d = ctx.out / "curves"
    infos = load_infos(d, "curve.json")
    if not infos:
        return
    v = infos[0]["versions"]
    header = ["curve", "dtype", "steps", "expected first divergent step (computation)",
              "expected first differing loss", "measured first differing loss (bitwise)",
              "measured first loss with rel diff > 1e-4", "max rel loss diff",
              "final loss eager", "final loss graph", "files per run"]
    rows = []
    for i in infos:
        m = i["measured"]
        rows.append([i["name"], i["dtype"], i["steps"], i["expected_first_divergent_step"],
                     fmt(i["expected_first_divergent_loss_step"]),
                     fmt(m["first_step_loss_differs"]),
                     fmt(m["first_step_loss_rel_diff_above_1e-4"]), fmt(m["max_rel_loss_diff"]),
                     repr(m["final_loss_eager"]), repr(m["final_loss_graph"]),
                     ", ".join(i["formats"])])
    text = ["# curves/: long eager vs CUDA-graph runs, losses only\n\n", ctx.banner(),
            f"Generated by `{GENERATOR}` on {v['device']} with torch {v['torch']} "
            f"(CUDA {v['torch_cuda']}), numpy {v['numpy']}, Python {v['python']}. "
            "Do not edit by hand.\n\n",
            f"Model: {MODEL_DESC}, MSE loss, batch 8, {CURVE_STEPS} steps; initial weights "
            f"`torch.manual_seed({SEED_INIT}); SmallMLP()`; data from "
            f"`torch.Generator().manual_seed({SEED_CURVE})` (x ~ N(0,1), y = tanh(x @ W_t)). "
            "Graph runs: warm-up on a side stream, state restored in place, whole step "
            "captured with `torch.cuda.graph`, `g.replay()` per step; the loss is copied to "
            "the host (`float(static_loss)`) right after each replay.\n\n",
            "Each `<curve>/{eager,graph}/` holds `losses.npy` (float32, index = step; for "
            "bf16_long the bfloat16 losses widened exactly) and `manifest.json`. fp32_long and "
            "frozen_scalar_long also have the same curve as `loss.csv` (Python csv, header "
            "`step,loss,lr`, values written with repr: exact), `loss.jsonl` (one "
            "`json.dumps({\"step\": k, \"loss\": v})` per line) and `tb/` (one TensorBoard "
            "event file from `torch.utils.tensorboard.SummaryWriter`: tag `train/loss` at "
            f"every step, tag `train/lr` every {TB_LR_EVERY} steps, step = k, walltime = "
            f"{TB_WALLTIME0!r} + k (the file's first record, the file_version event, carries "
            "the real time of writing); the file was renamed to drop the host name; "
            "TensorBoard stores scalars as float32, so lr 0.05 reads back as "
            "0.05000000074505806). "
            "The lr column is the LR the training code set in `param_groups` (in the graph "
            "run of frozen_scalar_long the code halves it too; the graph just ignores it).\n\n",
            md_table(header, rows), "\n"]
    for i in infos:
        text.append(f"- **{i['name']}**: {i['what']}\n")
    text.append(f"\nRegenerate: `python3 {GENERATOR}` on a CUDA machine (see its docstring).\n")
    text.append("\nfrozen_scalar_long: the first step whose computation differs is step 500 "
                "(its optimizer update is the first to use the new LR); losses are recorded "
                "before the update, so the loss curves are bitwise equal up to step 500 and "
                "first differ at step 501.\n")
    (d / "README.md").write_text("".join(text))


# --------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent,
                    help="testdata directory to write into (default: %(default)s)")
    ap.add_argument("--only", default="",
                    help="comma-separated scenario and/or curve names (default: all); "
                         "scenarios: " + ",".join(SCENARIO_BY_NAME) +
                         "; curves: " + ",".join(CURVES))
    ap.add_argument("--cpu", action="store_true",
                    help="logic test without CUDA: graph runs executed eagerly, missing "
                         "libraries skipped; output is not a fixture")
    args = ap.parse_args(argv)

    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in SCENARIO_BY_NAME and n not in CURVES]
    if unknown:
        print(f"error: unknown names {unknown}", file=sys.stderr)
        return 2
    if not args.cpu:
        missing = []
        if ml_dtypes is None:
            missing.append("ml_dtypes")
        if not torch.cuda.is_available():
            missing.append("CUDA (torch.cuda.is_available() is False)")
        if missing:
            print("error: missing " + ", ".join(missing) + " (use --cpu for a logic test)",
                  file=sys.stderr)
            return 2

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    ctx = Ctx(out, args.cpu)
    print(f"writing into {out}; versions {json.dumps(ctx.versions)}"
          + ("; --cpu logic-test mode" if args.cpu else ""))
    t_all = time.perf_counter()
    if not args.cpu:
        torch.zeros(1, device="cuda")   # CUDA context up front: not in the first timing
    states = {m: init_state(m) for m in MODELS}
    state = states["mlp"]

    sel_sc = [s for s in SCENARIOS if not names or s.name in names]
    sel_cv = [c for c in CURVES if not names or c in names]
    if sel_sc:
        print("== scenarios/")
        for sc in sel_sc:
            run_scenario(ctx, sc, states[sc.model])
            if not ctx.cpu:
                torch.cuda.empty_cache()
        write_scenarios_readme(ctx)
    if sel_cv:
        print("== curves/")
        for name in sel_cv:
            run_curve(ctx, name, state)
        write_curves_readme(ctx)

    owned = [ctx.out / "scenarios", ctx.out / "curves"]
    size = gf.total_size([p for p in owned if p.exists()])
    print(f"total size of scenarios/ and curves/: {size} bytes")
    if ctx.unwritten_bytes:
        size += ctx.unwritten_bytes
        print(f"  + about {ctx.unwritten_bytes} bytes skipped here (bfloat16 dumps, "
              f"TensorBoard files): about {size} bytes with everything written")
    if size >= MAX_TOTAL_BYTES:
        ctx.warn(f"outputs are {size} bytes, over the {MAX_TOTAL_BYTES}-byte budget")
    print("== timings")
    for what, secs in ctx.timings:
        print(f"  {what}: {secs:.2f} s")
    print(f"  total: {time.perf_counter() - t_all:.2f} s")
    if ctx.notes:
        print(f"{len(ctx.notes)} note(s):")
        for n in ctx.notes:
            print("  - " + n)
    if ctx.warnings:
        print(f"{len(ctx.warnings)} WARNING(s):")
        for w in ctx.warnings:
            print("  - " + w)
    print("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
