#!/usr/bin/env bash
# Check that two graphdiff binaries say the same thing: every labelled run
# of testdata/corpus and testdata/scenarios compared in every format (text,
# JSON, JUnit, Markdown, HTML), with --strict and --fail-fast, in 3 shards
# merged back, and the loss curves of the runs that hold them; each output
# and exit status is written under OUT/old and OUT/new and the two trees are
# diffed. Prints the differing files and exits 1 when any differ.
#
#   bench/sameoutput.sh OLD_BINARY NEW_BINARY [OUT]
#
# FORMATS (default "text json junit markdown html") chooses the formats of
# the plain comparison.
# A change that is meant to alter some output (say, the units a report
# states) is checked by reading the diff this leaves in OUT.
set -uo pipefail
old=$(readlink -f "$1"); new=$(readlink -f "$2")
out=$(readlink -f "${3:-$(mktemp -d)}")
cd "$(dirname "$0")/.."

run() { # run BINARY DEST NAME ARGS...: stdout, stderr and exit status
  local bin=$1 dest=$2 name=$3
  shift 3
  "$bin" "$@" > "$dest/$name.out" 2> "$dest/$name.err"
  echo $? > "$dest/$name.rc"
}

outputs() { # outputs BINARY DEST
  local bin=$1 dest=$2 d n a b
  for d in testdata/corpus/*/*/ testdata/scenarios/*/; do
    [ -d "$d/eager" ] || continue
    n=$(basename "$d")
    a=$d/eager b=$d/graph
    mkdir -p "$dest/$n"
    for f in ${FORMATS:-text json junit markdown html}; do
      run "$bin" "$dest/$n" "$f" compare "$a" "$b" --format "$f" --top 0
    done
    run "$bin" "$dest/$n" strict compare "$a" "$b" --format json --strict
    run "$bin" "$dest/$n" failfast compare "$a" "$b" --format json --fail-fast
    for i in 1 2 3; do
      run "$bin" "$dest/$n" "shard$i" compare "$a" "$b" --format json --shard "$i/3"
    done
    run "$bin" "$dest/$n" merged merge "$dest/$n/shard1.out" "$dest/$n/shard2.out" "$dest/$n/shard3.out" --format json
    run "$bin" "$dest/$n" curve curve "$a" "$b" --format json
  done
}

mkdir -p "$out/old" "$out/new"
outputs "$old" "$out/old"
outputs "$new" "$out/new"
# the shard reports name the files merge read: the same in both trees
# but for the folder they were written to
sed -i "s|$out/new/|$out/old/|g" "$out"/new/*/merged.* 2>/dev/null
if diff -rq "$out/old" "$out/new"; then
  echo "same output: $(find "$out/old" -type f | wc -l) files"
else
  echo "outputs differ: diff -r $out/old $out/new" >&2
  exit 1
fi
