#!/usr/bin/env bash
# Same answers before and after a change of the analysis (issue 14): records the
# test workloads' traces ONCE, then writes `weft report --json` of each trace with
# a given weft binary, so two binaries' reports can be diffed on identical input.
#
# Usage:
#   bench/same_json.sh record DIR            # compile the workloads, record DIR/*.weft
#   bench/same_json.sh report DIR WEFT NAME  # DIR/NAME/<trace>.json with binary WEFT
#   bench/same_json.sh diff DIR NAME1 NAME2  # diff the two sets (exit 1 on a difference)
# Env: JAVA=java (default), WEFT_RECORD=weft binary used to record (default target/release/weft).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cmd="${1:-}"; dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { sed -n '2,11p' "$0"; exit 2; }
case "$cmd" in
record)
    mkdir -p "$dir/classes"
    javac --release 17 -d "$dir/classes" $(find "$root/java/workloads/src" -name '*.java')
    weft="${WEFT_RECORD:-$root/target/release/weft}"
    java="${JAVA:-java}"
    # name|class and args: task pools, threads, nesting, fork-join (wosp suite and
    # corner cases), locks of every kind.
    while IFS='|' read -r name argv; do
        [ -z "$name" ] && continue
        [ -e "$dir/$name.weft" ] && continue  # recorded once
        echo "recording $name: $argv" >&2
        "$weft" record -o "$dir/$name.weft" -- "$java" -cp "$dir/classes" $argv >/dev/null 2>"$dir/$name.stderr" \
            || echo "  (exit $? — kept the trace)" >&2
    done <<'LIST'
pooltasks|weft.workloads.PoolTasks
threads|weft.workloads.Threads
nested|weft.workloads.Nested
async|weft.workloads.AsyncTasks
samethread|weft.workloads.SameThread
forkjoin|weft.workloads.ForkJoin
fib|weft.workloads.fj.Fibonacci 30 12
mergesort|weft.workloads.fj.MergeSort
integrate|weft.workloads.fj.Integrate
streams|weft.workloads.fj.ParallelStreams
tryunfork|weft.workloads.fj.TryUnfork
reuse|weft.workloads.fj.Reuse
twoclients|weft.workloads.fj.TwoClients
cancel|weft.workloads.fj.CancelBeforeRun
asyncsupply|weft.workloads.fj.AsyncSupply
monitors|weft.workloads.locks.MonitorPhases
reentrant|weft.workloads.locks.ReentrantLockPhases
rwlock|weft.workloads.locks.ReadWriteLockContention
semaphore|weft.workloads.locks.SemaphoreContention
stamped|weft.workloads.locks.StampedLockContention
pingpong|weft.workloads.locks.MonitorPingPong
nocontention|weft.workloads.locks.NoContentionWaits
kmeans|weft.workloads.fj.FjKmeans
fft|weft.workloads.fj.Fft
doall|weft.workloads.fj.DoAll
heat|weft.workloads.fj.Heat
lud|weft.workloads.fj.Lud
matmul|weft.workloads.fj.MatrixMult
quicksort|weft.workloads.fj.QuickSort
pi|weft.workloads.fj.Pi
nbody|weft.workloads.fj.NBody
invokeall|weft.workloads.fj.InvokeAll
knownwork|weft.workloads.fj.KnownWork
streamsinpool|weft.workloads.fj.ParallelStreamsInPool
executorbench|weft.workloads.ExecutorBench
LIST
    ;;
report)
    weft="${3:?WEFT binary}"; name="${4:?NAME}"
    mkdir -p "$dir/$name"
    for t in "$dir"/*.weft; do
        b=$(basename "$t" .weft)
        "$weft" report "$t" --json >"$dir/$name/$b.json" 2>"$dir/$name/$b.err" || echo "report $b: exit $?" >&2
        "$weft" report "$t" >"$dir/$name/$b.txt" 2>>"$dir/$name/$b.err" || true
    done
    ;;
diff)
    # JSON: every value of NAME1's report must be in NAME2's unchanged; keys only
    # NAME2 has (fields added by later work) are listed, not failures. Text: equal.
    a="${3:?NAME1}"; b="${4:?NAME2}"
    python3 - "$dir/$a" "$dir/$b" <<'PY'
import json, os, sys
a, b = sys.argv[1], sys.argv[2]
bad, added, n = [], set(), 0
def cmp(x, y, path):
    if isinstance(x, dict) and isinstance(y, dict):
        for k in x:
            if k not in y:
                bad.append(f"{path}.{k} removed")
            else:
                cmp(x[k], y[k], f"{path}.{k}")
        for k in y:
            if k not in x:
                added.add(f"{path}.{k}".split("[")[0] if "[" in path else f"{path}.{k}")
    elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (u, v) in enumerate(zip(x, y)):
            cmp(u, v, f"{path}[{i}]")
    elif x != y:
        bad.append(f"{path}: {json.dumps(x)[:80]} -> {json.dumps(y)[:80]}")
for f in sorted(os.listdir(a)):
    g = os.path.join(b, f)
    if f.endswith(".json"):
        n += 1
        before = len(bad)
        cmp(json.load(open(os.path.join(a, f))), json.load(open(g)), f[:-5])
        if len(bad) > before:
            print(f"DIFFERS: {f}")
    elif f.endswith(".txt") and open(os.path.join(a, f)).read() != open(g).read():
        bad.append(f"{f}: text report differs")
for x in bad[:40]:
    print("  " + x)
if added:
    print("fields only in the second:", ", ".join(sorted({k.split(".", 1)[1] for k in added})))
print(f"{n} JSON reports: " + ("all values identical" if not bad else f"{len(bad)} differences"))
sys.exit(1 if bad else 0)
PY
    ;;
*) sed -n '2,11p' "$0"; exit 2 ;;
esac
