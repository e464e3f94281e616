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
case_() { # name command...
  name=$1; shift
  out=$(mktemp); s=$(date +%s.%N)
  "$gd" "$@" > "$out" 2>/dev/null & pid=$!
  peak=0
  while kill -0 "$pid" 2>/dev/null; do
    kb=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    [ -n "$kb" ] && [ "$kb" -gt "$peak" ] && peak=$kb
    sleep 0.01
  done
  status=0; wait "$pid" || status=$?
  e=$(date +%s.%N)
  summary=$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["summary"]; print(d["verdict"], "pairs", s["pairs"], "compared", s["compared"], "errors", s["errors"], "elements", sum(t["metrics"]["count"] for t in d["tensors"] if t["metrics"]), "mismatched", sum(t["metrics"]["mismatched"] for t in d["tensors"] if t["metrics"]))' "$out")
  awk -v n="$name" -v s="$s" -v e="$e" -v m="$peak" -v x="$status" -v sum="$summary" \
    'BEGIN{printf "%-22s %7.2f s  peak anon %4d MiB  exit %d  %s\n", n, e-s, m/1024, x, sum}'
  rm -f "$out"
}
cat "$dir"/huge_a.npy "$dir"/huge_b.npy > /dev/null
case_ "50,000 pairs (json)" compare --format json "$dir/many/a" "$dir/many/b"
case_ "2 x 8 GiB (json)" compare --format json "$dir/huge_a.npy" "$dir/huge_b.npy"
