"""Two small training runs dumped with graphdiff_dump, for graphdiff's tests.

    python3 python/example_runs.py OUT [--bug lr|temp] [--dtype bfloat16]

Writes OUT/eager and OUT/graph: the same model, data and optimizer, 4 steps,
run on the CPU (Debian's PyTorch has no CUDA), so the "graph" run is the
same loop and stands in for a graphed one; testdata/gen/scenarios.py makes
real CUDA-graph runs. --bug lr injects into the "graph" run a learning rate
frozen at its first value while the eager run halves it every step, which is
what a Python float baked into a captured optimizer step does. --bug temp
schedules a temperature buffer the model multiplies its hidden features
by, reassigned (model.temp = torch.tensor(t)) every step: the "graph" run's
forward keeps reading the tensor it started with, as a captured graph reads
the block of the tensor it was captured with.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graphdiff_dump import dump  # noqa: E402


class Net(torch.nn.Module):
    """Linear, ReLU, Linear, with the hidden features times a temperature
    buffer; stale keeps the first temperature tensor, as a graph would."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(8, 16), torch.nn.Linear(16, 2)
        self.register_buffer("temp", torch.ones(()))
        self.stale = None

    def forward(self, x):
        t = self.stale if self.stale is not None else self.temp
        return self.fc2(torch.relu(self.fc1(x)) * t)


def run(root, graphed, bug, dtype):
    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    model = Net().to(dev, dtype)
    if graphed and bug == "temp":
        model.stale = model.temp  # what a capture would have read
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    xs = [torch.randn(4, 8, generator=g).to(dev, dtype) for _ in range(4)]
    ys = [torch.randn(4, 2, generator=g).to(dev, dtype) for _ in range(4)]
    for step in range(4):
        lr = 0.1 / 2 ** step
        for group in opt.param_groups:
            # the injected bug: the graph run keeps the capture-time learning rate
            group["lr"] = 0.1 if (graphed and bug == "lr") else lr
        # a scheduled temperature, reassigned (eagerly fine)
        model.temp = torch.tensor(1.0 + 0.25 * step, device=dev, dtype=dtype)
        opt.zero_grad(set_to_none=True)
        out = model(xs[step])
        loss = torch.nn.functional.mse_loss(out.float(), ys[step].float())
        loss.backward()
        opt.step()
        dump(os.path.join(root, "graph" if graphed else "eager"), step, loss=loss, model=model, optimizer=opt,
             inputs={"x": xs[step]}, outputs={"out": out}, graphed=graphed,
             labels={"example": "python/example_runs.py", "bug": bug or "none"})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--bug", choices=["lr", "temp"], default=None)
    ap.add_argument("--dtype", default="float32")
    a = ap.parse_args()
    dtype = getattr(torch, a.dtype)
    for graphed in (False, True):
        run(a.out, graphed, a.bug, dtype)


if __name__ == "__main__":
    main()
