#!/usr/bin/env bash
# Time two graphdiff binaries side by side over every scenario of the
# labelled corpus (many small files, parameters at every step: the case
# the run-level verdict's update measurements cost most in), 3 rounds
# interleaved after one warm-up round; prints each round's wall seconds.
#
#   bench/corpus.sh OLD_BINARY NEW_BINARY
set -euo pipefail
old=$(readlink -f "$1"); new=$(readlink -f "$2")
cd "$(dirname "$0")/.."
round() {
  s=$(date +%s.%N)
  for d in testdata/corpus/*/*/; do "$1" compare "$d/eager" "$d/graph" --format json > /dev/null 2>&1 || true; done
  e=$(date +%s.%N)
  awk -v s="$s" -v e="$e" 'BEGIN{printf "%.2f", e-s}'
}
round "$old" > /dev/null; round "$new" > /dev/null
for r in 1 2 3; do
  echo "round $r  old $(round "$old") s  new $(round "$new") s"
done
