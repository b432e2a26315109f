#!/usr/bin/env bash
# What a clock read costs inside a fork-join-sized task (BENCHMARKS.md § Fork-join,
# fourth session): Java's System.nanoTime, and in C rdtsc, lfence+rdtsc, clock_gettime.
set -euo pipefail
cd "$(dirname "$0")"
out="${BENCH_OUT:-../out}/clock"
mkdir -p "$out"
java ClockCost.java
if command -v cc >/dev/null; then
    cc -O2 -o "$out/clock_cost" clock_cost.c && "$out/clock_cost"
else
    echo "run.sh: no C compiler: the C half is skipped" >&2
fi
