"""Dump tensors of a PyTorch training run in the layout graphdiff reads.

    from graphdiff_dump import Dumper

    dumper = Dumper("runs/graph", graphed=True)
    for step, (x, y) in enumerate(batches):
        ...                                   # the eager step, or g.replay()
        dumper.step(step, loss=loss, model=model, optimizer=opt,
                    inputs=x, outputs=out)

Install: put a graphdiff clone's python/ directory on PYTHONPATH, as
python/README.md shows (numpy and torch; ml_dtypes and safetensors are used
when present).

Each step writes RUN/step_NNNNNN/ (RUN/rank_R/step_NNNNNN/ with a rank):
loss, grads/<param>, params/<param> (parameters and floating-point buffers,
as a state_dict holds them), optimizer/<param>/<state> (the optimizer's
per-parameter state: exp_avg, momentum_buffer, ...), inputs/<name>,
outputs/<name> and extra/<name>, one .npy file per tensor, or one
.safetensors file per step and kind with format="safetensors" (the loss
stays loss.npy, so that both formats name it "loss"); and updates
RUN/manifest.json (graphdiff's manifest format, version 1).

What it takes:
- loss: a Python number, a 0-d tensor, or any tensor (`loss.item()` works);
- inputs, outputs, extra: a tensor (named "x", "out", "extra"), a dict of
  name -> tensor or number, or a list/tuple (named "0", "1", ...);
- model: an nn.Module; optimizer: a torch.optim.Optimizer.
Anything else is refused with a TypeError that says what was given.

- Values are copied to the host before step() returns, so the next
  g.replay() cannot overwrite what was dumped: call it after each replay,
  outside the captured region (it refuses to run during capture).
- A run directory that already holds a dump is refused (existing="refuse",
  the default) unless existing="clear" (remove the earlier step_* and
  rank_* directories and the manifest first) or existing="append" (add to
  it, e.g. a resumed run).
- Files are readable by others (0644), written to a temporary name and
  renamed, so a reader never sees half a file.
- bfloat16 and float8 stay exact: with ml_dtypes installed they are saved
  as ml_dtypes arrays (numpy descr '<V2', '<V1'); without it, as their raw
  bits with the dtype recorded in the manifest. safetensors holds them
  natively.

Taps(model) (graphdiff_dump.taps) copies each leaf module's output into a
buffer by a copy that a CUDA graph captures, so replays refresh it;
step(..., taps=taps) writes them as activations/<module> (and
activation_grads/<module> with grads=True) and records the modules in
forward order as the manifest's run "taps" entry.

nudge(model) moves every floating-point parameter by one unit in the last
place: an eager run started from the nudged model differs from the
reference at the rounding level only, the baseline `graphdiff compare
--baseline` takes to measure a run's own noise.

dump(run_dir, step, ...) is the one-call form: it keeps one Dumper per run
directory in this process.
"""
import json
import os
import re
import shutil
import struct
import tempfile

import numpy as np
import torch

try:
    import ml_dtypes
except ImportError:  # raw bits plus the manifest keep the values exact
    ml_dtypes = None

try:
    import safetensors.torch as _st
except ImportError:  # the format is written here then
    _st = None

from .taps import Taps

__all__ = ["Dumper", "Taps", "dump", "nudge"]

_RAW = {  # dtype -> (numpy view dtype for the raw bits, ml_dtypes name)
    torch.bfloat16: (np.uint16, "bfloat16"),
}
for _name in ("float8_e4m3fn", "float8_e5m2"):
    if hasattr(torch, _name):
        _RAW[getattr(torch, _name)] = (np.uint8, _name)

_EXISTING = ("refuse", "clear", "append")
_FORMATS = ("npy", "safetensors")


def _host(t):
    """A host copy of a tensor, detached: made before the next replay."""
    t = t.detach()
    if t.is_cuda:
        return t.to("cpu", copy=True)  # synchronous
    return t.clone()


def _to_numpy(t):
    """A numpy array of a host tensor and, when the array holds raw bits,
    the dtype name to record in the manifest."""
    if t.dtype in _RAW:
        bits, name = _RAW[t.dtype]
        raw = t.contiguous().view(torch.int16 if bits == np.uint16 else torch.uint8).numpy().view(bits)
        if ml_dtypes is not None:
            return raw.view(getattr(ml_dtypes, name)), None
        return raw, name
    return t.contiguous().numpy(), None


def _as_tensor(what, name, v):
    """A tensor of v: a tensor as it is, a Python number as a 0-d tensor."""
    if torch.is_tensor(v):
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("graphdiff dump: %s %r is a %s; give a tensor or a number" % (what, name, type(v).__name__))
    return torch.tensor(v, dtype=torch.float64 if isinstance(v, float) else torch.int64)


def _named(what, value, default):
    """name -> tensor from a tensor, a number, a dict or a list/tuple."""
    if value is None:
        return {}
    if torch.is_tensor(value) or isinstance(value, (int, float)) and not isinstance(value, bool):
        return {default: _as_tensor(what, default, value)}
    if isinstance(value, dict):
        return {str(k): _as_tensor(what, k, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return {str(i): _as_tensor(what, i, v) for i, v in enumerate(value)}
    raise TypeError("graphdiff dump: %s is a %s; give a tensor, a dict of name -> tensor, or a list of tensors"
                    % (what, type(value).__name__))


def _write_atomic(path, write, mode="wb"):
    """Write a file through a temporary name, readable by others."""
    d = os.path.dirname(path)
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
    try:
        with os.fdopen(fd, mode) as f:
            write(f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


_ST_DTYPES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
              torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8",
              torch.bool: "BOOL"}
for _name, _code in (("float8_e4m3fn", "F8_E4M3"), ("float8_e5m2", "F8_E5M2")):
    if hasattr(torch, _name):
        _ST_DTYPES[getattr(torch, _name)] = _code


def _write_safetensors(path, tensors):
    """Write tensors (name -> host tensor) as one .safetensors file: with the
    safetensors package when installed, else in its documented format (an
    8-byte little-endian header size, a JSON header of dtype, shape and
    data offsets, then the tensors' bytes in C order)."""
    if _st is not None:
        _write_atomic(path, lambda f: f.write(_st.save({k: v.contiguous() for k, v in tensors.items()})))
        return
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        if t.dtype not in _ST_DTYPES:
            raise TypeError("graphdiff dump: %s has dtype %s, which safetensors cannot hold" % (name, t.dtype))
        if t.dtype == torch.bool:
            t = t.to(torch.uint8)
        data = t.reshape(-1).view(torch.uint8).numpy().tobytes()
        header[name] = {"dtype": _ST_DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)

    def write(f):
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for b in blobs:
            f.write(b)
    _write_atomic(path, write)


_EARLIER = re.compile(r"^(step_\d+|rank_\d+)$")


class Dumper:
    """Dumps the steps of one run into run_dir.

    graphed, compute_dtype ("bfloat16" under autocast) and labels (a dict of
    strings) describe the run in the manifest. existing says what to do with
    a run_dir that holds an earlier dump: "refuse" (the default: raise
    FileExistsError naming it), "clear" (remove its step_*/rank_*
    directories and manifest.json, nothing else) or "append". format is
    "npy" (one file per tensor) or "safetensors" (one file per step and
    kind). rank, for a run of several processes, writes under
    run_dir/rank_<rank>/ (graphdiff pairs rank 3 with rank 3).
    """

    def __init__(self, run_dir, graphed=None, compute_dtype=None, labels=None, existing="refuse", format="npy",
                 rank=None):
        if existing not in _EXISTING:
            raise ValueError("graphdiff dump: existing=%r; want one of %s" % (existing, ", ".join(_EXISTING)))
        if format not in _FORMATS:
            raise ValueError("graphdiff dump: format=%r; want one of %s" % (format, ", ".join(_FORMATS)))
        if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int) or rank < 0):
            raise ValueError("graphdiff dump: rank=%r; want a non-negative int" % (rank,))
        self.run_dir = str(run_dir)
        self.root = os.path.join(self.run_dir, "rank_%d" % rank) if rank is not None else self.run_dir
        self.format = format
        self._check_existing(existing)
        self._manifest_path = os.path.join(self.run_dir, "manifest.json")
        m = self._read_manifest()
        run = m.setdefault("run", {})
        run.setdefault("torch_version", torch.__version__)
        if torch.cuda.is_available():
            run.setdefault("device", torch.cuda.get_device_name())
        if graphed is not None:
            run["graphed"] = bool(graphed)
        if compute_dtype is not None:
            run["compute_dtype"] = str(compute_dtype).replace("torch.", "")
        if labels:
            run.setdefault("labels", {}).update({str(k): str(v) for k, v in labels.items()})
        self._write_manifest(m)

    def _check_existing(self, existing):
        if not os.path.isdir(self.root):
            return
        earlier = sorted(e for e in os.listdir(self.root) if _EARLIER.match(e))
        if self.root == self.run_dir and os.path.exists(os.path.join(self.run_dir, "manifest.json")):
            earlier.append("manifest.json")
        if not earlier or existing == "append":
            return
        if existing == "refuse":
            raise FileExistsError(
                "graphdiff dump: %s holds an earlier dump (%d entries: %s): pass existing='clear' to remove it "
                "first, or existing='append' to add to it" % (self.root, len(earlier), ", ".join(earlier[:3])))
        for e in earlier:
            p = os.path.join(self.root, e)
            if os.path.isdir(p):
                shutil.rmtree(p)
            else:
                os.unlink(p)

    def _check_taps(self, taps):
        """Refuse taps that have seen no forward, or whose forward order
        differs from the one this run's manifest already holds; record it
        when it is new."""
        if not isinstance(taps, Taps):
            raise TypeError("graphdiff dump: taps is a %s; give a graphdiff_dump.Taps" % type(taps).__name__)
        if not taps.order:
            raise ValueError("graphdiff dump: the taps have seen no forward yet (%d modules hooked): dump after the "
                             "model has run (in a graphed run, after capture and g.replay())" % len(taps.names))
        entry = taps.manifest_entry()
        m = self._read_manifest()
        known = m["run"].get("taps")
        if known == entry:
            return
        if known is not None:
            was = [e["name"] for e in known.get("modules", [])]
            now = [e["name"] for e in entry["modules"]]
            first = next((i for i, (a, b) in enumerate(zip(was, now)) if a != b), min(len(was), len(now)))
            raise ValueError(
                "graphdiff dump: the tapped modules' forward order differs from the one %s records (grads %s, "
                "%d modules) at position %d: %s there, %s now; dump one forward order per run (a module that runs "
                "only from some step on belongs in exclude=)" % (
                    self._manifest_path, known.get("grads"), len(was), first,
                    was[first] if first < len(was) else "nothing", now[first] if first < len(now) else "nothing")
                + ("" if known.get("grads") == entry["grads"] else "; grads=%s there, %s now" % (known.get("grads"), entry["grads"])))
        m["run"]["taps"] = entry
        self._write_manifest(m)

    def _read_manifest(self):
        if os.path.exists(self._manifest_path):
            with open(self._manifest_path) as f:
                return json.load(f)
        return {"graphdiff_manifest": 1, "run": {}, "tensors": []}

    def _write_manifest(self, m):
        _write_atomic(self._manifest_path, lambda f: json.dump(m, f, indent=1), mode="w")

    def step(self, step, loss=None, model=None, optimizer=None, inputs=None, outputs=None, extra=None, taps=None):
        """Write one training step's tensors under step_NNNNNN; with taps
        (a Taps), its buffers as activations/<module> and
        activation_grads/<module>, and its modules in forward order as the
        manifest's run "taps" entry."""
        if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
            raise RuntimeError("graphdiff dump: call it after g.replay(), not inside the captured region")
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise TypeError("graphdiff dump: step %r; want a non-negative int" % (step,))
        if model is not None and not isinstance(model, torch.nn.Module):
            raise TypeError("graphdiff dump: model is a %s; give an nn.Module" % type(model).__name__)
        if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError("graphdiff dump: optimizer is a %s; give a torch.optim.Optimizer" % type(optimizer).__name__)
        if taps is not None:
            self._check_taps(taps)
        kinds = {}  # kind -> name -> host tensor ("" kind: the loss)
        if loss is not None:
            kinds[""] = {"loss": _host(_as_tensor("loss", "loss", loss))}
        names = {}
        if model is not None:
            params, grads = {}, {}
            for name, p in model.named_parameters():
                names[p] = name
                params[name] = _host(p)
                if p.grad is not None:
                    grads[name] = _host(p.grad)
            for name, b in model.named_buffers():
                if b.is_floating_point():
                    params[name] = _host(b)
            kinds["params"], kinds["grads"] = params, grads
        if optimizer is not None:
            state = {}
            for p, s in optimizer.state.items():
                pname = names.get(p, "param_%d" % id(p))
                for key, value in s.items():
                    if torch.is_tensor(value):
                        state["%s/%s" % (pname, key)] = _host(value)
            kinds["optimizer"] = state
        for kind, value, default in (("inputs", inputs, "x"), ("outputs", outputs, "out"), ("extra", extra, "extra")):
            named = _named(kind, value, default)
            if named:
                kinds[kind] = {k: _host(v) for k, v in named.items()}
        if taps is not None:
            kinds["activations"] = {k: _host(v) for k, v in taps.activations().items()}
            kinds["activation_grads"] = {k: _host(v) for k, v in taps.activation_grads().items()}
        step_dir = os.path.join(self.root, "step_%06d" % step)
        raw = {}
        for kind, tensors in kinds.items():
            if not tensors:
                continue
            if self.format == "safetensors" and kind:  # the loss stays loss.npy: named "loss" either way
                _write_safetensors(os.path.join(step_dir, kind + ".safetensors"), tensors)
                continue
            for name, t in tensors.items():
                array, raw_dtype = _to_numpy(t)
                path = os.path.join(step_dir, kind, name + ".npy") if kind else os.path.join(step_dir, name + ".npy")
                _write_atomic(path, lambda f, a=array: np.save(f, a, allow_pickle=False))
                if raw_dtype is not None:
                    raw[os.path.relpath(path, self.run_dir).replace(os.sep, "/")] = raw_dtype
        if raw:
            m = self._read_manifest()
            entries = {e["path"]: e for e in m.setdefault("tensors", [])}
            for rel, dtype in raw.items():
                entries[rel] = {"path": rel, "dtype": dtype}
            m["tensors"] = [entries[k] for k in sorted(entries)]
            self._write_manifest(m)


_dumpers = {}


def dump(run_dir, step, loss=None, model=None, optimizer=None, inputs=None, outputs=None, extra=None,
         graphed=None, compute_dtype=None, labels=None, existing="refuse", format="npy", rank=None, taps=None):
    """Write one training step's tensors under run_dir/step_NNNNNN: the
    one-call form of Dumper(run_dir, ...).step(step, ...), keeping one
    Dumper per run directory (and rank) in this process, so that an
    earlier dump is checked for on the first call only."""
    key = (os.path.abspath(str(run_dir)), rank)
    d = _dumpers.get(key)
    if d is None:
        d = Dumper(run_dir, graphed=graphed, compute_dtype=compute_dtype, labels=labels, existing=existing,
                   format=format, rank=rank)
        _dumpers[key] = d
    d.step(step, loss=loss, model=model, optimizer=optimizer, inputs=inputs, outputs=outputs, extra=extra, taps=taps)


@torch.no_grad()
def nudge(model):
    """Move every floating-point parameter of model by one unit in the last
    place, in place, away from zero: an eager run from the nudged model is a
    rounding-level baseline for `graphdiff compare --baseline`."""
    for p in model.parameters():
        if not p.is_floating_point():
            continue
        if p.dtype in (torch.float32, torch.float64):
            p.copy_(torch.nextafter(p, torch.where(p < 0, torch.full_like(p, -float("inf")), torch.full_like(p, float("inf")))))
        elif p.dtype in (torch.bfloat16, torch.float16):
            # one step of the magnitude's bits; zeros, infinities and NaN stay
            exp = 0x7F80 if p.dtype == torch.bfloat16 else 0x7C00
            bits = p.view(torch.int16)
            move = ((bits & 0x7FFF) != 0) & ((bits & exp) != exp)
            bits.add_(move.to(torch.int16))
        else:
            raise TypeError("graphdiff dump: nudge does not know %s" % p.dtype)
