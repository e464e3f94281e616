#!/usr/bin/env bash
# How graphdiff compare scales with --jobs, and that its report does not
# change with it, on the inputs of make_files.py.
#
#   bench/jobs.sh GRAPHDIFF_BINARY DIR [MiB]
#
# Every input is first evicted from the page cache and read back
# (recache.py). For each case and each --jobs of 1, 2, 4, ... up to the
# number of processors (and that number itself): the median wall time of
# 3 runs, the speedup over --jobs 1, and whether the JSON report is byte
# for byte the one of --jobs 1 ("same"); any other report fails the script.
set -euo pipefail
gd=$(readlink -f "$1"); dir=$2; mib=${3:-1024}
cpus=$(nproc)
jobs=""
for ((j = 1; j < cpus; j *= 2)); do jobs="$jobs $j"; done
jobs="$jobs $cpus"
. "$(dirname "$0")/peak.sh"
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
case_row() { # name A B
  name=$1; shift
  for j in $jobs; do
    t=$(median3 "$out/last.json" "$gd" compare "$@" --format json --jobs "$j")
    if [ "$j" = 1 ]; then
      t1=$t; cp "$out/last.json" "$out/one.json"
    elif ! cmp -s "$out/last.json" "$out/one.json"; then
      echo "$name: the report with --jobs $j differs from --jobs 1" >&2
      exit 1
    fi
    awk -v n="$name" -v j="$j" -v t="$t" -v t1="$t1" \
      'BEGIN{printf "%-31s --jobs %-3d %7.3f s  %5.2fx  same\n", n, j, t, t1/t}'
  done
}
echo "$cpus processors"
/usr/bin/python3 "$(dirname "$0")/recache.py" "$dir" # same page-cache state for every input
case_row "float32 vs float32" "$dir/f32_a_$mib.npy" "$dir/f32_b_$mib.npy"
case_row "float32, every pair differs" "$dir/f32_a_$mib.npy" "$dir/f32_ulp_$mib.npy"
case_row "bfloat16 vs bfloat16" "$dir/bf16_a_$mib.npy" "$dir/bf16_b_$mib.npy"
case_row "float32 vs bfloat16 (mixed)" "$dir/f32_a_$mib.npy" "$dir/bf16_b_$mib.npy"
case_row "bfloat16 in float32 vs bf16" "$dir/f32bf_a_$mib.npy" "$dir/bf16_b_$mib.npy"
case_row "small: 2x 16000 files of 4 KiB" "$dir/small/a" "$dir/small/b"
