#!/usr/bin/env bash
# Report time and memory on a large fork-join trace (issue 14): records Fibonacci
# 47 16 once (3,524,578 fork-join tasks, ~113 MB trace), runs the program plain
# once for comparison, then `weft report --json` on the trace N times, each with
# its wall time, CPU time (user + sys) and peak RSS (/usr/bin/time), and the
# report's own per-stage figures (WEFT_REPORT_STAGES=1: model build, each
# analysis, JSON) from which the build's events per second and the model's
# bytes per task execution are computed.
#
# Usage: bench/report_speed.sh [--runs N] [--args "47 16"] [--base WEFT]
#   --base WEFT   also time another weft binary (e.g. main's) on the same trace,
#                 interleaved run by run with this one (A/B on a shared machine)
# Env: WEFT=path/to/weft (default target/release/weft), JAVA=java, BENCH_OUT=dir.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
runs=3
args="47 16"
base=""
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --args) args="$2"; shift 2 ;;
        --base) base="$2"; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "report_speed.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
weft="${WEFT:-$root/target/release/weft}"
java="${JAVA:-java}"
[ -x "$weft" ] || { echo "report_speed.sh: $weft not found (cargo build --release)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "report_speed.sh: needs /usr/bin/time (GNU time)" >&2; exit 2; }
out="${BENCH_OUT:-$root/bench/out}/report_speed"
mkdir -p "$out/classes"
javac --release 17 -d "$out/classes" $(find "$root/java/workloads/src/weft/workloads/fj" -name '*.java')
trace="$out/fib-${args// /-}.weft"
if [ ! -s "$trace" ]; then
    echo "recording Fibonacci $args -> $trace" >&2
    "$weft" record -o "$trace" -- "$java" -cp "$out/classes" weft.workloads.fj.Fibonacci $args >/dev/null
fi
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "java: $("$java" -version 2>&1 | head -1)"
echo "trace: $trace ($(stat -L -c %s "$trace") bytes)"
/usr/bin/time -f "plain program: %e s wall, %U s user + %S s sys" "$java" -cp "$out/classes" weft.workloads.fj.Fibonacci $args >/dev/null 2>"$out/plain.time"
tail -1 "$out/plain.time"
one() { # label binary
    local t="$out/run.time" s="$out/run.stages"
    WEFT_REPORT_STAGES=1 /usr/bin/time -o "$t" -f "%e %U %S %M" "$2" report "$trace" --json >"$out/$1.json" 2>"$s"
    read -r wall user sys rss <"$t"
    local events tasks model_cpu
    events=$(awk '/model:.*events/ {print $3}' "$s")
    model_cpu=$(awk '/stage model/ {print $7}' "$s")
    tasks=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['forkjoin']['tasks'])" "$out/$1.json")
    printf "%-6s wall %6.2f s  cpu %6.2f s  peak RSS %5.0f MB" "$1" "$wall" "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
    if [ -n "$events" ]; then
        printf "  build: %s events, %.2f s CPU, %.1f M events/s; peak %.0f B per task" "$events" "$model_cpu" \
            "$(echo "$events / $model_cpu / 1000000" | bc -l)" "$(echo "$rss * 1024 / $tasks" | bc -l)"
    fi
    echo
    grep "stage" "$s" | sed 's/^/         /' || true
}
for i in $(seq 1 "$runs"); do
    if [ -n "$base" ] && [ $((i % 2)) = 0 ]; then one base "$base"; fi
    one this "$weft"
    if [ -n "$base" ] && [ $((i % 2)) = 1 ]; then one base "$base"; fi
done
if [ -n "$base" ] && ! cmp -s "$out/this.json" "$out/base.json"; then
    echo "NOTE: the two binaries' JSON reports differ" >&2
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
