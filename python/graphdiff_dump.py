"""Dump tensors of a PyTorch training run in the layout graphdiff reads.

    from graphdiff_dump import dump

    for step, (x, y) in enumerate(batches):
        ...                                   # eager step, or g.replay()
        dump("runs/graph", step, loss=loss, model=model, optimizer=opt,
             inputs={"x": x}, outputs={"out": out}, graphed=True)

One file, numpy and torch only. Each call writes RUN/step_NNNNNN/ with
loss.npy, grads/<param>.npy, params/<param>.npy, optimizer/<param>/<state>.npy,
inputs/<name>.npy, outputs/<name>.npy and extra/<name>.npy, and updates
RUN/manifest.json (graphdiff's manifest format, version 1).

- Values are copied to the host before dump returns, so the next
  g.replay() cannot overwrite what was dumped: call it after each replay,
  outside the captured region (it refuses to run during capture).
- bfloat16 and float8 stay exact: with ml_dtypes installed they are saved
  as ml_dtypes arrays (numpy descr '<V2', '<V1', '<f1'); without it, as their
  raw bits (uint16, uint8) with the dtype recorded in the manifest.
  float16 is numpy's own.
- Files are written to a temporary name and renamed, so a reader never
  sees half a file.
"""
import json
import os
import tempfile

import numpy as np
import torch

try:
    import ml_dtypes
except ImportError:  # raw bits plus the manifest keep the values exact
    ml_dtypes = None

__all__ = ["dump"]

_RAW = {  # dtype -> (numpy view dtype for the raw bits, ml_dtypes name)
    torch.bfloat16: (np.uint16, "bfloat16"),
}
for _name in ("float8_e4m3fn", "float8_e5m2"):
    if hasattr(torch, _name):
        _RAW[getattr(torch, _name)] = (np.uint8, _name)


def _to_numpy(t):
    """Copy a tensor to host memory and return a numpy array and, when the
    array holds raw bits, the dtype name to record in the manifest."""
    t = t.detach()
    if t.is_cuda:
        t = t.to("cpu", copy=True)  # synchronous: done before the next replay
    else:
        t = t.clone()
    if t.dtype in _RAW:
        bits, name = _RAW[t.dtype]
        raw = t.contiguous().view(torch.int16 if bits == np.uint16 else torch.uint8).numpy().view(bits)
        if ml_dtypes is not None:
            return raw.view(getattr(ml_dtypes, name)), None
        return raw, name
    return t.contiguous().numpy(), None


def _save(path, array):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".npy")
    with os.fdopen(fd, "wb") as f:
        np.save(f, array)
    os.replace(tmp, path)


def _read_manifest(path):
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return {"graphdiff_manifest": 1, "run": {}, "tensors": []}


def _write_json(path, obj):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, path)


def dump(run_dir, step, loss=None, model=None, optimizer=None, inputs=None, outputs=None,
         extra=None, graphed=None, compute_dtype=None, labels=None):
    """Write one training step's tensors under run_dir/step_NNNNNN.

    loss: a tensor (saved as loss.npy). model: its parameters and their
    .grad are saved under params/ and grads/ by their names, its
    floating-point buffers under params/ too. optimizer: its
    per-parameter state tensors (Adam's exp_avg, ...) under
    optimizer/<param>/. inputs, outputs, extra: dicts of name -> tensor.
    graphed, compute_dtype ("bfloat16" under autocast) and labels (a dict
    of strings) describe the run in the manifest.
    """
    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
        raise RuntimeError("graphdiff dump: call it after g.replay(), not inside the captured region")
    step_dir = os.path.join(run_dir, "step_%06d" % int(step))
    files = {}
    if loss is not None:
        files["loss"] = loss
    names = {}
    if model is not None:
        for name, p in model.named_parameters():
            names[p] = name
            files["params/" + name] = p
            if p.grad is not None:
                files["grads/" + name] = p.grad
        # floating-point buffers (BatchNorm's statistics, a scheduled
        # temperature) beside the parameters, as a state_dict holds them:
        # a buffer set every step that the graph does not follow shows a
        # tensor reassigned after capture
        for name, b in model.named_buffers():
            if b.is_floating_point():
                files["params/" + name] = b
    if optimizer is not None:
        for p, state in optimizer.state.items():
            pname = names.get(p, "param_%d" % id(p))
            for key, value in state.items():
                if torch.is_tensor(value):
                    files["optimizer/%s/%s" % (pname, key)] = value
    for group, tensors in (("inputs", inputs), ("outputs", outputs), ("extra", extra)):
        for name, t in (tensors or {}).items():
            files["%s/%s" % (group, name)] = t
    raw = {}
    for name, t in files.items():
        array, raw_dtype = _to_numpy(t)
        rel = os.path.join("step_%06d" % int(step), name + ".npy").replace(os.sep, "/")
        _save(os.path.join(run_dir, rel), array)
        if raw_dtype is not None:
            raw[rel] = raw_dtype
    manifest_path = os.path.join(run_dir, "manifest.json")
    m = _read_manifest(manifest_path)
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
    entries = {e["path"]: e for e in m.setdefault("tensors", [])}
    for rel, dtype in raw.items():
        entries[rel] = {"path": rel, "dtype": dtype}
    m["tensors"] = [entries[k] for k in sorted(entries)]
    _write_json(manifest_path, m)
