#!/bin/sh
# CPU cost of `weft record --live` over a long run: the CPU time of the weft
# process itself (the live view runs in it; the JVM is a separate process),
# sampled every STEP seconds from /proc/<pid>/stat (utime + stime).
#
#   bench/live/live-cost.sh [WEFT=target/release/weft] [SECONDS=600] [STEP=10]
#
# Prints one line per step: elapsed s, weft CPU ms in that step, ms per second,
# trace size; then the mean of the first and of the last 6 steps.
set -eu
WEFT=${1:-target/release/weft}
SECS=${2:-600}
STEP=${3:-10}
DIR=$(mktemp -d)
javac -d "$DIR" "$(dirname "$0")/LiveLong.java"
TICK=$(getconf CLK_TCK)
"$WEFT" record -o "$DIR/live.weft" --live -- java -cp "$DIR" LiveLong "$SECS" 2>"$DIR/live.err" &
PID=$!
cpu() { awk '{print $14 + $15}' "/proc/$PID/stat" 2>/dev/null || echo; }
prev=$(cpu); t=0
while kill -0 "$PID" 2>/dev/null; do
  sleep "$STEP"; t=$((t + STEP))
  now=$(cpu); [ -z "$now" ] && break
  size=$(stat -c %s "$DIR/live.weft" 2>/dev/null || echo 0)
  echo "$t $(( (now - prev) * 1000 / TICK )) $size" | awk -v s="$STEP" '{printf "%5d s  %6d ms  %7.1f ms/s  trace %6.1f MB\n", $1, $2, $2/s, $3/1e6}'
  prev=$now
done | tee "$DIR/steps.txt"
wait "$PID" || true
awk '{v[NR]=$5} END {n=NR; if (n<12) {print "too few steps"; exit}
  a=0; for(i=1;i<=6;i++) a+=v[i]; b=0; for(i=n-6;i<n;i++) b+=v[i];
  printf "first 6 steps: %.1f ms/s, last 6 steps (before the final one): %.1f ms/s\n", a/6, b/6}' "$DIR/steps.txt"
echo "live lines: $(grep -c 'CSP' "$DIR/live.err" || true); files in $DIR"
