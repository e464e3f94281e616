#!/usr/bin/python3
"""Write the torch.save fixture of optimizer states, whose param groups
say how each state tensor carries the gradient (loaders.Moment).

Run from the repository root with Debian's PyTorch (CPU):

    apt-get install python3-torch
    /usr/bin/python3 testdata/gen/optim_fixtures.py

testdata/pt_optim/ (owned: deleted and rewritten):
  optimizers.pt   {"model": a state_dict, "optimizers": {name: the
                  optimizer's state_dict() after two steps}} for
                  Adam with two param groups of different betas, AdamW,
                  SGD with momentum and dampening, SGD without momentum
                  (no buffer), RMSprop with momentum (its momentum_buffer
                  is a step, not a gradient)
  expected.json   the rule of every state tensor that has one, by name:
                  [Decay, Gain] as float64, from the optimizer's own
                  update rule (exp_avg: beta1, 1 - beta1; SGD's
                  momentum_buffer: momentum, 1 - dampening); every other
                  tensor of the file has none
"""
import json
import os
import shutil

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, "testdata", "pt_optim")


def stepped(make):
    """An optimizer over a small model after two steps, and the model."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    opt = make(model)
    for _ in range(2):
        opt.zero_grad()
        model(torch.randn(5, 4)).square().sum().backward()
        opt.step()
    return opt, model


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    makers = {
        "adam": lambda m: torch.optim.Adam([
            {"params": list(m[0].parameters()), "betas": (0.8, 0.99)},
            {"params": list(m[2].parameters()), "betas": (0.95, 0.999)}], lr=1e-3),
        "adamw": lambda m: torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.01),
        "sgd": lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, dampening=0.5),
        "sgd_plain": lambda m: torch.optim.SGD(m.parameters(), lr=0.1),
        "rmsprop": lambda m: torch.optim.RMSprop(m.parameters(), lr=0.01, momentum=0.9),
    }
    saved, expected, model = {}, {}, None
    for name, make in makers.items():
        opt, model = stepped(make)
        sd = opt.state_dict()
        saved[name] = sd
        for group in sd["param_groups"]:
            for i in group["params"]:
                prefix = "optimizers/%s/state/%d/" % (name, i)
                if "betas" in group:
                    b1 = float(group["betas"][0])
                    expected[prefix + "exp_avg"] = [b1, 1 - b1]
                elif name.startswith("sgd") and group["momentum"] > 0:
                    expected[prefix + "momentum_buffer"] = [float(group["momentum"]), 1 - float(group["dampening"])]
    torch.save({"model": model.state_dict(), "optimizers": saved}, os.path.join(OUT, "optimizers.pt"))
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"torch": torch.__version__, "moments": expected}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
