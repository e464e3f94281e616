#!/bin/sh
# Rewrites the compare JSON reports in this directory with the current
# graphdiff: the round-trip test, FuzzReadCompareJSON and FuzzMerge read them.
# Run from the repository root: sh report/testdata/compare_json/make.sh
set -u
out=report/testdata/compare_json
s=testdata/scenarios
gd() { go run ./cmd/graphdiff "$@"; }
gd compare --format json --shard 1/12 $s/captured_lr/eager $s/captured_lr/graph > $out/captured_lr_shard1of12.json
gd compare --format json --baseline $s/bf16_adam/baseline/step_000002 --policy tolerances/testdata/example_policy.yaml \
  $s/bf16_adam/eager/step_000002 $s/bf16_adam/graph/step_000002 > $out/baseline_policy.json
gd compare --format json testdata/runs/tree testdata/runs/flat > $out/missing_extra.json
gd compare --format json testdata/bad/not_npy_member.npz testdata/bad/not_npy_member.npz > $out/unreadable.json 2>/dev/null
# the two shards of a failing comparison, which FuzzMerge merges
gd compare --format json --shard 1/2 $s/stale_input/eager $s/stale_input/graph > $out/stale_input_shard1of2.json
gd compare --format json --shard 2/2 $s/stale_input/eager $s/stale_input/graph > $out/stale_input_shard2of2.json
# the two shards of a decoding with near ties and a masked vocabulary (partial.decode, partial.masked)
d=testdata/decode/masked_vocab_ok
gd compare --format json --shard 1/2 $d/eager $d/graph > $out/masked_vocab_shard1of2.json
gd compare --format json --shard 2/2 $d/eager $d/graph > $out/masked_vocab_shard2of2.json
# a shard compared with --rename (renamed), its pairs under the new names
gd compare --format json --shard 1/2 --rename fc1.weight=fc1w $s/fp32_adam/eager/step_000001 $s/fp32_adam/graph/step_000001 \
  > $out/renamed_shard1of2.json
exit 0
