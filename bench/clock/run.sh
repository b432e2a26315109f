#!/usr/bin/env bash
# What a clock read costs inside a fork-join-sized task (BENCHMARKS.md § Fork-join,
# fourth and fifth sessions): Java's System.nanoTime and a JNI call to rdtsc (how
# weft.FjProbe reads the TSC), and in C rdtsc, lfence+rdtsc, clock_gettime.
set -euo pipefail
cd "$(dirname "$0")"
out="${BENCH_OUT:-../out}/clock"
mkdir -p "$out"
jni=()
if command -v cc >/dev/null; then
    java_home=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
    if cc -O2 -shared -fPIC -I"$java_home/include" -I"$java_home/include/linux" \
        -o "$out/libclock_jni.so" clock_jni.c; then
        jni=("$(cd "$out" && pwd)/libclock_jni.so")
    fi
fi
java ClockCost.java "${jni[@]}"
if command -v cc >/dev/null; then
    cc -O2 -o "$out/clock_cost" clock_cost.c && "$out/clock_cost"
else
    echo "run.sh: no C compiler: the C half (and the JNI column) is skipped" >&2
fi
