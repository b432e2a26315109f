#!/usr/bin/env bash
# Per-method CPU shares of weft's sampler and of async-profiler on the same
# programs (java/workloads weft.sampling.Splits: steady 60/30/10 work, and fixed
# 20 ms rounds of 12/6/2 ms), against the threads' own CPU clocks (the truth the
# program prints). Both at the same CPU period (INTERVAL_MS, default 10: both
# tools' default); RUNS runs each of MILLIS ms.
#
# Usage: bench/sampling-vs-async-profiler.sh ASYNC_PROFILER_LIB [RUNS] [MILLIS] [INTERVAL_MS]
#   ASYNC_PROFILER_LIB: libasyncProfiler.so built from source
#   (git clone https://github.com/async-profiler/async-profiler; make).
# Env: WEFT=path/to/weft (default target/release/weft), JAVA=java, BENCH_OUT=dir.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
ap="${1:?usage: $0 ASYNC_PROFILER_LIB [RUNS] [MILLIS]}"
runs="${2:-3}"
millis="${3:-4000}"
iv="${4:-10}"
weft="${WEFT:-$root/target/release/weft}"
java="${JAVA:-java}"
out="${BENCH_OUT:-$root/bench/out}/vs-ap"
mkdir -p "$out/classes"
javac --release 17 -d "$out/classes" $(find "$root/java/workloads/src" -name '*.java')

shares() { # collapsed file -> "a b g" shares of alpha/beta/gamma (stacks through the method)
    python3 - "$1" <<'PY'
import sys
n = {"alpha": 0, "beta": 0, "gamma": 0}
for line in open(sys.argv[1]):
    stack, _, count = line.rstrip("\n").rpartition(" ")
    frames = [f.split(":")[0].replace("/", ".").removesuffix("_[j]").removesuffix("_[i]") for f in stack.split(";")]
    for m in n:
        if any(f in (f"weft.sampling.Splits.{m}", f"weft.sampling.Splits.{m}For") for f in frames):
            n[m] += int(count)
t = sum(n.values()) or 1
print(" ".join(f"{n[m] / t:.3f}" for m in n), sum(n.values()))
PY
}
truth() { # program stdout -> shares
    python3 -c '
import sys
kv = dict(x.split("=") for x in sys.stdin.read().split("SPLITS-TRUTH ")[1].split())
v = [int(kv[m]) for m in ("alpha", "beta", "gamma")]
print(" ".join(f"{x / sum(v):.3f}" for x in v))'
}
echo "CPU period ${iv} ms, ${millis} ms runs"
echo "| program | run | truth a/b/g | weft a/b/g (samples) | async-profiler a/b/g (samples) |"
echo "|---|---|---|---|---|"
for mode in steady periodic; do
    for i in $(seq 1 "$runs"); do
        t="$out/w.weft"; rm -f "$t"
        wt=$(env -u JAVA_TOOL_OPTIONS "$weft" record -o "$t" --sample cpu=${iv}ms,wall=off -- \
            "$java" -cp "$out/classes" weft.sampling.Splits "$mode" "$millis" 2>/dev/null | truth)
        "$weft" export "$t" --profile cpu --collapsed "$out/w.collapsed" 2>/dev/null
        ws=$(shares "$out/w.collapsed")
        at=$(env -u JAVA_TOOL_OPTIONS "$java" \
            "-agentpath:$ap=start,event=cpu,interval=${iv}ms,collapsed,file=$out/ap.collapsed" \
            -cp "$out/classes" weft.sampling.Splits "$mode" "$millis" 2>/dev/null | truth)
        as=$(shares "$out/ap.collapsed")
        echo "| $mode | $i | $wt (weft run) / $at (a-p run) | $ws | $as |"
    done
done
