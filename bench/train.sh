#!/usr/bin/env bash
# The training-dump benchmark: a GPT-2-small-sized run (148 tensors with
# GPT-2's real shapes, 124M float32 parameters, gradients and parameters,
# 3 steps, two runs, about 6 GB per layout; the graphed run has 10% of
# gradient elements one ulp away and parameters that follow them), made by
# ../shared/bench/gen_gpt2.py, in both layouts the dump helper writes (one
# .npy per tensor; one safetensors file per step and kind). Two graphdiff
# binaries and the tree floor (bench/floor tree: list every file, map it,
# read one word of every 64-byte line on all cores, no arithmetic) take
# turns, 3 rounds after a warm-up round, page cache warm, each layout
# recached first (bench/recache.py: evicted and read back, so that every
# file's pages sit in the page cache as a second read of any file leaves
# them, whatever the writing left); prints each
# round's seconds, the medians, each binary's median over the floor's, and
# each binary's peak resident anonymous memory (RssAnon, bench/peak.sh:
# the dump's pages mapped from the page cache are not counted).
#
#   bench/train.sh OLD_BINARY NEW_BINARY [DIR]   (DIR: where the dump is
#                                                 made, /tmp/graphdiff-bench/train)
#
# With NUMPY=1 it also times bench/np_tree.py, the same pairs and update
# sums in numpy, once per layout, after the rounds.
set -euo pipefail
old=$(readlink -f "$1"); new=$(readlink -f "$2")
work=${3:-/tmp/graphdiff-bench/train}
here=$(cd "$(dirname "$0")" && pwd)
gen=$here/../../shared/bench/gen_gpt2.py
mkdir -p "$work"
(cd "$here/.." && go build -o "$work/floor" ./bench/floor)
if [ ! -d "$work/npy/graph/step_000002" ] || [ ! -d "$work/st/graph/step_000002" ]; then
  [ -f "$gen" ] || { echo "train.sh: $gen not found (../shared beside the repository)" >&2; exit 1; }
  /usr/bin/python3 "$gen" "$work" > /dev/null
fi
secs() { awk -v s="$1" -v e="$2" 'BEGIN{printf "%.3f", e-s}'; }
run() { # BINARY DIR: seconds of one comparison (exit 1 is a difference, not an error)
  local s e; s=$(date +%s.%N)
  "$1" compare "$2/eager" "$2/graph" --format json > /dev/null 2>&1 || [ $? -eq 1 ]
  e=$(date +%s.%N); secs "$s" "$e"
}
floor() { # DIR: seconds the tree floor takes, timed from outside as graphdiff is
  local s e; s=$(date +%s.%N)
  FLOOR_ROUNDS=1 "$work/floor" tree "$1/eager" "$1/graph" > /dev/null
  e=$(date +%s.%N); secs "$s" "$e"
}
med() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
. "$here/peak.sh"
peak() { # BINARY DIR: peak resident anonymous memory in MiB
  run_peak /dev/null "$1" compare "$2/eager" "$2/graph" --format json
  echo "$PEAK_MIB"
}
for layout in npy st; do
  d=$work/$layout
  /usr/bin/python3 "$here/recache.py" "$d" # page cache warm, in one state
  run "$old" "$d" > /dev/null; run "$new" "$d" > /dev/null
  fl=(); ol=(); nl=()
  for r in 1 2 3; do
    f=$(floor "$d"); o=$(run "$old" "$d"); n=$(run "$new" "$d")
    fl+=("$f"); ol+=("$o"); nl+=("$n")
    echo "$layout round $r  floor $f s  old $o s  new $n s"
  done
  f=$(med "${fl[@]}"); o=$(med "${ol[@]}"); n=$(med "${nl[@]}")
  awk -v l="$layout" -v f="$f" -v o="$o" -v n="$n" 'BEGIN{printf "%s median  floor %s s  old %s s (%.2f× floor)  new %s s (%.2f× floor)\n", l, f, o, o/f, n, n/f}'
  echo "$layout peak anonymous memory  old $(peak "$old" "$d") MiB  new $(peak "$new" "$d") MiB"
  if [ -n "${NUMPY:-}" ]; then # the same analysis in numpy (bench/np_tree.py), once
    s=$(date +%s.%N); /usr/bin/python3 "$here/np_tree.py" "$d/eager" "$d/graph" > /dev/null; e=$(date +%s.%N)
    awk -v l="$layout" -v t="$(secs "$s" "$e")" -v n="$n" 'BEGIN{printf "%s numpy  %s s (%.1f× new)\n", l, t, t/n}'
  fi
done
