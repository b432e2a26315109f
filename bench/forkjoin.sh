#!/usr/bin/env bash
# Fork-join overhead benchmark (issue 3, docs/forkjoin.md): plain `java` (A) against
# `weft record -- java` (B) on the 12 wosp workloads of java/workloads/.../fj.
#
# Usage: bench/forkjoin.sh [--runs N] [--quick | --test-sizes] [WORKLOAD ...]
#   WORKLOAD is "Class arg ..." of weft.workloads.fj, e.g. "Fibonacci 40 12".
#   Default: the 12 workloads at benchmark sizes (1-4 s each, listed below), which
#   include Fibonacci 44 16 (832,040 tasks).
#   --test-sizes  the 12 workloads at their default sizes instead (README of the
#              suite: 0.15-0.5 s each, Fibonacci 40 12 = 832,040 finer tasks)
#   --runs N   A/B pairs per workload after one warm-up pair (default 7, min 5)
#   --quick    small sizes, 5 runs: checks the harness, numbers meaningless
# Env: WEFT=path/to/weft (default target/release/weft), JAVA=java, BENCH_OUT=dir,
#      WEFT_RECORD_OPTS="--no-sample" (extra `weft record` options for B).
#
# Runs alternate in pairs A B, B A, A B… For each side: median wall time and median
# CPU time (user + sys of the whole process tree, from getrusage of the child).
# Prints a markdown table (ratio of medians, ns added per task = (B − A) / tasks,
# for wall and CPU), the geometric mean of the wall ratios over the workloads with
# a 95% bootstrap interval (runs resampled per side and workload), and the load
# averages before and after (the machine may be shared). Progress goes to stderr.
# A last column gives the ratio of the fastest run of each side (noise on a shared
# VM only adds time), with its geometric mean: a second view, not the headline.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

runs=7
quick=0
test_sizes=0
workloads=()
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --quick) quick=1; shift ;;
        --test-sizes) test_sizes=1; shift ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        -*) echo "forkjoin.sh: unknown option $1" >&2; exit 2 ;;
        *) workloads+=("$1"); shift ;;
    esac
done
if [ "$runs" -lt 5 ]; then echo "forkjoin.sh: --runs must be at least 5" >&2; exit 2; fi
if [ ${#workloads[@]} -eq 0 ]; then
    if [ "$quick" = 1 ]; then
        runs=5
        workloads=("Fibonacci 27 12" "MergeSort 200000 8192" "Pi 1000000 2500")
    elif [ "$test_sizes" = 1 ]; then
        workloads=("FjKmeans" "Fft" "DoAll" "Heat" "Integrate" "Lud" "MatrixMult"
                   "MergeSort" "QuickSort" "Pi" "Fibonacci 40 12" "NBody")
    else
        # Benchmark sizes: each runs 1-4 s plain on the 2-CPU VM (the suites wosp was
        # measured on run for seconds), mostly by more repetitions of the same tasks
        # than the test sizes, which run 0.15-0.5 s and are mostly JVM start-up and
        # JIT warm-up. Fibonacci keeps ~800,000 tasks (F(30) = 832,040) with a higher
        # cutoff: leaves of fib(16) instead of fib(12).
        workloads=("FjKmeans 200000 1000 - 16 400" "Fft 20 16 - 16" "DoAll 4000000 1024 - 200"
                   "Heat 1024 4 - 1000" "Integrate 2000 9 - 8 60" "Lud 2560 1 - 32"
                   "MatrixMult 2048 16" "MergeSort 16000000 8192" "QuickSort 24000000 2048"
                   "Pi 800000000 2500" "Fibonacci 44 16" "NBody 2500 64 - 100")
    fi
fi

weft="${WEFT:-$root/target/release/weft}"
[ -x "$weft" ] || { echo "forkjoin.sh: $weft not found (cargo build --release, or WEFT=...)" >&2; exit 2; }
out="${BENCH_OUT:-$root/bench/out}/forkjoin"
mkdir -p "$out/classes"
javac --release 17 -d "$out/classes" $(find "$root/java/workloads/src/weft/workloads/fj" -name '*.java')

exec python3 - "$out" "$runs" "$weft" "${JAVA:-java}" "${workloads[@]}" <<'PY'
import json, math, os, random, resource, statistics, subprocess, sys, time

out, runs, weft, java = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
workloads = sys.argv[5:]
cp = os.path.join(out, "classes")
trace = os.path.join(out, "bench.weft")

def run(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(argv)}\n{p.stderr}")
    return wall, cpu, p.stdout

def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])

record_opts = os.environ.get("WEFT_RECORD_OPTS", "").split()
print(f"load average before: {load()}", file=sys.stderr)
rows, ratios, min_ratios, samples = [], [], [], []
load_before = load()
for w in workloads:
    cls, *args = w.split()
    a_argv = [java, "-cp", cp, f"weft.workloads.fj.{cls}", *args]
    b_argv = [weft, "record", *record_opts, "-o", trace, "--", *a_argv]
    tasks = None
    sa, sb = [], []
    for i in range(runs + 1):
        # A then B in even pairs, B then A in odd ones: a drift of the machine's
        # speed within a pair does not always favour the same side.
        def side_a():
            return run(a_argv)
        def side_b():
            if os.path.exists(trace):
                os.remove(trace)
            return run(b_argv)
        if i % 2 == 0:
            (wa, ca, so), (wb, cb, _) = side_a(), side_b()
        else:
            (wb, cb, _), (wa, ca, so) = side_b(), side_a()
        if tasks is None:
            line = next(l for l in so.splitlines() if l.startswith("WEFT-TRUTH "))
            truth = json.loads(line[len("WEFT-TRUTH "):])
            fj = truth.get("forkjoin", {})
            tasks = fj.get("tasks") or 0
            eff = truth.get("args")
        if i > 0:  # the first pair warms the page cache and the JIT's disk files
            sa.append((wa, ca)); sb.append((wb, cb))
        print(f"  {cls} {i}/{runs}: A {wa:.3f}s/{ca:.3f}s cpu  B {wb:.3f}s/{cb:.3f}s cpu",
              file=sys.stderr)
    samples.append(([x[0] for x in sa], [x[0] for x in sb]))
    ma = statistics.median(x[0] for x in sa); mb = statistics.median(x[0] for x in sb)
    ca = statistics.median(x[1] for x in sa); cb = statistics.median(x[1] for x in sb)
    r = mb / ma
    ratios.append(r)
    # Also the ratio of the fastest runs: on a shared VM noise only adds time, so
    # the minimum is the least disturbed run of each side (a second view, not the
    # headline figure, which is the ratio of medians).
    rmin = min(x[0] for x in sb) / min(x[0] for x in sa)
    min_ratios.append(rmin)
    per = lambda d: f"{d / tasks * 1e9:.0f}" if tasks else "-"
    rows.append(f"| {cls} {' '.join(map(str, eff or args))} | {tasks:,} | {ma:.3f} | {mb:.3f} | "
                f"{r:.3f} | {per(mb - ma)} | {ca:.3f} | {cb:.3f} | {cb / ca:.3f} | {per(cb - ca)} | {rmin:.3f} |")
geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))

# 95% bootstrap interval of the geometric mean: resample each side's runs of each
# workload with replacement, recompute the ratios of medians and their geometric
# mean; fixed seed, so the same runs give the same interval.
rng = random.Random(1)
def resampled_geo():
    logs = []
    for a, b in samples:
        ra = statistics.median(rng.choices(a, k=len(a)))
        rb = statistics.median(rng.choices(b, k=len(b)))
        logs.append(math.log(rb / ra))
    return math.exp(sum(logs) / len(logs))
boot = sorted(resampled_geo() for _ in range(2000))
lo, hi = boot[int(0.025 * len(boot))], boot[int(0.975 * len(boot)) - 1]
geo_min = math.exp(sum(math.log(r) for r in min_ratios) / len(min_ratios))
print(f"load average: before {load_before}, after {load()}; {runs} interleaved A/B pairs after 1 warm-up pair, medians")
print()
print("| workload (args) | tasks | A wall s | B wall s | wall ratio | ns/task (wall) | A cpu s | B cpu s | cpu ratio | ns/task (cpu) | min-run ratio |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(r)
print()
print(f"geometric mean of the wall ratios over {len(ratios)} workloads: {geo:.3f} "
      f"(95% bootstrap interval {lo:.3f}-{hi:.3f}; of the min-run ratios: {geo_min:.3f})")
PY
