#!/usr/bin/env bash
# Overhead of weft's sampler and of async-profiler, side by side, on the same
# programs: each configuration's whole-process wall and CPU time (user + system
# of the child, from getrusage) against its own baseline, in rounds that run every
# configuration once in turn (so a drift of the machine's speed hits all alike).
#
#   async-profiler: java -agentpath:LIB=start,event=cpu,interval=I  vs  plain java
#   weft:           weft record --sample cpu=I,wall=off              vs  weft record --no-sample
#                   weft record (the default cpu=10ms,wall=50ms)     vs  weft record --no-sample
# at I = 10 ms (both tools' default CPU period) and 1 ms (1 kHz). weft's baseline
# is its own recording without sampling: the figure is what sampling adds.
#
# Usage: bench/sampling-overhead-vs-async-profiler.sh ASYNC_PROFILER_LIB [--rounds N] [WORKLOAD ...]
#   ASYNC_PROFILER_LIB: libasyncProfiler.so built from source
#   (git clone https://github.com/async-profiler/async-profiler; make).
#   WORKLOAD: "Class args" of weft.workloads, or "fj.Class args" of the fork-join
#   suite. Default: ExecutorBench 100000 20 and fj.Fibonacci 44 16.
# Env: WEFT=path/to/weft (default target/release/weft), JAVA=java, BENCH_OUT=dir.
# Prints a markdown table: medians over the rounds of each configuration's time
# and of the per-round ratio to its baseline (min-max of the ratio).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
ap="${1:?usage: $0 ASYNC_PROFILER_LIB [--rounds N] [WORKLOAD ...]}"
shift
rounds=9
workloads=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) echo "sampling-overhead-vs-async-profiler.sh: unknown option $1" >&2; exit 2 ;;
        *) workloads+=("$1"); shift ;;
    esac
done
[ ${#workloads[@]} -eq 0 ] && workloads=("ExecutorBench 100000 20" "fj.Fibonacci 44 16")
[ -f "$ap" ] || { echo "sampling-overhead-vs-async-profiler.sh: $ap not found" >&2; exit 2; }
weft="${WEFT:-$root/target/release/weft}"
[ -x "$weft" ] || { echo "sampling-overhead-vs-async-profiler.sh: $weft not found (cargo build --release)" >&2; exit 2; }
out="${BENCH_OUT:-$root/bench/out}/overhead-vs-ap"
mkdir -p "$out/classes"
javac --release 17 -d "$out/classes" $(find "$root/java/workloads/src" -name '*.java')

exec python3 - "$out" "$rounds" "$weft" "${JAVA:-java}" "$ap" "${workloads[@]}" <<'PY'
import os, resource, statistics, subprocess, sys, time
out, rounds, weft, java, ap = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
env = {k: v for k, v in os.environ.items() if k != "JAVA_TOOL_OPTIONS"}
trace = os.path.join(out, "run.weft")

def timed(argv):
    """Wall seconds and CPU seconds (user + system of the waited-for children) of one run."""
    for f in (trace, os.path.join(out, "ap.collapsed")):
        if os.path.exists(f):
            os.remove(f)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"exited {r.returncode}: {' '.join(argv)}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu

print("| workload | configuration | baseline | rounds | wall s | cpu s | wall ratio (min-max) | cpu ratio (min-max) |")
print("|---|---|---|---|---|---|---|---|")
for w in sys.argv[6:]:
    cls, *args = w.split()
    jargv = ["-cp", os.path.join(out, "classes"), f"weft.workloads.{cls}", *args]
    def apc(iv):
        return [java, f"-agentpath:{ap}=start,event=cpu,interval={iv},collapsed,file={out}/ap.collapsed", *jargv]
    def weftc(*opts):
        return [weft, "record", "-o", trace, *opts, "--", java, *jargv]
    configs = {
        "plain java": [java, *jargv],
        "async-profiler cpu 10ms": apc("10ms"),
        "async-profiler cpu 1ms": apc("1ms"),
        "weft --no-sample": weftc("--no-sample"),
        "weft cpu=10ms,wall=off": weftc("--sample", "cpu=10ms,wall=off"),
        "weft cpu=1ms,wall=off": weftc("--sample", "cpu=1ms,wall=off"),
        "weft default (cpu=10ms,wall=50ms)": weftc(),
    }
    base = {k: ("plain java" if k.startswith("async") else "weft --no-sample") for k in configs}
    for argv in configs.values():  # one warm-up round
        timed(argv)
    times = {k: [] for k in configs}
    for i in range(rounds):
        for k, argv in configs.items():
            times[k].append(timed(argv))
        print(f"{w}: round {i + 1}/{rounds}", file=sys.stderr)
    for k in configs:
        if k in ("plain java", "weft --no-sample"):
            continue
        b = base[k]
        wr = [a[0] / c[0] for a, c in zip(times[k], times[b])]
        cr = [a[1] / c[1] for a, c in zip(times[k], times[b])]
        print(f"| {w} | {k} | {b} | {rounds} | {statistics.median(t[0] for t in times[k]):.3f} "
              f"| {statistics.median(t[1] for t in times[k]):.3f} "
              f"| {statistics.median(wr):.3f} ({min(wr):.3f}-{max(wr):.3f}) "
              f"| {statistics.median(cr):.3f} ({min(cr):.3f}-{max(cr):.3f}) |")
    for b in ("plain java", "weft --no-sample"):
        print(f"| {w} | {b} | - | {rounds} | {statistics.median(t[0] for t in times[b]):.3f} "
              f"| {statistics.median(t[1] for t in times[b]):.3f} | | |")
PY
