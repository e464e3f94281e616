#!/usr/bin/env bash
# What a comparison costs beyond the floor under it, each cost measured
# side by side with its floor in this one run (the machine is shared: ratios
# taken minutes apart mean little).
#
#   /usr/bin/python3 bench/make_files.py DIR 1024       # once
#   /usr/bin/python3 bench/make_load.py DIR 1 1000 2000 # once
#   bench/costs.sh GRAPHDIFF_BINARY DIR
#
# Rows:
#   opens per file      openat calls per tensor file, counted by strace, on
#                       the 2 x 16,000 small files and on the 1 GiB pair
#   small files         graphdiff on 2 x 16,000 files of 1024 float32 against
#                       `floor files` (open, read and close each once), median
#                       of 3 each
#   pairs               50,000, 100,000 and 200,000 pairs of 256 float32:
#                       median wall time of 3, peak resident anonymous memory
#                       (RssAnon sampled every 10 ms), whether graphdiff
#                       printed shard advice; then the ratios of successive
#                       sizes
#   shards              the largest of them in the number of shards its
#                       advice names, one after the other: the highest peak
#                       resident anonymous memory and the slowest shard's
#                       wall time (sampling included)
#   cold, then warm     the 1 GiB float32 pair evicted from the page cache,
#                       compared once (cold), then 3 times (warm after cold);
#                       then read back by read(2) (recache.py) and compared
#                       3 times (warm): the ratio of the medians
#   1 GiB pair          graphdiff on the same pair against `floor map` (map
#                       both files and read every cache line on all cores)
set -euo pipefail
gd=$(readlink -f "$1"); dir=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/peak.sh"
py=/usr/bin/python3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
(cd "$here/.." && go build -o "$work/floor" ./bench/floor)
a=$dir/f32_a_1024.npy; b=$dir/f32_b_1024.npy
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
floor_time() { "$work/floor" "$@" | awk '{print $(NF-4)}'; } # "...: 0.087 s (median of 3)"

if command -v strace > /dev/null; then
  opens() { # files-in-the-runs command...: openat calls on tensor files per file
    local n=$1; shift
    strace -f -qq -e trace=openat,open -o "$work/strace" "$@" > /dev/null 2>&1 || true
    awk -v n="$n" '/\.npy"/ {c++} END {printf "%.2f", c/n}' "$work/strace"
  }
  small_files=$(find "$dir/small/a" "$dir/small/b" -name '*.npy' | wc -l)
  echo "opens per file       small files $(opens "$small_files" "$gd" compare "$dir/small/a" "$dir/small/b" --format json)   1 GiB pair $(opens 2 "$gd" compare "$a" "$b" --format json)"
else
  echo "opens per file       (strace not installed: apt-get install strace)"
fi

$py "$here/recache.py" "$dir/small"
t_floor=$(floor_time files "$dir/small/a" "$dir/small/b")
t_gd=$(median3 /dev/null "$gd" compare "$dir/small/a" "$dir/small/b" --format json)
echo "small files          graphdiff ${t_gd} s   floor ${t_floor} s   graphdiff/floor $(ratio "$t_gd" "$t_floor")"

prev=""
for run in many many_1000 many_2000; do
  [ -d "$dir/$run/a" ] || { echo "pairs                $dir/$run missing: bench/make_load.py DIR 1 1000 2000"; continue; }
  pairs=$(( $(find "$dir/$run/a" -name '*.npy' | wc -l) ))
  cat "$(find "$dir/$run/a" -name '*.npy' | head -1)" > /dev/null
  t=$(median3 /dev/null "$gd" compare "$dir/$run/a" "$dir/$run/b" --format json)
  "$gd" compare "$dir/$run/a" "$dir/$run/b" --format json 2> "$work/stderr" > /dev/null || true
  advice=no; grep -q 'shards' "$work/stderr" && advice=yes
  run_peak /dev/null "$gd" compare "$dir/$run/a" "$dir/$run/b" --format json
  line="pairs $pairs    ${t} s   peak anon ${PEAK_MIB} MiB   shard advice $advice"
  if [ -n "$prev" ]; then
    line="$line   time x$(ratio "$t" "${prev% *}")   memory x$(ratio "$PEAK_MIB" "${prev#* }")"
  fi
  echo "$line"
  prev="$t $PEAK_MIB"
  last=$run
  k=$(sed -n 's/.*compare in \([0-9]*\) shards.*/\1/p' "$work/stderr")
done

if [ -n "${k:-}" ]; then # the largest run, in the shards its advice names
  worst=0; slowest=0
  for i in $(seq 1 "$k"); do
    s=$(date +%s.%N)
    run_peak /dev/null "$gd" compare "$dir/$last/a" "$dir/$last/b" --format json --shard "$i/$k" --report "json=$work/shard$i.json"
    e=$(date +%s.%N)
    worst=$(( PEAK_MIB > worst ? PEAK_MIB : worst ))
    slowest=$(awk -v s="$s" -v e="$e" -v m="$slowest" 'BEGIN{t=e-s; printf "%.3f", (t > m ? t : m)}')
  done
  echo "shards               $last in $k as advised: peak anon at most ${worst} MiB, slowest ${slowest} s"
fi

$py "$here/recache.py" --evict "$a" "$b"
s=$(date +%s.%N); "$gd" compare "$a" "$b" --format json > /dev/null || true; e=$(date +%s.%N)
t_cold=$(awk -v s="$s" -v e="$e" 'BEGIN{printf "%.3f", e-s}')
t_after=$(median3 /dev/null "$gd" compare "$a" "$b" --format json)
$py "$here/recache.py" "$a" "$b"
t_warm=$(median3 /dev/null "$gd" compare "$a" "$b" --format json)
echo "cold, then warm      cold ${t_cold} s   warm after cold ${t_after} s   warm after read(2) ${t_warm} s   after-cold/warm $(ratio "$t_after" "$t_warm")"

t_floor=$(floor_time map "$a" "$b")
t_gd=$(median3 /dev/null "$gd" compare "$a" "$b" --format json)
echo "1 GiB pair           graphdiff ${t_gd} s   floor ${t_floor} s   graphdiff/floor $(ratio "$t_gd" "$t_floor")"
