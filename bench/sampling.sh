#!/usr/bin/env bash
# Overhead of the stack sampler (docs/sampling.md): `weft record` with sampling
# (A: the default cpu=10ms,wall=50ms, or --sample SPEC) against `weft record
# --no-sample` (B: the recording without it), interleaved (A B, B A, ...), the
# whole process timed (wall seconds, time.monotonic around the child).
# Prints per workload the median ratio A/B of wall and of CPU time (user + system
# of the child processes) with min/max, and their geometric means.
#
# Usage: bench/sampling.sh [--runs N] [--sample SPEC] [WORKLOAD ...]
#   WORKLOAD: "Class args" of weft.workloads, or "fj.Class args" of the fork-join suite.
#   Default: ExecutorBench 100000 20 (100,000 tasks of 20 us) and the fork-join
#   suite's benchmark sizes of bench/forkjoin.sh.
# Env: WEFT=path/to/weft (default target/release/weft), JAVA=java, BENCH_OUT=dir.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
runs=9
sample="cpu=10ms,wall=50ms"
workloads=()
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --sample) sample="$2"; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        -*) echo "sampling.sh: unknown option $1" >&2; exit 2 ;;
        *) workloads+=("$1"); shift ;;
    esac
done
[ ${#workloads[@]} -eq 0 ] && workloads=("ExecutorBench 100000 20"
    "fj.FjKmeans 200000 1000 - 16 400" "fj.Fft 20 16 - 16" "fj.DoAll 4000000 1024 - 200"
    "fj.Heat 1024 4 - 1000" "fj.Integrate 2000 9 - 8 60" "fj.Lud 2560 1 - 32"
    "fj.MatrixMult 2048 16" "fj.MergeSort 16000000 8192" "fj.QuickSort 24000000 2048"
    "fj.Pi 800000000 2500" "fj.Fibonacci 44 16" "fj.NBody 2500 64 - 100")
weft="${WEFT:-$root/target/release/weft}"
[ -x "$weft" ] || { echo "sampling.sh: $weft not found (cargo build --release)" >&2; exit 2; }
out="${BENCH_OUT:-$root/bench/out}/sampling"
mkdir -p "$out/classes"
javac --release 17 -d "$out/classes" $(find "$root/java/workloads/src" -name '*.java')

exec python3 - "$out" "$runs" "$weft" "${JAVA:-java}" "$sample" "${workloads[@]}" <<'PY'
import math, os, resource, statistics, subprocess, sys, time
out, runs, weft, java, sample = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
trace = os.path.join(out, "bench.weft")
env = {k: v for k, v in os.environ.items() if k != "JAVA_TOOL_OPTIONS"}

def timed(argv):
    """Wall seconds and CPU seconds (user + system of the waited-for children) of one run."""
    if os.path.exists(trace):
        os.remove(trace)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    dt = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"sampling.sh: {' '.join(argv)} exited {r.returncode}")
    return dt, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

logs, cpu_logs = [], []
print(f"| workload | pairs | with sampling (s, median) | without (s, median) | wall ratio median | min | max | CPU ratio median | min | max |")
print("|---|---|---|---|---|---|---|---|---|---|")
for w in sys.argv[6:]:
    cls, *args = w.split()
    jargv = [java, "-cp", os.path.join(out, "classes"), f"weft.workloads.{cls}", *args]
    a_argv = [weft, "record", "-o", trace, "--sample", sample, "--", *jargv]
    b_argv = [weft, "record", "-o", trace, "--no-sample", "--", *jargv]
    timed(a_argv); timed(b_argv)  # warm-up pair
    a, b, ratios, cpu_ratios = [], [], [], []
    for i in range(runs):
        # Alternate the order in each pair (A B, B A, ...): a drift of the
        # machine's speed within a pair then favours neither side.
        if i % 2 == 0:
            (ta, ca), (tb, cb) = timed(a_argv), timed(b_argv)
        else:
            (tb, cb), (ta, ca) = timed(b_argv), timed(a_argv)
        a.append(ta); b.append(tb); ratios.append(ta / tb); cpu_ratios.append(ca / cb)
        print(f"{w}: pair {i + 1}/{runs}: wall {ta:.3f} / {tb:.3f}, cpu {ca:.3f} / {cb:.3f}", file=sys.stderr)
    med = statistics.median(ratios)
    cmed = statistics.median(cpu_ratios)
    logs.append(math.log(med))
    cpu_logs.append(math.log(cmed))
    print(f"| {w} | {runs} | {statistics.median(a):.3f} | {statistics.median(b):.3f} | {med:.3f} | {min(ratios):.3f} | {max(ratios):.3f} | {cmed:.3f} | {min(cpu_ratios):.3f} | {max(cpu_ratios):.3f} |")
print(f"\ngeometric mean of the median ratios: wall {math.exp(sum(logs) / len(logs)):.3f}, CPU {math.exp(sum(cpu_logs) / len(cpu_logs)):.3f} ({len(logs)} workloads, sample {sample})")
PY
