#!/usr/bin/env bash
# What each assembly kernel gains end to end: graphdiff compare on the
# inputs of make_files.py with every kernel, then with each turned off by
# GRAPHDIFF_NOASM (see compare/kernel_amd64.go), then with none (a purego
# build, when given). The variants of one case run in turn, ROUNDS times
# (default 7), so that a shared machine's slow spells fall on all of them;
# each cell is the median wall time, page cache warm.
#
#   bench/kernels.sh GRAPHDIFF_BINARY DIR [MiB] [PUREGO_BINARY]
#
# Prints one line per case: the time with every kernel, then for each
# variant its time and the ratio to it (how much slower without).
set -euo pipefail
gd=$(readlink -f "$1"); dir=$2; mib=${3:-1024}; pure=${4:-}
. "$(dirname "$0")/peak.sh"
variants=(equal32 equal16 equalmixed differ32 differ512 mixed512)
cases=(
  "f32:$dir/f32_a_$mib.npy $dir/f32_b_$mib.npy"
  "f32-all-differ:$dir/f32_a_$mib.npy $dir/f32_ulp_$mib.npy"
  "bf16:$dir/bf16_a_$mib.npy $dir/bf16_b_$mib.npy"
  "f16:$dir/f16_a_$mib.npy $dir/f16_b_$mib.npy"
  "f32-vs-bf16:$dir/f32_a_$mib.npy $dir/bf16_b_$mib.npy"
  "bf16-in-f32-vs-bf16:$dir/f32bf_a_$mib.npy $dir/bf16_b_$mib.npy"
  "small-files:$dir/small/a $dir/small/b"
)
/usr/bin/python3 "$(dirname "$0")/recache.py" "$dir"
printf '%-22s %8s' case all
for v in "${variants[@]}"; do printf ' %17s' "-$v"; done
[ -n "$pure" ] && printf ' %17s' purego
echo
once() { # wall seconds of one run: once VARIANT A B
  local s e bin=$gd noasm=$1
  [ "$1" = purego ] && { bin=$(readlink -f "$pure"); noasm=; }
  s=$(date +%s.%N)
  GRAPHDIFF_NOASM=$noasm "$bin" compare "$2" "$3" --format json > /dev/null 2>&1 || true
  e=$(date +%s.%N)
  awk -v s="$s" -v e="$e" 'BEGIN{printf "%.4f\n", e-s}'
}
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
all=(all "${variants[@]}")
[ -n "$pure" ] && all+=(purego)
for c in "${cases[@]}"; do
  name=${c%%:*}; read -r a b <<< "${c#*:}"
  cat "$a" "$b" > /dev/null 2>&1 || true
  tmp=$(mktemp -d)
  for _ in $(seq "${ROUNDS:-7}"); do
    for v in "${all[@]}"; do once "$v" "$a" "$b" >> "$tmp/$v"; done
  done
  base=$(median < "$tmp/all")
  printf '%-22s %7.3fs' "$name" "$base"
  for v in "${all[@]:1}"; do
    t=$(median < "$tmp/$v")
    awk -v t="$t" -v b="$base" 'BEGIN{printf "  %6.3fs (%5.2fx)", t, t/b}'
  done
  echo
  rm -r "$tmp"
done
