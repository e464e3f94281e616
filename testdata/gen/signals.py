#!/usr/bin/python3
"""Print, for labelled scenarios, the two run-level signals a verdict can
read from any training run's dumps, step by step:

  g  the largest per-tensor RMS of the gradient difference (graph − eager),
     in units of the model's gradient scale at that step (the RMS of every
     eager gradient element of the step): how far a gradient moved,
     measured against the whole model rather than against itself;
  b  the model's update-ratio error, pooled over every parameter element
     whose eager gradient is well above rounding (|g| > sqrt(ε)·S, ε the
     compute dtype's epsilon, S the gradient scale above):
     β = Σ(u_graph − u_eager)·u_eager / Σ u_eager·u_eager, u = p_k − p_{k−1}
     (BatchNorm statistics left out): 0 when the graph takes the eager
     update, −0.3 for an update 0.7 times as large. Elements with
     rounding-level gradients are left out: Adam turns their noise into
     full-size steps of random sign in any correct run.

    /usr/bin/python3 testdata/gen/signals.py testdata/corpus/*/*

Reads .npy (bfloat16 as '<V2'), safetensors (parsed here) and torch.save
dumps (needs torch). A calibration aid: it prints, it fixes nothing.
"""
import glob
import json
import math
import os
import struct
import sys

import numpy as np
import torch

def read_st(path):
    b = open(path, 'rb').read()
    n = struct.unpack('<Q', b[:8])[0]
    h = json.loads(b[8:8+n]); data = b[8+n:]
    out = {}
    for k, v in h.items():
        if k == '__metadata__': continue
        s, e = v['data_offsets']; raw = data[s:e]
        if v['dtype'] == 'BF16':
            a = np.frombuffer(raw, np.uint16).astype(np.uint32) << 16
            a = a.view(np.float32)
        elif v['dtype'] == 'F32':
            a = np.frombuffer(raw, np.float32)
        elif v['dtype'] == 'I64':
            a = np.frombuffer(raw, np.int64).astype(np.float64)
        else:
            a = np.frombuffer(raw, np.float16).astype(np.float32)
        out[k] = a.reshape(v['shape']).astype(np.float64)
    return out

def read_npy(p):
    a = np.load(p)
    if a.dtype.kind == 'V':
        a = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float64)

def load_run(d):
    steps = sorted(glob.glob(os.path.join(d, 'step_*')))
    out = []
    for s in steps:
        t = {}
        for f in glob.glob(os.path.join(s, '**', '*'), recursive=True):
            if os.path.isdir(f): continue
            rel = os.path.relpath(f, s)
            if f.endswith('.npy'):
                t[rel[:-4]] = read_npy(f)
            elif f.endswith('.safetensors'):
                kind = rel[:-12]
                for k, v in read_st(f).items():
                    t[kind + '/' + k if kind != 'loss' else 'loss'] = v
            elif f.endswith('.pt'):
                kind = rel[:-3]
                for k, v in torch.load(f).items():
                    v = v.float() if v.dtype == torch.bfloat16 else v
                    t[kind + '/' + k if kind != 'loss' else 'loss'] = v.double().numpy()
        out.append(t)
    return out

def analyse(sd):
    lab = json.load(open(os.path.join(sd, 'label.json')))
    # the compute dtype's epsilon, from the label's note (corpus.py writes
    # the precision second) or its compute_dtype
    prec = lab.get('note', '').split(',')[1].strip() if ',' in lab.get('note', '') else ''
    eps = {'bf16': 2**-7, 'autocast': 2**-7, 'fp16': 2**-10, 'tf32': 2**-10}.get(
        prec, {'bf16': 2**-7, 'f16': 2**-10}.get(lab.get('compute_dtype', ''), 2**-23))
    A, B = load_run(os.path.join(sd, 'eager')), load_run(os.path.join(sd, 'graph'))
    rows = []
    for k in range(min(len(A), len(B))):
        a, b = A[k], B[k]
        gnames = [n for n in a if n.startswith('grads/') and n in b and a[n].shape == b[n].shape]
        if gnames:
            S = math.sqrt(sum((a[n]**2).sum() for n in gnames) / sum(a[n].size for n in gnames))
            gworst = max(math.sqrt(((a[n]-b[n])**2).mean()) / S if S else 0 for n in gnames)
            grel = max(np.linalg.norm(a[n]-b[n]) / (np.linalg.norm(a[n]) or 1) for n in gnames)
        else:
            S = gworst = grel = float('nan')
        # the model's update ratio over elements with healthy gradients
        beta = float('nan')
        if k > 0 and gnames:
            pa, pb = A[k-1], B[k-1]
            theta = math.sqrt(eps) * S
            num = den = 0.0
            for n in a:
                if not n.startswith('params/') or 'running' in n or 'num_batches' in n:
                    continue
                gn = 'grads/' + n[len('params/'):]
                if n not in b or n not in pa or n not in pb or gn not in a or a[gn].shape != a[n].shape \
                        or b[n].shape != a[n].shape:
                    continue
                healthy = np.abs(a[gn]) > theta
                u = (a[n] - pa[n])[healthy]
                ub = (b[n] - pb[n])[healthy]
                num += ((ub - u) * u).sum()
                den += (u * u).sum()
            if den > 0:
                beta = num / den
        rows.append((k, gworst, grel, beta))
    return lab, rows

def main():
    for sd in sys.argv[1:]:
        try:
            lab, rows = analyse(sd)
        except Exception as e:
            print(sd, 'ERR', e); continue
        tag = 'OK ' if lab['verdict'] == 'pass' else 'BUG'
        st = lab.get('first_divergent_step')
        cells = ' '.join(f"{k}:{g:.1e}/{b:+.2f}" if not math.isnan(b) else f"{k}:{g:.1e}/--" for k, g, r, b in rows[:8])
        print(f"{tag} {os.path.basename(sd):34s} step={st} {cells}")


if __name__ == "__main__":
    main()
