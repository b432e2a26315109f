#!/usr/bin/env bash
# Per-task cost of recording executor tasks and virtual threads, robust to a loaded
# machine (BENCHMARKS.md, "Session 12: executor and virtual-thread per-task cost"):
# TaskCost (ns per task, best batch of many) run plainly and under
# `weft record --no-sample` with each given build, alternated ROUNDS times.
# Usage: bench/task_cost/run.sh [ROUNDS] [SHAPES] [WEFT ...]
#   SHAPES: pool,submit,vt (default; vt needs JDK 21+); WEFT: weft binaries, each with
#   its libweft_agent.so beside it (default target/release/weft).
# Env: JAVA=java, BENCH_OUT=dir.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-3}"; shapes="${2:-pool,submit,vt}"; shift $(( $# < 2 ? $# : 2 ))
[ $# -gt 0 ] || set -- "$PWD/target/release/weft"
java="${JAVA:-java}"
out="${BENCH_OUT:-bench/out}/task_cost"; mkdir -p "$out/classes"
javac --release 17 -d "$out/classes" bench/task_cost/TaskCost.java
for r in $(seq "$rounds"); do
    echo "plain  $("$java" -cp "$out/classes" TaskCost 300 "$shapes")"
    for weft in "$@"; do
        [ -x "$weft" ] || { echo "run.sh: $weft not found" >&2; exit 2; }
        echo "$weft  $("$weft" record --no-sample -o "$out/t.weft" -- "$java" -cp "$out/classes" TaskCost 300 "$shapes" 2>/dev/null)"
    done
done
