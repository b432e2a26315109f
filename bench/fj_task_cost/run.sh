#!/usr/bin/env bash
# Per-task cost of the fork-join recording, robust to a loaded machine (BENCHMARKS.md,
# "Session 11: the fork-join hooks' per-task cost"): TaskCost (ns per task, best of 250
# invokes) run plainly and under `weft record --no-sample`, alternated ROUNDS times.
# Usage: bench/fj_task_cost/run.sh [ROUNDS] [PARALLELISM]
# Env: WEFT=weft binary (default target/release/weft; its libweft_agent.so must be
#      beside it), JAVA=java, BENCH_OUT=dir, WEFT_RECORD_OPTS (extra record options).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-3}"; par="${2:-1}"
weft="${WEFT:-$PWD/target/release/weft}"; java="${JAVA:-java}"
[ -x "$weft" ] || { echo "run.sh: $weft not found (cargo build --release, or WEFT=...)" >&2; exit 2; }
out="${BENCH_OUT:-bench/out}/fj_task_cost"; mkdir -p "$out/classes"
javac --release 17 -d "$out/classes" bench/fj_task_cost/TaskCost.java
for r in $(seq "$rounds"); do
    echo "plain     $("$java" -cp "$out/classes" TaskCost "$par")"
    # shellcheck disable=SC2086
    echo "recorded  $("$weft" record --no-sample ${WEFT_RECORD_OPTS:-} -o "$out/t.weft" -- "$java" -cp "$out/classes" TaskCost "$par" 2>/dev/null)"
done
