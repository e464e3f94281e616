#!/usr/bin/env bash
# graphdiff under load: 50,000 tensor pairs, and one pair of 8 GiB files.
#
#   /usr/bin/python3 bench/make_load.py DIR [GIB]   # once: ~400 MB + 2 x GIB GiB
#   bench/load.sh GRAPHDIFF_BINARY DIR
#
# For each case: wall time (page cache warm), the peak resident anonymous
# memory (RssAnon, sampled from /proc every 10 ms; file-backed mapped pages
# are not counted), the verdict and the counts, so a run that skipped
# anything shows. The bound is 256 MiB of anonymous memory.
set -euo pipefail
gd=$(readlink -f "$1"); dir=$2
. "$(dirname "$0")/peak.sh"
case_() { # name command...
  name=$1; shift
  out=$(mktemp); s=$(date +%s.%N)
  run_peak "$out" "$gd" "$@"
  e=$(date +%s.%N)
  summary=$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["summary"]; print(d["verdict"], "pairs", s["pairs"], "compared", s["compared"], "errors", s["errors"], "elements", sum(t["metrics"]["count"] for t in d["tensors"] if t["metrics"]), "mismatched", sum(t["metrics"]["mismatched"] for t in d["tensors"] if t["metrics"]))' "$out")
  awk -v n="$name" -v s="$s" -v e="$e" -v m="$PEAK_MIB" -v x="$STATUS" -v sum="$summary" \
    'BEGIN{printf "%-22s %7.2f s  peak anon %4d MiB  exit %d  %s\n", n, e-s, m, x, sum}'
  rm -f "$out"
}
/usr/bin/python3 "$(dirname "$0")/recache.py" "$dir"/huge_a.npy "$dir"/huge_b.npy
case_ "50,000 pairs (json)" compare --format json "$dir/many/a" "$dir/many/b"
gib=$(( $(stat -c %s "$dir/huge_a.npy") >> 30 ))
case_ "2 x $gib GiB (json)" compare --format json "$dir/huge_a.npy" "$dir/huge_b.npy"
