#!/usr/bin/env bash
# Speed and memory of graphdiff compare on the inputs of make_files.py.
#
#   bench/measure.sh GRAPHDIFF_BINARY DIR [MiB]
#
# Every input is first evicted from the page cache and read back
# (recache.py), so that all are cached alike. For each case: the median
# wall time of 3 runs (page cache warm), the element rate, and the peak
# resident anonymous memory (RssAnon, sampled from /proc every 10 ms;
# file-backed mapped pages are not counted).
set -euo pipefail
gd=$(readlink -f "$1"); dir=$2; mib=${3:-1024}
. "$(dirname "$0")/peak.sh"
n=$((mib << 18)) # elements per large file
peak_anon() { # peak RssAnon in MiB of one run of "$@"
  run_peak /dev/null "$@"
  echo "$PEAK_MIB"
}
row() { # name elements bytes command...
  name=$1; elems=$2; bytes=$3; shift 3
  cat "$@" > /dev/null 2>&1 || true
  t=$(median3 /dev/null "$gd" compare "$@" --format json)
  m=$(peak_anon "$gd" compare "$@" --format json)
  awk -v n="$name" -v t="$t" -v e="$elems" -v b="$bytes" -v m="$m" \
    'BEGIN{printf "%-28s %7.3f s  %6.2f ns/element  %7.0f MiB/s  peak anon %4d MiB\n", n, t, t*1e9/e, b/t/1048576, m}'
}
/usr/bin/python3 "$(dirname "$0")/recache.py" "$dir" # same page-cache state for every input
row "float32 vs float32" "$n" $((8 * n)) "$dir/f32_a_$mib.npy" "$dir/f32_b_$mib.npy"
row "float32, every pair differs" "$n" $((8 * n)) "$dir/f32_a_$mib.npy" "$dir/f32_ulp_$mib.npy"
row "bfloat16 vs bfloat16" "$n" $((4 * n)) "$dir/bf16_a_$mib.npy" "$dir/bf16_b_$mib.npy"
row "float16 vs float16" "$n" $((4 * n)) "$dir/f16_a_$mib.npy" "$dir/f16_b_$mib.npy"
row "float32 vs bfloat16 (mixed)" "$n" $((6 * n)) "$dir/f32_a_$mib.npy" "$dir/bf16_b_$mib.npy"
row "bfloat16 in float32 vs bf16" "$n" $((6 * n)) "$dir/f32bf_a_$mib.npy" "$dir/bf16_b_$mib.npy"
small=$((8 * 2000 * 1024))
row "small: 2x 16000 files of 4 KiB" "$small" $((8 * small)) "$dir/small/a" "$dir/small/b"
