"""Module taps: activations that a CUDA graph's replays refresh.

A forward hook runs when Python runs the module: in eager mode every step,
under torch.cuda.graph or make_graphed_callables once, at capture, never at
replay. So a hook that saves `out` sees the capture's values only. A tap
instead copies the output into a buffer it keeps (buf.copy_(out)): the copy
is a CUDA kernel, captured with the rest, and every replay runs it again,
so after g.replay() the buffer holds that replay's output. Eager runs use
the same taps, so the two dumps pair by name.

    taps = Taps(model)                    # before warm-up and capture
    ...
    dumper.step(step, loss=loss, model=model, taps=taps)

Which modules: those whose qualified name (model.named_modules()) matches
one of the include patterns and none of the exclude patterns (fnmatch,
case-sensitive: "blocks.*.attn.*"), leaf modules only (no children) unless
leaves=False; never the model itself.

Which tensor of an output: a tensor itself; of a tuple or list, its first
element that is a tensor; of a dict (a HuggingFace ModelOutput too), its
first value in order that is a tensor. A call whose output holds no tensor
is not tapped.

Buffers are allocated at the module's first call, with the output's shape,
dtype and device (in PyTorch's recipe, during the warm-up on the side
stream, before capture; a buffer first made during capture comes from the
graph's pool and is kept alive by the taps). A later call with another
shape, dtype or device is refused (RuntimeError): a graph would go on
writing the old buffer. Forward passes that should not be tapped (an
evaluation batch of another size) run inside `with taps.paused():`.

The order is the order in which the taps first fired. A hook fires when
its module returns, so with leaves=False a container comes after the
modules it runs. A module called more than once in a forward (a shared activation) keeps its
last call's output; its place in the order is its first call's.

grads=True also keeps the gradient flowing into each tapped output (a
tensor hook: gbuf.copy_(grad)), which a captured backward records likewise.
Outputs that do not require grad have no gradient tap.

Under torch.compile, make the buffers before compiling (one forward of the
model, e.g. in eval mode under torch.no_grad()): the buffers are then
marked as static addresses, which lets mode="reduce-overhead" keep them in
its CUDA graphs.
"""
import contextlib
import fnmatch

import torch

__all__ = ["Taps"]


def _patterns(what, value):
    if isinstance(value, str):
        return (value,)
    try:
        pats = tuple(value)
    except TypeError:
        raise TypeError("graphdiff taps: %s is a %s; give a pattern or a list of patterns"
                        % (what, type(value).__name__)) from None
    for p in pats:
        if not isinstance(p, str):
            raise TypeError("graphdiff taps: %s holds a %s; give fnmatch patterns (str)" % (what, type(p).__name__))
    return pats


def _first_tensor(out):
    """The tensor a tap keeps of a module's output (see the module doc)."""
    if torch.is_tensor(out):
        return out
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (tuple, list)):
        for v in out:
            if torch.is_tensor(v):
                return v
    return None


def _compiling():
    compiler = getattr(torch, "compiler", None)
    if compiler is not None and hasattr(compiler, "is_compiling"):
        return compiler.is_compiling()
    dyn = getattr(torch, "_dynamo", None)
    return dyn is not None and hasattr(dyn, "is_compiling") and dyn.is_compiling()


def _new_buffer(like):
    """A buffer for like's values: not an inference tensor (so that later
    copies outside inference mode may write it), marked static for
    torch.compile's CUDA graphs where that exists."""
    with contextlib.ExitStack() as stack:
        if hasattr(torch, "is_inference_mode_enabled") and torch.is_inference_mode_enabled():
            stack.enter_context(torch.inference_mode(False))
        buf = torch.empty(like.shape, dtype=like.dtype, device=like.device)
    dyn = getattr(torch, "_dynamo", None)
    if dyn is not None and hasattr(dyn, "mark_static_address") and not _compiling():
        try:
            dyn.mark_static_address(buf)
        except Exception:  # an older dynamo: the buffer is then an ordinary input
            pass
    return buf


class Taps:
    """Copies chosen modules' outputs (and, with grads=True, the gradients
    flowing into them) into buffers that CUDA-graph replays refresh.

    model: the nn.Module; include, exclude: fnmatch patterns over qualified
    module names; leaves: tap leaf modules only (the default). Raises
    ValueError when no submodule matches.

    After a forward: order (names in the order their taps first fired),
    types (name -> class name), activations() and activation_grads()
    (name -> buffer, in order). remove() takes the hooks off.
    """

    def __init__(self, model, include=("*",), exclude=(), grads=False, leaves=True):
        if not isinstance(model, torch.nn.Module):
            raise TypeError("graphdiff taps: model is a %s; give an nn.Module" % type(model).__name__)
        include, exclude = _patterns("include", include), _patterns("exclude", exclude)
        self.grads = bool(grads)
        self.order = []
        self._seen = set()
        self.types = {}
        self._bufs, self._gbufs = {}, {}
        self._paused = False
        self._handles = []
        chosen = []
        leaf_names = []
        for name, m in model.named_modules():
            if not name:  # the model itself: its output is the model's output
                continue
            is_leaf = next(iter(m.children()), None) is None
            if is_leaf:
                leaf_names.append(name)
            if leaves and not is_leaf:
                continue
            if any(fnmatch.fnmatchcase(name, p) for p in include) and not any(
                    fnmatch.fnmatchcase(name, p) for p in exclude):
                chosen.append((name, m))
        if not chosen:
            known = leaf_names if leaves else [n for n, _ in model.named_modules() if n]
            raise ValueError(
                "graphdiff taps: no %smodule of %s matches include=%r exclude=%r; its %s: %s" % (
                    "leaf " if leaves else "sub", type(model).__name__, list(include), list(exclude),
                    "leaf modules are" if leaves else "submodules are",
                    ", ".join(known[:12]) + (" ..." if len(known) > 12 else "") if known else "none (it has no submodules)"))
        for name, m in chosen:
            self.types[name] = type(m).__name__
            self._handles.append(m.register_forward_hook(self._hook(name)))
        self.names = [n for n, _ in chosen]

    def _hook(self, name):
        def hook(module, inputs, output):
            if self._paused:
                return None
            out = _first_tensor(output)
            if out is None:
                return None
            buf = self._bufs.get(name)
            if buf is None:
                buf = self._bufs[name] = _new_buffer(out)
            elif buf.shape != out.shape or buf.dtype != out.dtype or buf.device != out.device:
                raise RuntimeError(
                    "graphdiff taps: %s returned %s %s on %s, its tap holds %s %s on %s: a captured graph would "
                    "go on writing the old buffer; run such forwards inside `with taps.paused():`" % (
                        name, out.dtype, tuple(out.shape), out.device, buf.dtype, tuple(buf.shape), buf.device))
            if name not in self._seen:
                self._seen.add(name)
                self.order.append(name)
            with torch.no_grad():
                buf.copy_(out.detach())
            if self.grads and out.requires_grad:
                out.register_hook(self._grad_hook(name))
            return None
        return hook

    def _grad_hook(self, name):
        def hook(grad):
            if self._paused:
                return None
            gbuf = self._gbufs.get(name)
            if gbuf is None:
                gbuf = self._gbufs[name] = _new_buffer(grad)
            elif gbuf.shape != grad.shape or gbuf.dtype != grad.dtype or gbuf.device != grad.device:
                raise RuntimeError("graphdiff taps: the gradient of %s is %s %s, its tap holds %s %s" % (
                    name, grad.dtype, tuple(grad.shape), gbuf.dtype, tuple(gbuf.shape)))
            with torch.no_grad():
                gbuf.copy_(grad.detach())
            return None  # the gradient flows on unchanged
        return hook

    @contextlib.contextmanager
    def paused(self):
        """Forwards run inside leave the buffers as they are."""
        was, self._paused = self._paused, True
        try:
            yield self
        finally:
            self._paused = was

    def remove(self):
        """Take the hooks off the model; the buffers keep their last values."""
        for h in self._handles:
            h.remove()
        self._handles = []

    def activations(self):
        """name -> output buffer, in forward order."""
        return {n: self._bufs[n] for n in self.order}

    def activation_grads(self):
        """name -> gradient buffer, in forward order (modules whose
        gradient has been seen)."""
        return {n: self._gbufs[n] for n in self.order if n in self._gbufs}

    def manifest_entry(self):
        """The manifest's run-level "taps" entry."""
        return {"modules": [{"name": n, "type": self.types[n]} for n in self.order], "grads": self.grads}

    def __repr__(self):
        return "Taps(%d modules, %d seen, grads=%s)" % (len(self.names), len(self.order), self.grads)
