#!/usr/bin/python3
"""Greedy decoding whose two runs differ only in rounding, on the CPU.

    /usr/bin/python3 testdata/gen/decode_flips.py testdata/decode

A tiny recurrent decoder (embedding, a tanh recurrence, an output
projection) decodes 4 sequences for 14 positions from a 3-token prompt.
Its logits are bfloat16, as a bf16 model's are: the reference run `eager`
computes the output projection in one matmul rounded to bfloat16; the run
`graph` rounds the products of each half of the hidden size to bfloat16 and
sums the halves in bfloat16, as another kernel (a split-K matmul with
bfloat16 partials, a captured graph's choice) would. Both are
correct implementations of the same model: their logits differ by
bfloat16 rounding, and where a sequence's two best logits are that close
its greedy token may differ; from there that sequence follows another
prefix. The output projection's rows come in near-duplicate pairs so that
such near ties occur.

Scenarios (a label.json each, harness `decode`, family `decode`):

  near_tie_ok     the two runs above: correct by construction; observed
                  flips are near ties.
  stale_token     the graph run feeds, from position 6 on, the token of
                  position 5 again (an input assigned instead of copied:
                  the captured step keeps reading an old tensor); its first
                  divergent step is observed against its twin, the same
                  graph run without the bug.
  far_flip        the graph run adds 1.0 to logit 0 of sequence 0 from
                  position 8 on (a mask or bias read after it was freed):
                  a token chosen far below the other run's best.
  masked_vocab_ok the near-tie pair with the vocabulary padded by 16
                  positions masked with bfloat16's min (-3.39e38), as
                  padded vocabularies are: correct.
  masked_low_logit the padded pair whose graph run lowers sequence 1's
                  smallest logit by 2.0 from position 5 on: no greedy token
                  changes, only logits; the masks swamp a norm over the
                  whole tensor.
  masked_logits_only the same bug with the logits alone dumped, both runs
                  with the reference's arithmetic (equal until the bug).
  near_tie_keepdim_ok, stale_token_keepdim
                  near_tie_ok and stale_token with the shapes a causal
                  LM's decode step gives: tokens [B], logits [B, 1, V].
  near_tie_all_positions_ok
                  near_tie_ok with every position's logits so far dumped
                  at each step ([B, t + 1, V]: a forward without a cache).
  near_tie_sequence_ok, far_flip_sequence
                  near_tie_ok and far_flip with the ids generated so far
                  dumped whole at each step ([B, PROMPT + t + 1], the
                  prompt first and the step's token last).

Each run writes gen_<t>.npz per position with `logits` (float32 holding
bfloat16 values, [4, V]) and `tokens` (int64, [4]), as np.savez does.
"""
import json
import os
import sys

import numpy as np
import torch

V, D, B, PROMPT, STEPS = 64, 48, 4, 3, 14


def model(seed=7):
    g = torch.Generator().manual_seed(seed)
    emb = torch.randn(V, D, generator=g) * 0.5
    rec = torch.randn(D, D, generator=g) / D ** 0.5
    base = torch.randn(V // 2, D, generator=g) / D ** 0.5
    out = torch.repeat_interleave(base, 2, dim=0)
    out += 1e-3 * torch.randn(V, D, generator=g) / D ** 0.5  # near-duplicate pairs of rows
    return emb, rec, out


def logits_of(h, out, split):
    hb, wb = h.bfloat16().float(), out.bfloat16().float()
    if not split:
        return (hb @ wb.T).bfloat16()
    k = D // 2  # each half rounded to bfloat16, then summed in bfloat16
    return (hb[:, :k] @ wb[:, :k].T).bfloat16() + (hb[:, k:] @ wb[:, k:].T).bfloat16()


PAD = 16  # masked vocabulary positions of the padded scenarios


def prompt_ids(prompt_seed=11):
    g = torch.Generator().manual_seed(prompt_seed)
    return torch.randint(0, V, (B, PROMPT), generator=g)


def decode(split, bug=None, prompt_seed=11, pad=False):
    emb, rec, out = model()
    prompt = prompt_ids(prompt_seed)
    h = torch.zeros(B, D)
    for t in range(PROMPT):
        h = torch.tanh(h @ rec + emb[prompt[:, t]])
    steps = []
    feed = None
    for t in range(STEPS):
        lg = logits_of(h, out, split)
        if bug == "far_flip" and t >= 8:
            lg = lg.float()
            lg[0, 0] += 1.0
            lg = lg.bfloat16()
        if bug == "low_logit" and t >= 5:
            lg = lg.float()
            lg[1, lg[1].argmin()] -= 2.0  # the row's smallest logit: never its greedy token
            lg = lg.bfloat16()
        if pad:  # a vocabulary padded to a multiple of 16, the padding masked with the dtype's min
            lg = torch.cat([lg, torch.full((B, PAD), torch.finfo(lg.dtype).min, dtype=lg.dtype)], dim=1)
        tok = lg.float().argmax(dim=-1)
        steps.append((lg.float().numpy(), tok.numpy().astype(np.int64)))
        if bug == "stale_token" and t >= 6:
            tok = feed  # the captured step keeps reading the old tensor
        elif t == 5:
            feed = tok.clone()
        h = torch.tanh(h @ rec + emb[tok])
    return steps


def write(run, d, tokens=True, keepdim=False, sequence=None, history=None):
    """keepdim stores the shapes a causal LM's decode step gives: logits
    [B, 1, V] (model(...).logits of one position) beside tokens [B]
    (logits[:, -1].argmax(-1))."""
    os.makedirs(d, exist_ok=True)
    ids = sequence  # with sequence (the prompt, [B, PROMPT]): the ids generated so far, the step's last
    seen = None  # with history: every position's logits so far, [B, t + 1, V], the step's last
    for t, (lg, tok) in enumerate(run):
        if history:
            seen = lg[:, None, :] if seen is None else np.concatenate([seen, lg[:, None, :]], axis=1)
            lg = seen
        if keepdim:
            lg = lg[:, None, :]
        if ids is not None:
            ids = np.concatenate([ids, tok[:, None]], axis=1)
            tok = ids
        if tokens:
            np.savez(os.path.join(d, "gen_%03d.npz" % t), logits=lg, tokens=tok)
        else:
            np.savez(os.path.join(d, "gen_%03d.npz" % t), logits=lg)


def first_diff(x, y):
    for t, ((la, ta), (lb, tb)) in enumerate(zip(x, y)):
        if not (np.array_equal(la, lb) and np.array_equal(ta, tb)):
            return t
    return None


def main(root):
    eager, twin = decode(False), decode(True)
    flips = [t for t, ((_, a), (_, b)) in enumerate(zip(eager, twin)) if not np.array_equal(a, b)]
    if not flips:
        sys.exit("no near tie flipped a token: change the seeds")
    eager_pad, twin_pad = decode(False, pad=True), decode(True, pad=True)
    scen = {
        "near_tie_ok": (eager, twin, None, "pass", []),
        "stale_token": (eager, decode(True, "stale_token"), twin, "fail", ["stale_input"]),
        "far_flip": (eager, decode(True, "far_flip"), twin, "fail", ["uninitialized_memory"]),
        "masked_vocab_ok": (eager_pad, twin_pad, None, "pass", []),
        "masked_low_logit": (eager_pad, decode(True, "low_logit", pad=True), twin_pad, "fail", ["uninitialized_memory"]),
        # logits only, both runs with one arithmetic: equal until the bug
        "masked_logits_only": (eager_pad, decode(False, "low_logit", pad=True), eager_pad, "fail",
                               ["uninitialized_memory"]),
        # the shapes a causal LM's decode step gives: tokens [B], logits [B, 1, V]
        "near_tie_keepdim_ok": (eager, twin, None, "pass", []),
        "stale_token_keepdim": (eager, decode(True, "stale_token"), twin, "fail", ["stale_input"]),
        # the ids generated so far dumped whole at each step ([B, PROMPT + t + 1]) beside its logits
        "near_tie_sequence_ok": (eager, twin, None, "pass", []),
        "far_flip_sequence": (eager, decode(True, "far_flip"), twin, "fail", ["uninitialized_memory"]),
        # every position's logits so far ([B, t + 1, V], a forward without a cache) beside the step's tokens
        "near_tie_all_positions_ok": (eager, twin, None, "pass", []),
    }
    for name, (eager, graph, ref, verdict, causes) in scen.items():
        d = os.path.join(root, name)
        keep = "keepdim" in name
        seq = prompt_ids().numpy().astype(np.int64) if "sequence" in name else None
        hist = "all_positions" in name
        write(eager, os.path.join(d, "eager"), tokens=name != "masked_logits_only", keepdim=keep, sequence=seq, history=hist)
        write(graph, os.path.join(d, "graph"), tokens=name != "masked_logits_only", keepdim=keep, sequence=seq, history=hist)
        step = None if ref is None else first_diff(graph, ref)
        note = ("greedy decoding of %d sequences, bf16 logits; graph sums the output projection in two halves "
                "(rounding only); tokens first differ between eager and graph at step %d" % (B, flips[0]))
        if name == "masked_logits_only":
            note = ("greedy decoding of %d sequences, bf16 logits, only the logits dumped; both runs compute the "
                    "output projection in one matmul" % B)
        if name.startswith("masked"):
            note += "; the vocabulary padded by %d positions filled with bfloat16's min (-3.39e38)" % PAD
        if keep:
            note += "; tokens stored [%d] and logits [%d, 1, %d], as a causal LM's decode step gives them" % (B, B, V)
        if hist:
            note += "; logits stored for every position so far, [%d, t + 1, %d] at step t, beside the step's tokens" % (B, V)
        if seq is not None:
            note += "; tokens stored as the ids so far, [%d, %d + t + 1] at step t (the prompt first, the step's token last)" % (B, PROMPT)
        if ref is not None:
            note += "; bug %s, first differs from its twin at step %d" % (name, step)
        lab = {"harness": "decode", "family": "decode", "kind": "compare", "a": "eager", "b": "graph",
               "verdict": verdict, "causes": causes, "first_divergent_step": step, "note": note}
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(lab, f, indent=1)
        print(name, verdict, step, "eager/graph token flips at", flips)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "testdata/decode")
