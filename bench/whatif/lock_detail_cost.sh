#!/usr/bin/env bash
# Cost of `weft record --lock-detail` (docs/whatif.md §Recording: lock detail): the same
# recording with (A) and without (B) the monitor probes, alternated A B A B ... after one
# warm-up pair; whole-process CPU (user + sys of the finished children) and wall, medians
# and the median of the pairwise A/B ratios. Two uncontended workloads of two threads, each
# with its own monitor: ~2 µs of work per acquisition, and none (the worst case).
#   bench/whatif/lock_detail_cost.sh [PAIRS]      (WEFT=path/to/weft, default target/release/weft)
set -euo pipefail
cd "$(dirname "$0")/../.."
PAIRS=${1:-7}
WEFT=${WEFT:-target/release/weft}
OUT=${OUT:-$(mktemp -d /tmp/weft-lock-detail.XXXXXX)}
javac --release 17 -d "$OUT/classes" java/workloads/src/weft/workloads/whatif/WhatIfBench.java
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
python3 - "$PAIRS" "$WEFT" "$OUT" <<'PY'
import os, resource, statistics, subprocess, sys, time
pairs, weft, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
java = ["java", "-XX:CompileCommand=quiet",
        "-XX:CompileCommand=dontinline,weft.workloads.whatif.WhatIfBench::burn",
        "-cp", f"{out}/classes", "weft.workloads.whatif.WhatIfBench"]
cases = {
    "2 threads x 100,000 acquisitions, ~2 us of work each":
        ["lock", "threads=2", "iters=100000", "inside=200", "outside=2000", "lock=none"],
    "2 threads x 1,000,000 acquisitions, no work (worst case)":
        ["lock", "threads=2", "iters=1000000", "inside=1", "outside=1", "lock=none"],
}
def run(flags, args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run([weft, "record", *flags, "-o", f"{out}/t.weft", "--", *java, *args],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall
for name, args in cases.items():
    run(["--lock-detail"], args); run([], args)
    a, b = [], []
    for _ in range(pairs):
        a.append(run(["--lock-detail"], args)); b.append(run([], args))
    med = statistics.median
    cpu_r = [x[0] / y[0] for x, y in zip(a, b)]
    wall_r = [x[1] / y[1] for x, y in zip(a, b)]
    print(f"{name}: A cpu {med(x[0] for x in a):.3f} s, B cpu {med(x[0] for x in b):.3f} s, "
          f"A/B cpu {med(cpu_r):.3f} ({min(cpu_r):.3f}-{max(cpu_r):.3f}), "
          f"A/B wall {med(wall_r):.3f} ({min(wall_r):.3f}-{max(wall_r):.3f}), {pairs} pairs")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
