#!/usr/bin/python3
"""Write the torch.save fixture of optimizer states, whose param groups
say how each state tensor carries the gradient (loaders.Moment).

Run from the repository root with Debian's PyTorch (CPU):

    apt-get install python3-torch
    /usr/bin/python3 testdata/gen/optim_fixtures.py

testdata/pt_optim/ (owned: deleted and rewritten):
  optimizers.pt   {"model": a state_dict (Linear, BatchNorm1d, ReLU,
                  Linear: BatchNorm's buffers between the parameters),
                  "optimizers": {name: the optimizer's state_dict() after
                  two steps}} for Adam with two param groups of different
                  betas, AdamW, AdamW with weight decay on the matrices
                  alone (two groups, neither in the model's order with
                  the other), SGD with momentum and dampening, SGD
                  without momentum (no buffer), RMSprop with momentum (its
                  momentum_buffer is a step, not a gradient)
  with_ema.pt     {"model", "ema": a copy of the model's state_dict,
                  "optimizer": AdamW's}: the copy's names say EMA weights,
                  so the moments name the model's parameters
  two_models.pt   {"model", "model_state_dict": a copy, "optimizer"}: two
                  dicts of parameters alike, so no moment names one
  expected.json   per file, the rule of every state tensor that has one,
                  by name: decay and gain as float64, from the optimizer's
                  own update rule (exp_avg: beta1, 1 - beta1; SGD's
                  momentum_buffer: momentum, 1 - dampening), and the name
                  of its parameter in the file, from model.named_parameters()
                  in the order the optimizer numbers them ("" where the file
                  cannot tell); every other tensor of the file has none
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
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.ReLU(),
                                torch.nn.Linear(3, 2))
    opt = make(model)
    for _ in range(2):
        opt.zero_grad()
        model(torch.randn(5, 4)).square().sum().backward()
        opt.step()
    return opt, model


def index_names(opt, model, prefix):
    """The name of each parameter by the index the optimizer's state_dict
    gives it: its param groups' parameters in turn, by identity."""
    by_id = {id(p): prefix + n for n, p in model.named_parameters()}
    return [by_id[id(p)] for g in opt.param_groups for p in g["params"]]


def split(m):
    """AdamW with weight decay on the matrices only, as transformer loops
    write it: two groups, each in the model's order, not the model's order
    together."""
    decay = [p for p in m.parameters() if p.ndim >= 2]
    rest = [p for p in m.parameters() if p.ndim < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                              {"params": rest, "weight_decay": 0.0}], lr=1e-3)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    makers = {
        "adam": lambda m: torch.optim.Adam([
            {"params": list(m[0].parameters()) + list(m[1].parameters()), "betas": (0.8, 0.99)},
            {"params": list(m[3].parameters()), "betas": (0.95, 0.999)}], lr=1e-3),
        "adamw": lambda m: torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.01),
        "adamw_split": split,
        "sgd": lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, dampening=0.5),
        "sgd_plain": lambda m: torch.optim.SGD(m.parameters(), lr=0.1),
        "rmsprop": lambda m: torch.optim.RMSprop(m.parameters(), lr=0.01, momentum=0.9),
    }

    def moments(sd, prefix, params):
        """The expected rule of each moment of optimizer state dict sd."""
        out = {}
        for group in sd["param_groups"]:
            for i in group["params"]:
                name = "%s/state/%d/" % (prefix, i)
                param = params[i] if params else ""
                if "betas" in group:
                    b1 = float(group["betas"][0])
                    out[name + "exp_avg"] = {"decay": b1, "gain": 1 - b1, "param": param}
                elif "dampening" in group and group["momentum"] > 0:
                    out[name + "momentum_buffer"] = {"decay": float(group["momentum"]),
                                                     "gain": 1 - float(group["dampening"]), "param": param}
        return out

    saved, expected, model = {}, {}, None
    for name, make in makers.items():
        opt, model = stepped(make)
        saved[name] = opt.state_dict()
        expected.update(moments(saved[name], "optimizers/" + name, index_names(opt, model, "model/")))
    torch.save({"model": model.state_dict(), "optimizers": saved}, os.path.join(OUT, "optimizers.pt"))
    opt, model = stepped(makers["adamw"])
    sd = model.state_dict()
    torch.save({"model": sd, "ema": {k: v.clone() for k, v in sd.items()}, "optimizer": opt.state_dict()},
               os.path.join(OUT, "with_ema.pt"))
    torch.save({"model": sd, "model_state_dict": {k: v.clone() for k, v in sd.items()}, "optimizer": opt.state_dict()},
               os.path.join(OUT, "two_models.pt"))
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"torch": torch.__version__, "files": {
            "optimizers.pt": expected,
            "with_ema.pt": moments(opt.state_dict(), "optimizer", index_names(opt, model, "model/")),
            "two_models.pt": moments(opt.state_dict(), "optimizer", None)}}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
