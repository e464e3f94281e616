# Sourced by measure.sh, load.sh and jobs.sh.
#
# median3 OUT COMMAND...: runs COMMAND 3 times with stdout to OUT and
# stderr dropped, and prints the median wall time in seconds (COMMAND's
# exit status is ignored: a difference is exit 1).
median3() {
  local out=$1 i s e
  shift
  for i in 1 2 3; do
    s=$(date +%s.%N); "$@" > "$out" 2>/dev/null || true; e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN{printf "%.3f\n", e-s}'
  done | sort -n | sed -n 2p
}

# run_peak OUT COMMAND...: runs COMMAND with stdout to OUT and stderr
# dropped, sampling its resident anonymous memory (RssAnon in
# /proc/PID/status; file-backed mapped pages are not counted) every 10 ms.
# Sets PEAK_MIB (rounded) and STATUS (COMMAND's exit status).
run_peak() {
  local out=$1 pid kb peak=0
  shift
  "$@" > "$out" 2>/dev/null & pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    kb=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    [ -n "$kb" ] && [ "$kb" -gt "$peak" ] && peak=$kb
    sleep 0.01
  done
  STATUS=0
  wait "$pid" || STATUS=$?
  PEAK_MIB=$(awk -v k="$peak" 'BEGIN{printf "%.0f", k/1024}')
}
