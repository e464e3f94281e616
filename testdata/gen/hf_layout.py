#!/usr/bin/python3
"""Write testdata/hf: two runs laid out as Hugging Face's Trainer saves
checkpoints, for graphdiff's reader.

Run from the repository root with Debian's PyTorch (CPU):

    apt-get install python3-torch
    /usr/bin/python3 testdata/gen/hf_layout.py

Each run is RUN/checkpoint-<step>/ for steps 2, 4 and 6 of a small MLP
trained with AdamW, holding what the Trainer writes there, each by
torch.save (or json): pytorch_model.bin (the model's state_dict),
optimizer.pt, scheduler.pt (an LR scheduler's state: no tensors),
rng_state.pth (the generators' states: Python's, numpy's and torch's),
training_args.bin (a pickled arguments object, no tensors) and
trainer_state.json. The two runs train alike; the second draws more
random numbers between checkpoints, as a graphed run's generator
advances otherwise, so only the generators' states differ.
"""
import json
import os
import random
import shutil

import numpy as np
import torch
import torch.nn as nn

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, "testdata", "hf")


class TrainingArguments:
    """Stands for transformers.TrainingArguments: an object, not tensors."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def run(name, extra_draws):
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    log = []
    for step in range(1, 7):
        g = torch.Generator().manual_seed(step)
        x, y = torch.randn(16, 4, generator=g), torch.randint(0, 2, (16,), generator=g)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if extra_draws:
            torch.rand(3)
            np.random.rand(3)
        log.append({"step": step, "loss": loss.item()})
        if step % 2:
            continue
        d = os.path.join(OUT, name, f"checkpoint-{step}")
        os.makedirs(d)
        torch.save(model.state_dict(), os.path.join(d, "pytorch_model.bin"))
        torch.save(opt.state_dict(), os.path.join(d, "optimizer.pt"))
        torch.save(sched.state_dict(), os.path.join(d, "scheduler.pt"))
        torch.save({"python": random.getstate(), "numpy": np.random.get_state(), "cpu": torch.random.get_rng_state()},
                   os.path.join(d, "rng_state.pth"))
        torch.save(TrainingArguments(output_dir="out", learning_rate=1e-2), os.path.join(d, "training_args.bin"))
        with open(os.path.join(d, "trainer_state.json"), "w") as f:
            json.dump({"global_step": step, "log_history": log}, f, indent=1)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    run("eager", False)
    run("graph", True)
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write("Made by `testdata/gen/hf_layout.py` with torch %s: two runs in Hugging Face Trainer's checkpoint "
                "layout whose numbers agree and whose generators' states do not.\n" % torch.__version__)


if __name__ == "__main__":
    main()
