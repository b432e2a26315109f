#!/usr/bin/env bash
# Lock-profiling overhead (issue 4, docs/locks.md): LockHeavyBench and NoContentionBench,
# plain vs `weft record` vs JFR (default.jfc with jdk.JavaMonitorEnter, jdk.JavaMonitorWait and
# jdk.ThreadPark at threshold 0), interleaved A/B/C, RUNS runs each, medians of the program's own
# elapsed time (truth=0: no per-acquisition timing). Also counts what each profiler recorded.
#   bench/locks.sh [RUNS]          (WEFT=path/to/weft, default target/release/weft)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
WEFT=${WEFT:-target/release/weft}
OUT=$(mktemp -d /tmp/weft-locks-bench.XXXXXX)
javac --release 17 -d "$OUT/classes" $(find java/workloads/src/weft/workloads/locks -name '*.java')
JAVA_HOME=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}
python3 - "$JAVA_HOME/lib/jfr/default.jfc" "$OUT/locks.jfc" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
for ev in ["jdk.JavaMonitorEnter", "jdk.JavaMonitorWait", "jdk.ThreadPark"]:
    def fix(m):
        b = re.sub(r'<setting name="threshold"[^>]*>[^<]*</setting>', '<setting name="threshold">0 ms</setting>', m.group(0))
        return re.sub(r'<setting name="enabled"[^>]*>[^<]*</setting>', '<setting name="enabled">true</setting>', b)
    s = re.sub(r'<event name="%s">.*?</event>' % re.escape(ev), fix, s, flags=re.S)
open(sys.argv[2], "w").write(s)
PY
elapsed() { grep '^WEFT-TRUTH' "$1" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read()[11:])["bench"]["elapsed_ns"])'; }
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for bench in LockHeavyBench NoContentionBench; do
  args="truth=0"
  : > "$OUT/$bench.plain"; : > "$OUT/$bench.weft"; : > "$OUT/$bench.jfr"
  for i in $(seq 1 "$RUNS"); do
    java -cp "$OUT/classes" weft.workloads.locks.$bench $args > "$OUT/p.out" 2>/dev/null
    elapsed "$OUT/p.out" >> "$OUT/$bench.plain"
    rm -f "$OUT/$bench.weft.trace"
    "$WEFT" record -o "$OUT/$bench.weft.trace" -- java -cp "$OUT/classes" weft.workloads.locks.$bench $args > "$OUT/w.out" 2>/dev/null
    elapsed "$OUT/w.out" >> "$OUT/$bench.weft"
    rm -f "$OUT/$bench.rec.jfr"
    java -XX:StartFlightRecording=filename="$OUT/$bench.rec.jfr",settings="$OUT/locks.jfc" -cp "$OUT/classes" weft.workloads.locks.$bench $args > "$OUT/j.out" 2>/dev/null
    elapsed "$OUT/j.out" >> "$OUT/$bench.jfr"
  done
  python3 - "$OUT" "$bench" <<'PY'
import statistics, sys
out, b = sys.argv[1], sys.argv[2]
med = {k: statistics.median(int(x) for x in open(f"{out}/{b}.{k}")) for k in ["plain", "weft", "jfr"]}
print(f"{b}: median elapsed plain {med['plain']/1e6:.0f} ms, weft {med['weft']/1e6:.0f} ms "
      f"({med['weft']/med['plain']:.3f}x), JFR {med['jfr']/1e6:.0f} ms ({med['jfr']/med['plain']:.3f}x)")
PY
  "$WEFT" report --json "$OUT/$bench.weft.trace" | python3 -c '
import json, sys
l = json.load(sys.stdin)["locks"]
blocks = sum(k["slow_acquisitions"] for k in l["locks"])
cont = sum(k["contended"] for k in l["locks"])
waits = sum(w["count"] for w in l["waits"])
n, csp = len(l["locks"]), l["csp"]
print(f"  weft (last run): {n} contended locks, {blocks} slow-path acquisitions ({cont} blocked), {waits} waits, CSP {csp:.3f}")'
  printf '  JFR (last run): '
  { jfr summary "$OUT/$bench.rec.jfr" || true; } | awk '/jdk.JavaMonitorEnter|jdk.ThreadPark|jdk.JavaMonitorWait/ {printf "%s %s  ", $1, $2} END {print ""}'
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "raw numbers in $OUT"
