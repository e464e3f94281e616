#!/usr/bin/env bash
# Score graphdiff on the labelled scenarios with parts of every dump
# removed, as users who dump less would run it: the causes must come from
# loss, gradients and parameters alone, with inputs and outputs only making
# them surer.
#
#   testdata/gen/score_partial.sh BINARY [no-io|losses-only [SCORE ARGS]]
#
# SCORE ARGS go to score.py (--show lists every scenario).
# no-io (default) removes inputs and outputs; losses-only keeps only the
# losses. The copies go to a temporary directory, removed on exit; the
# table is ../shared/score/score.py's.
set -euo pipefail
bin=$(readlink -f "$1"); mode=${2:-no-io}
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$here/testdata"
find corpus scenarios -name label.json | while read -r f; do
  d=$(dirname "$f"); mkdir -p "$tmp/$d"; cp -r "$d"/. "$tmp/$d"/
done
case $mode in
  no-io) keep='inputs|outputs' ;;
  losses-only) keep='inputs|outputs|grads|params|buffers|optim' ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
# per-kind directories, and per-kind files (safetensors, torch.save)
find "$tmp" -depth -type d -regextype posix-extended -regex ".*/($keep)" -exec rm -rf {} +
find "$tmp" -type f -regextype posix-extended -regex ".*/($keep)\.(safetensors|pt|npz)" -delete
/usr/bin/python3 "$here/../shared/score/score.py" "$bin" "$tmp" "${@:3}"
