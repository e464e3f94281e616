#!/usr/bin/env python3
"""Write label.json (the schema of ../shared/score/README.md) for each
scenario under testdata/scenarios, from the scenario.json that
scenarios.py recorded, so that they join the corpus.

    python3 testdata/gen/scenario_labels.py

Family: legacy_attn, legacy_conv or legacy_mlp, by the model the scenario
trained (its name's prefix). First divergent step: the first step at which
the graphed run's dumps differ bit for bit from the eager run's, as
scenarios.py measured it. For the SGD runs that is where the bug departs
from the same run without it (their correct graphed runs are bit for bit
eager's, sgd_identical); for the Adam runs, whose graphed steps always
differ from step 0, it is the step the bug starts at: the first learning
rate change for attn_captured_lr (step 1). lr_decay_tiny (a learning rate
0.01% a step off) is marked hard: it stays inside float32's tolerance for
its first steps.
"""
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "scenarios"
ADAM_STEPS = {"attn_captured_lr": 1}

for f in sorted(ROOT.glob("*/scenario.json")):
    d = json.loads(f.read_text())
    name = d["name"]
    family = "legacy_" + (name.split("_")[0] if name.split("_")[0] in ("attn", "conv") else "mlp")
    label = {"family": family, "harness": "scenarios", "kind": "compare", "a": "eager", "b": "graph"}
    if d["compute_dtype"] != d["dtype"]:
        label["compute_dtype"] = {"bfloat16": "bf16"}.get(d["compute_dtype"], d["compute_dtype"])
    if d["bug"] == "none":
        label.update(verdict="pass", causes=[], first_divergent_step=None)
    else:
        step = ADAM_STEPS.get(name, d["measured"]["first_step_bitwise_different"])
        label.update(verdict="fail", causes=[d["bug"]], first_divergent_step=step)
        if name == "lr_decay_tiny":
            label["hard"] = True
    label["note"] = (d["what"] + " Labelled by testdata/gen/scenario_labels.py from scenario.json "
                     "(first step bitwise different between the eager and graphed dumps).")
    (f.parent / "label.json").write_text(json.dumps(label, indent=1) + "\n")
    print(name, label["verdict"], label.get("first_divergent_step"))
