#!/usr/bin/env bash
# Overhead benchmark: plain `java` (A) against `weft record -- java` (B).
#
# Usage: bench/overhead.sh [--runs N] [--quick] [--plain-only] [WORKLOAD ...]
#   WORKLOAD is "Class arg ..." of java/workloads (package weft.workloads), e.g.
#   "ExecutorBench 100000 20". Default: ExecutorBench 100000 20 (100,000 tasks
#   of ~20 us), ExecutorBench 20000 100, Nested 2000 50 2, ForkJoin 300 50 256,
#   plus JVM start-up (Hello) always.
#   --runs N      A/B pairs per workload after one warm-up pair (default 7, min 5)
#   --quick       tiny sizes and 5 runs: checks that the harness works, numbers meaningless
#   --plain-only  run only the A side (when weft is not built yet)
# Env: WEFT=path/to/weft (default: target/release/weft, built by `cargo build --release`),
#      JAVA=java, JAVA_OPTS="..." (extra JVM flags for both sides), BENCH_OUT=dir (default bench/out).
# Prints a markdown table for BENCHMARKS.md on stdout; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

runs=7
quick=0
plain_only=0
workloads=()
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --quick) quick=1; shift ;;
        --plain-only) plain_only=1; shift ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        -*) echo "overhead.sh: unknown option $1" >&2; exit 2 ;;
        *) workloads+=("$1"); shift ;;
    esac
done
if [ "$quick" = 1 ]; then
    runs=5
    [ ${#workloads[@]} -eq 0 ] && workloads=("ExecutorBench 2000 20" "Nested 50 50 2")
fi
[ ${#workloads[@]} -eq 0 ] && workloads=("ExecutorBench 100000 20" "ExecutorBench 20000 100" "Nested 2000 50 2" "ForkJoin 300 50 256")
if [ "$runs" -lt 5 ]; then echo "overhead.sh: --runs must be at least 5" >&2; exit 2; fi

weft="${WEFT:-$root/target/release/weft}"
if [ "$plain_only" = 0 ] && [ ! -x "$weft" ]; then
    echo "overhead.sh: $weft not found: run 'cargo build --release' (or set WEFT=..., or use --plain-only)" >&2
    exit 2
fi

out="${BENCH_OUT:-$root/bench/out}"
mkdir -p "$out/classes"
javac --release 17 -d "$out/classes" $(find "$root/java/workloads/src" -name '*.java')

exec python3 "$root/bench/overhead.py" --out "$out" --runs "$runs" --weft "$weft" \
    --plain-only "$plain_only" --java "${JAVA:-java}" --java-opts "${JAVA_OPTS:-}" -- "${workloads[@]}"
