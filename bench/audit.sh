#!/usr/bin/env bash
# Run graphdiff on every hostile and edge input of the repository, each
# under /usr/bin/time, and print its wall time, peak resident memory and
# exit status, then the largest of each: every input must end (exit 0, 1
# or 2, never a signal) in under 5 s and 200 MB.
#
#   bench/audit.sh [GRAPHDIFF]     (default: go build ./cmd/graphdiff)
#
# The inputs: each file and run directory of testdata/bad (with the
# command that meets it: inspect, curve or compare --policy), each run pair
# of testdata/edge (compare, compare with the compared run as baseline,
# 2 shards merged with and without --read-runs), the baselines of
# testdata/edge/baseline, and, made here and removed after, parameters of
# 1 GiB not in the page cache (a sparse .npy file at two steps: the update
# measurement maps each whole) compared with themselves.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$bin" ]; then
  bin=$tmp/graphdiff
  go build -o "$bin" ./cmd/graphdiff || exit 2
fi
worst_s=0 worst_kb=0 bad=0
measure() { # measure NAME ARGS...
  local name=$1
  shift
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" "$@" > /dev/null 2> "$tmp/err"
  local rc=$? s kb
  read -r s kb < <(tail -1 "$tmp/time")
  printf '%-60s exit %3d  %6.2f s  %7d KB\n' "$name" "$rc" "$s" "$kb"
  if [ "$rc" -gt 2 ]; then bad=1; fi
  worst_s=$(awk -v a="$worst_s" -v b="$s" 'BEGIN{print (b>a)?b:a}')
  if [ "$kb" -gt "$worst_kb" ]; then worst_kb=$kb; fi
}
for f in testdata/bad/* testdata/bad/runs/*; do
  case $f in *.md|testdata/bad/runs) continue ;; esac
  case $f in
    *.yaml) measure "$f" compare --policy "$f" testdata/runs/tree testdata/runs/tree ;;
    *.csv|*.jsonl|*.tfevents) measure "$f" curve "$f" "$f" ;;
    *) measure "$f" inspect "$f" ;;
  esac
done
for d in testdata/edge/*/; do
  [ -d "$d/eager" ] && [ -d "$d/graph" ] || continue
  measure "$d" compare "$d/eager" "$d/graph"
  measure "$d --baseline graph" compare --baseline "$d/graph" "$d/eager" "$d/graph"
  measure "$d --shard 1/2" compare --shard 1/2 --report json="$tmp/s1.json" "$d/eager" "$d/graph"
  measure "$d --shard 2/2" compare --shard 2/2 --report json="$tmp/s2.json" "$d/eager" "$d/graph"
  measure "$d merge" merge "$tmp/s1.json" "$tmp/s2.json"
  measure "$d merge --read-runs" merge --read-runs "$tmp/s1.json" "$tmp/s2.json"
done
b=testdata/edge/baseline
for base in baseline garbage other; do
  for g in graph_ok graph_stale; do
    measure "$b/$g --baseline $base" compare --baseline "$b/$base" "$b/eager" "$b/$g"
  done
done
# parameters of 1 GiB at two steps, sparse: not in the page cache
"${PYTHON:-/usr/bin/python3}" - "$tmp/big" <<'PY'
import os, sys
import numpy as np
for step in (0, 1):
    d = os.path.join(sys.argv[1], f"step_{step:06d}", "params")
    os.makedirs(d)
    np.lib.format.open_memmap(os.path.join(d, "w.npy"), mode="w+", dtype="<f4", shape=(1 << 28,)).flush()
PY
measure "1 GiB sparse parameters at 2 steps" compare "$tmp/big" "$tmp/big"
echo "largest: $worst_s s, $worst_kb KB"
exit $bad
