#!/usr/bin/env bash
# Cost of the wait details (WaitDetail, docs/trace-format.md tag 110) in the worst case:
# WaitPingPong (two threads hand a baton back and forth with Object.wait/notify, then
# through a SynchronousQueue: ~4 waits per round, a few µs each), recorded with agent A
# and agent B in turn (A B A B ...), RUNS pairs; prints each side's median of the
# program's own elapsed time and the median of the pairwise ratios A/B.
#   bench/wait_detail.sh AGENT_A AGENT_B [RUNS=21] [ROUNDS=50000]
#   (WEFT=path/to/weft, default target/release/weft; build AGENT_B from the commit before)
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1 B=$2 RUNS=${3:-21} ROUNDS=${4:-50000}
WEFT=${WEFT:-target/release/weft}
OUT=$(mktemp -d /tmp/weft-wait-detail.XXXXXX)
javac --release 17 -d "$OUT/classes" java/workloads/src/weft/workloads/advice/WaitPingPong.java
run() { # agent -> ms
  "$WEFT" record --agent "$1" -o "$OUT/t.weft" -- java -cp "$OUT/classes" \
    weft.workloads.advice.WaitPingPong "$ROUNDS" 2>/dev/null | sed -n 's/.*done in \([0-9]*\) ms.*/\1/p'
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
run "$A" >/dev/null; run "$B" >/dev/null # warm-up
for i in $(seq 1 "$RUNS"); do echo "$(run "$A") $(run "$B")"; done > "$OUT/pairs"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$OUT/pairs" <<'PY'
import statistics, sys
pairs = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 2]
a, b = [p[0] for p in pairs], [p[1] for p in pairs]
r = [x / y for x, y in pairs]
print(f"pairs {len(pairs)}: A median {statistics.median(a):.0f} ms, B median {statistics.median(b):.0f} ms, "
      f"A/B median {statistics.median(r):.3f} (min {min(r):.3f}, max {max(r):.3f})")
PY
