#!/usr/bin/env python3
"""Produce real tracebacks of CUDA-graph capture failures, one file per class.

Usage (from the repository root, on a machine with one NVIDIA GPU):

    python3 testdata/gen/capture_errors.py OUTDIR

For every snippet below it writes the snippet to OUTDIR/snippets/NAME.py,
runs it in its own Python subprocess (a sticky CUDA error in one must not
poison the next), and keeps what the process printed on stderr (the
traceback) as OUTDIR/NAME.txt when the snippet failed the way its class
predicts.  A snippet marked alt=True is a fallback for its class: it runs
only when no earlier snippet of that class produced a fixture.  Every
attempt, kept or not, is listed in OUTDIR/index.json with why.

OUTDIR/index.json holds the torch version, the device, CUDA's own names and
strings of the capture error codes 900-908 (asked of libcudart through
ctypes), and per fixture: the class, the command that ran, its exit status,
and the user frame the traceback must show (the snippet's file and the line
marked "# <- user frame" in the source below, with its code).

Classes that could not be produced say so in the index ("produced": false,
"why"); nothing is ever written by hand in place of a real traceback.

Without CUDA (for example /usr/bin/python3 with a CPU build of torch) the
script says so, writes an index saying no fixture was produced, and exits 1.

The graphdiff tests read the files from testdata/errors/ (see
failures/fixtures_test.go); commit OUTDIR's contents there.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

MARK = "# <- user frame"

# Snippets are small programs a user could write.  Each has the class it is
# meant to produce, the evidence (substrings of stderr) that says it did,
# and its source; the line carrying MARK is the user frame the traceback
# should end in (the mark itself is removed before the file is written).
PRELUDE = """\
import torch
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Linear(64, 64, device=dev)
x = torch.randn(8, 64, device=dev)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):          # warm up on a side stream, as the docs do
    for _ in range(3):
        model(x).sum().backward()
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
"""

SNIPPETS: list[dict] = [
    # --- host synchronisation inside capture ---------------------------------
    dict(name="host_sync_item", cls="host_sync", expect=["stream is capturing", "item"], src=PRELUDE + """
with torch.cuda.graph(g):
    y = model(x)
    loss = y.sum()
    if loss.item() > 0:  # <- user frame
        y = y * 2
"""),
    dict(name="host_sync_cpu", cls="host_sync", expect=["during CUDA graph capture", "cpu()"], src=PRELUDE + """
with torch.cuda.graph(g):
    y = model(x)
    stats = y.mean(dim=0).cpu()  # <- user frame
"""),
    dict(name="host_sync_print", cls="host_sync", expect=["stream is capturing", "print"], src=PRELUDE + """
with torch.cuda.graph(g):
    y = model(x)
    print("activations", y)  # <- user frame
"""),
    # --- an operation CUDA refuses while a stream captures (900) --------------
    dict(name="capture_unsupported_query", cls="capture_unsupported", expect=["stream is capturing"], src=PRELUDE + """
with torch.cuda.graph(g):
    y = model(x)
    done = torch.cuda.current_stream().query()  # <- user frame
"""),
    dict(name="capture_unsupported_event_sync", alt=True, cls="capture_unsupported", expect=["stream is capturing"], src=PRELUDE + """
ev = torch.cuda.Event()
with torch.cuda.graph(g):
    y = model(x)
    ev.record()
    ev.synchronize()  # <- user frame
"""),
    # --- capture invalidated by an earlier error that was swallowed (901) ----
    dict(name="capture_invalidated", cls="capture_invalidated", expect=["previous error during capture"], src=PRELUDE + """
def maybe_log(t):
    try:
        return t.item()
    except RuntimeError:
        return None   # a logging helper that hides its failure

with torch.cuda.graph(g):  # <- user frame
    y = model(x)
    maybe_log(y.sum())
"""),
    # --- forked side stream never joined back (904) ---------------------------
    dict(name="capture_unjoined", cls="capture_unjoined", expect=["unjoined"], src=PRELUDE + """
side = torch.cuda.Stream()
with torch.cuda.graph(g):  # <- user frame
    y = model(x)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        z = y * 2            # work forked onto a side stream...
    out = y + 1              # ...and the capturing stream never waits for it
"""),
    # --- a dependency on work outside the capture (905) -----------------------
    dict(name="capture_isolation_wait", cls="capture_isolation", expect=["uncaptured work"], src=PRELUDE + """
other = torch.cuda.Stream()
ready = torch.cuda.Event()
with torch.cuda.stream(other):
    w = x * 3
    ready.record()
with torch.cuda.graph(g):
    torch.cuda.current_stream().wait_event(ready)  # <- user frame
    y = model(w)
"""),
    dict(name="capture_isolation_join", alt=True, cls="capture_isolation", expect=["uncaptured work"], src=PRELUDE + """
other = torch.cuda.Stream()
with torch.cuda.graph(g):
    y = model(x)
    with torch.cuda.stream(other):
        w = x * 3            # launched on a stream that is not capturing
    torch.cuda.current_stream().wait_stream(other)  # <- user frame
"""),
    # --- the legacy default stream touched during capture (906) ---------------
    dict(name="capture_implicit_default_stream", cls="capture_implicit", expect=["legacy stream"], src=PRELUDE + """
import ctypes, ctypes.util, glob, os
def cudart():
    base = os.path.dirname(torch.__file__)
    cands = glob.glob(os.path.join(base, "..", "nvidia", "**", "libcudart.so*"), recursive=True)
    cands += [ctypes.util.find_library("cudart") or "libcudart.so"]
    for c in cands:
        try:
            return ctypes.CDLL(c)
        except OSError:
            pass
    raise OSError("no libcudart")
rt = cudart()
handle = ctypes.c_void_p()
assert rt.cudaStreamCreate(ctypes.byref(handle)) == 0   # a blocking stream, as cudaStreamCreate makes
blocking = torch.cuda.ExternalStream(handle.value)
blocking.wait_stream(torch.cuda.current_stream())
with torch.cuda.graph(g, stream=blocking):
    y = model(x)
    with torch.cuda.stream(torch.cuda.default_stream()):
        z = x * 2  # <- user frame
"""),
    dict(name="capture_implicit_torch_stream", alt=True, cls="capture_implicit", expect=["legacy stream"], src=PRELUDE + """
with torch.cuda.graph(g):
    y = model(x)
    with torch.cuda.stream(torch.cuda.default_stream()):
        z = x * 2  # <- user frame
"""),
    # --- a generator the graph does not know about ----------------------------
    dict(name="generator_unregistered", cls="generator_unregistered", expect=["not in capture mode"], src=PRELUDE + """
gen = torch.Generator(device="cuda")
gen.manual_seed(1234)
with torch.cuda.graph(g):
    y = model(x)
    noise = torch.rand(y.shape, device=dev, generator=gen)  # <- user frame
    y = y + noise
"""),
    # --- RNG state read or set during capture ---------------------------------
    dict(name="rng_state_get", cls="rng_state_in_capture", expect=["capture"], src=PRELUDE + """
with torch.cuda.graph(g):
    state = torch.cuda.get_rng_state()  # <- user frame
    y = torch.nn.functional.dropout(model(x), 0.1)
"""),
    dict(name="rng_state_set", alt=True, cls="rng_state_in_capture", expect=["capture"], src=PRELUDE + """
saved = torch.cuda.get_rng_state()
with torch.cuda.graph(g):
    y = torch.nn.functional.dropout(model(x), 0.1)
    torch.cuda.set_rng_state(saved)  # <- user frame
"""),
    # --- activation checkpointing that saves and restores RNG state ----------
    dict(name="checkpoint_preserve_rng", cls="checkpoint_rng", expect=["checkpoint"], src=PRELUDE + """
from torch.utils.checkpoint import checkpoint
def block(t):
    return torch.nn.functional.dropout(model(t), 0.1)
xin = x.clone().requires_grad_()
with torch.cuda.graph(g):
    y = checkpoint(block, xin, use_reentrant=False)  # <- user frame
    y.sum().backward()
"""),
    dict(name="checkpoint_reentrant_rng", alt=True, cls="checkpoint_rng", expect=["checkpoint"], src=PRELUDE + """
from torch.utils.checkpoint import checkpoint
def block(t):
    return torch.nn.functional.dropout(model(t), 0.1)
xin = x.clone().requires_grad_()
with torch.cuda.graph(g):
    y = checkpoint(block, xin, use_reentrant=True)  # <- user frame
    y.sum().backward()
"""),
    # --- pinned memory and background threads during capture -----------------
    dict(name="background_thread", cls="background_thread", expect=["Exception in thread"], src=PRELUDE + """
import threading, time
stop = threading.Event()
def prefetch():
    while not stop.is_set():
        batch = torch.randn(256, 256).pin_memory()  # <- user frame
        batch = batch.to(dev, non_blocking=True)
t = threading.Thread(target=prefetch, daemon=True)
t.start()
time.sleep(0.5)
try:
    with torch.cuda.graph(g):
        y = model(x)
        time.sleep(1.0)          # the capture stays open while the thread works
finally:
    stop.set()
    t.join()
"""),
    # The pin-memory thread's CUDA call invalidates the capture (global
    # capture mode). Whether the thread's own exception reaches stderr
    # before the process exits varies from run to run: only a traceback
    # that shows it (_pin_memory_loop) is kept, and the user frame is the
    # capture the thread broke; without it, all a traceback shows is the
    # invalidation (capture_invalidated's fixture).
    dict(name="pinned_memory_loader", cls="background_thread", expect=["_pin_memory_loop"], src=PRELUDE + """
import time
from torch.utils.data import DataLoader, TensorDataset
data = TensorDataset(torch.randn(4096, 64), torch.randn(4096, 64))
loader = DataLoader(data, batch_size=8, num_workers=2, pin_memory=True, prefetch_factor=8)
it = iter(loader)
static_x, static_y = next(it)
static_x, static_y = static_x.to(dev), static_y.to(dev)
with torch.cuda.graph(g):  # <- user frame
    loss = torch.nn.functional.mse_loss(model(static_x), static_y)
    loss.backward()
    time.sleep(1.0)
for bx, by in it:
    static_x.copy_(bx, non_blocking=True)
    static_y.copy_(by, non_blocking=True)
    g.replay()
"""),
    # --- DDP built on the default stream, captured -------------------------------
    # What the traceback can show: the capture invalidated in the backward
    # (DDP's reducer hooks are C++, no Python frame of DDP's), in a process
    # with an NCCL process group, which names itself on the way out.
    dict(name="ddp_default_stream", cls="ddp_capture", expect=["ProcessGroupNCCL", "cudaErrorStreamCaptureInvalidated"], src="""\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29517")
dist.init_process_group("nccl", rank=0, world_size=1)
torch.manual_seed(0)
dev = torch.device("cuda")
model = DDP(torch.nn.Linear(64, 64, device=dev))   # built on the default stream
x = torch.randn(8, 64, device=dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(2):                               # fewer than the 11 DDP warmups
        opt.zero_grad(set_to_none=True)
        model(x).sum().backward()
        opt.step()
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
opt.zero_grad(set_to_none=True)
with torch.cuda.graph(g):
    loss = model(x).sum()  # <- user frame
    loss.backward()  # <- user frame
g.replay()
torch.cuda.synchronize()
dist.destroy_process_group()
"""),
    # --- errors that are not capture failures ---------------------------------
    dict(name="not_capture_shape_mismatch", cls="", expect=["cannot be multiplied"], src="""\
import torch
model = torch.nn.Linear(64, 32, device="cuda")
x = torch.randn(8, 48, device="cuda")
y = model(x)  # <- user frame
"""),
    dict(name="not_capture_out_of_memory", cls="", expect=["out of memory"], src="""\
import torch
free, total = torch.cuda.mem_get_info()
big = torch.empty(int(total * 2), dtype=torch.uint8, device="cuda")  # <- user frame
"""),
    dict(name="not_capture_device_mismatch", cls="", expect=["same device"], src="""\
import torch
model = torch.nn.Linear(64, 32, device="cuda")
x = torch.randn(8, 64)
y = model(x)  # <- user frame
"""),
]


def cuda_error_table() -> dict:
    """Ask libcudart for the name and string of the stream-capture error codes."""
    import ctypes
    import ctypes.util
    import glob

    import torch

    base = os.path.dirname(torch.__file__)
    cands = sorted(glob.glob(os.path.join(base, "..", "nvidia", "**", "libcudart.so*"), recursive=True))
    cands += sorted(glob.glob(os.path.join(base, "lib", "libcudart*.so*")))
    found = ctypes.util.find_library("cudart")
    if found:
        cands.append(found)
    for c in cands:
        try:
            rt = ctypes.CDLL(c)
        except OSError:
            continue
        rt.cudaGetErrorName.restype = ctypes.c_char_p
        rt.cudaGetErrorString.restype = ctypes.c_char_p
        table = {}
        for code in range(900, 909):
            table[str(code)] = {
                "name": rt.cudaGetErrorName(code).decode(),
                "string": rt.cudaGetErrorString(code).decode(),
            }
        return {"library": os.path.basename(c), "codes": table}
    return {"library": None, "codes": {}, "why": "no libcudart found next to torch or on the loader path"}


def write_snippet(dirpath: Path, snip: dict) -> tuple[Path, list[tuple[int, str]]]:
    """Write the snippet without its marks; return its path and the marked
    lines with their code. A snippet whose failure can surface at more than
    one line from run to run (DDP's forward or its backward) marks each."""
    src = textwrap.dedent(snip["src"]).lstrip("\n")
    lines = src.splitlines()
    marked = [i for i, l in enumerate(lines) if MARK in l]
    assert marked, snip["name"]
    for i in marked:
        lines[i] = lines[i].replace(MARK, "").rstrip()
    path = dirpath / (snip["name"] + ".py")
    path.write_text("\n".join(lines) + "\n")
    return path, [(i + 1, lines[i].strip()) for i in marked]


def expected_frame(path: Path, marks: list[tuple[int, str]], err: str) -> dict:
    """The user frame the traceback must end in: of the marked lines, the one
    whose frame comes first in stderr (the first exception's, the cause),
    else the first marked line."""
    at = [(err.find(f'File "{path}", line {n},'), n, code) for n, code in marks]
    shown = sorted(a for a in at if a[0] >= 0)
    _, line, code = shown[0] if shown else at[0]
    return {"file": str(path), "line": line, "code": code}


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    snipdir = out / "snippets"
    snipdir.mkdir(exist_ok=True)

    import torch

    index: dict = {
        "generator": "testdata/gen/capture_errors.py",
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "cuda_available": torch.cuda.is_available(),
        "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "fixtures": [],
    }
    print(f"python {index['python']} torch {index['torch']} cuda {index['torch_cuda']} device {index['device']}")
    if not torch.cuda.is_available():
        index["why"] = "torch.cuda.is_available() is False: no CUDA device or a CPU build of torch; no traceback produced"
        print("NO CUDA: " + index["why"])
        (out / "index.json").write_text(json.dumps(index, indent=2) + "\n")
        return 1
    index["cuda_errors"] = cuda_error_table()
    for code, e in index["cuda_errors"]["codes"].items():
        print(f"cuda error {code}: {e['name']}: {e['string']}")

    kept: set[str] = set()
    for snip in SNIPPETS:
        cls = snip["cls"]
        path, marks = write_snippet(snipdir, snip)
        entry = {"name": snip["name"], "class": cls or None, "file": snip["name"] + ".txt",
                 "command": f"{Path(sys.executable).name} {path}",
                 "user_frame": expected_frame(path, marks, "")}
        if snip.get("alt") and cls in kept:
            entry.update(produced=False, why=f"an alternative candidate; class {cls} already has a fixture; not run")
            index["fixtures"].append(entry)
            print(f"-- {snip['name']}: skipped ({entry['why']})")
            continue
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        try:
            p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=90,
                               env=env, cwd=str(snipdir))
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            rc = None
            err = (e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or ""))
        entry["exit_status"] = rc
        entry["user_frame"] = expected_frame(path, marks, err)
        missing = [ev for ev in snip["expect"] if ev not in err]
        if rc is None:
            entry.update(produced=False, why="timed out after 90 s" + (f"; stderr so far ends: {err[-300:]!r}" if err else ""))
        elif rc == 0 and not err.strip():
            entry.update(produced=False, why="the snippet ran without an error")
        elif missing:
            entry.update(produced=False, why=f"failed, but without the expected evidence {missing}; stderr ends: {err[-400:]!r}")
        else:
            (out / entry["file"]).write_text(err)
            entry["produced"] = True
            if cls:
                kept.add(cls)
        index["fixtures"].append(entry)
        state = "kept" if entry["produced"] else "NOT kept: " + entry["why"]
        print(f"-- {snip['name']} ({cls or 'not a capture failure'}): exit {rc}, {state}")
        tail = err.strip().splitlines()[-6:]
        for l in tail:
            print("   | " + l)

    classes = {s["cls"] for s in SNIPPETS if s["cls"]}
    index["classes_without_fixture"] = sorted(classes - kept)
    print("classes with a fixture: " + ", ".join(sorted(kept)))
    print("classes without: " + (", ".join(index["classes_without_fixture"]) or "none"))
    (out / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
