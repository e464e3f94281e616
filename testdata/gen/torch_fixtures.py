#!/usr/bin/python3
"""Write the torch.save fixtures of graphdiff's .pt reader.

Run from the repository root with Debian's PyTorch (CPU):

    apt-get install python3-torch
    /usr/bin/python3 testdata/gen/torch_fixtures.py

Written with torch 1.13 (Debian's python3-torch); the version is recorded in
testdata/pt/expected.json. Every file is written by torch.save; the bad ones
are torch.save output too (a pickle naming a function to call, the legacy
non-zip format), never hand-made bytes.

testdata/pt/ (owned: deleted and rewritten):
  tensors.pt       a dict of tensors: 0-d float32 loss, float32, float16,
                   bfloat16, int64, bool, uint8
  nested.pt        {"loss": .., "grads": {"fc1.weight": ..}, "params": {...}}
  state_dict.pt    nn.Sequential(Linear, ReLU, Linear).state_dict() (an
                   OrderedDict), in bfloat16
  views.pt         views saved with their storages: a transposed matrix
                   (Fortran strides), a slice with a storage offset, and
                   every other element (general strides)
  expected.json    per file and tensor name: dtype, shape and C-order values
testdata/bad/ (these files only):
  pt_code.pt       torch.save of an object whose pickle calls os.system
  pt_legacy.pt     torch.save(..., _use_new_zipfile_serialization=False)
"""
import json
import math
import os
import shutil

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PT = os.path.join(ROOT, "testdata", "pt")
BAD = os.path.join(ROOT, "testdata", "bad")


def values(t):
    out = []
    for v in t.detach().contiguous().reshape(-1).tolist():
        if isinstance(v, bool):
            out.append(int(v))
        elif isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            out.append("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
        else:
            out.append(v)
    return out


def describe(tensors):
    return {name: {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
                   "values": values(t.float() if t.dtype == torch.bfloat16 else t)}
            for name, t in tensors.items()}


class RunsCode:
    """Unpickling this calls os.system: a reader must refuse it."""

    def __reduce__(self):
        return (os.system, ("echo graphdiff must never run this",))


def main():
    if os.path.isdir(PT):
        shutil.rmtree(PT)
    os.makedirs(PT)
    os.makedirs(BAD, exist_ok=True)
    torch.manual_seed(0)
    expected = {"torch_version": torch.__version__, "files": {}}

    tensors = {
        "loss": torch.tensor(0.25),
        "x": torch.randn(3, 4),
        "half": torch.tensor([1.5, -0.0, 65504.0, float("inf")], dtype=torch.float16),
        "bf16": torch.tensor([[1.0, -2.5], [3.0e38, float("nan")]], dtype=torch.bfloat16),
        "steps": torch.tensor([1, -2, 2**40], dtype=torch.int64),
        "mask": torch.tensor([True, False, True]),
        "bytes": torch.tensor([0, 7, 255], dtype=torch.uint8),
    }
    torch.save(tensors, os.path.join(PT, "tensors.pt"))
    expected["files"]["tensors.pt"] = describe(tensors)

    nested = {"loss": torch.tensor(1.125),
              "grads": {"fc1.weight": torch.randn(2, 3), "fc1.bias": torch.randn(2)},
              "params": {"fc1.weight": torch.randn(2, 3), "fc1.bias": torch.randn(2)}}
    torch.save(nested, os.path.join(PT, "nested.pt"))
    expected["files"]["nested.pt"] = describe({
        "loss": nested["loss"],
        "grads/fc1.weight": nested["grads"]["fc1.weight"], "grads/fc1.bias": nested["grads"]["fc1.bias"],
        "params/fc1.weight": nested["params"]["fc1.weight"], "params/fc1.bias": nested["params"]["fc1.bias"]})

    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2)).to(torch.bfloat16)
    sd = model.state_dict()
    torch.save(sd, os.path.join(PT, "state_dict.pt"))
    expected["files"]["state_dict.pt"] = describe(dict(sd))

    base = torch.arange(24, dtype=torch.float32).reshape(4, 6) * 0.5
    flat = torch.arange(12, dtype=torch.float32) - 3
    views = {"transposed": base.t(), "offset": flat[2:8], "every_other": flat[::2]}
    assert not views["transposed"].is_contiguous() and views["offset"].storage_offset() == 2
    torch.save(views, os.path.join(PT, "views.pt"))
    expected["files"]["views.pt"] = describe(views)

    with open(os.path.join(PT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)

    torch.save({"x": torch.zeros(2), "evil": RunsCode()}, os.path.join(BAD, "pt_code.pt"))
    torch.save({"x": torch.zeros(2)}, os.path.join(BAD, "pt_legacy.pt"), _use_new_zipfile_serialization=False)
    print("wrote", PT, "with torch", torch.__version__)


if __name__ == "__main__":
    main()
