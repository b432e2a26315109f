#!/usr/bin/env bash
# Sunflow 0.07.2 (Debian libsunflow-java + janino): org.sunflow.Benchmark -bench 2 RES.
# Debian's jar has no reference images, so a plain run of `-regen` first writes
# resources/golden_XXXX.png (stopped once the wanted size is written); both the
# plain and the recorded benchmark must then print "Image check passed!"
# (the rendered image equals the plain JVM's pixel for pixel) and exit 0. Expected
# findings: bench/real/expected.json (checked by expect.py).
source "$(dirname "$0")/lib.sh"
RES="${SUNFLOW_RES:-128}"; THREADS="${SUNFLOW_THREADS:-2}"
need_apt libsunflow-java janino
J=/usr/share/java
CP="$WORK:$J/sunflow.jar:$J/janino.jar:$J/commons-compiler.jar"
cd "$WORK"
GOLD=$(printf 'resources/golden_%04X.png' "$RES")
if [ ! -s "$GOLD" ]; then
    mkdir -p resources
    timeout 300 "$JAVA" -cp "$CP" org.sunflow.Benchmark -regen > regen.log 2>&1 &
    pid=$!
    # -regen renders 32, 64, ... in turn: stop once the next file after ours appears (ours is complete).
    NEXT=$(printf 'resources/golden_%04X.png' "$((RES + 32))")
    for _ in $(seq 600); do [ -s "$NEXT" ] || ! kill -0 $pid 2>/dev/null && break; sleep 0.5; done
    kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
    [ -s "$GOLD" ] || { echo "sunflow: could not generate $GOLD" >&2; exit 1; }
fi
t0=$(now); plain 300 "$JAVA" -cp "$CP" org.sunflow.Benchmark -bench "$THREADS" "$RES" > plain.log 2>&1; rc=$?; t1=$(now)
t2=$(now); record 300 "$WORK/sunflow.weft" "$JAVA" -cp "$CP" org.sunflow.Benchmark -bench "$THREADS" "$RES" > rec.log 2>&1; rrc=$?; t3=$(now)
p=$(grep -c "Image check passed!" plain.log || true); r=$(grep -c "Image check passed!" rec.log || true)
check="image check passed plain=$p rec=$r, exit $rc/$rrc"
[ "$p" = 1 ] && [ "$r" = 1 ] && [ $rc = 0 ] && [ $rrc = 0 ] || check="MISMATCH: $check"
real_row sunflow "$check" "$(elapsed $t0 $t1)" "$(elapsed $t2 $t3)" "$WORK"/sunflow*.weft
python3 "$REAL_DIR/expect.py" sunflow "$WORK"/sunflow*.weft.json
