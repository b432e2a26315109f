#!/usr/bin/env bash
# Parallel Java (Debian libpj-java, 2015): edu.rit.smp.fractal.MandelbrotSetSmp
# (a 1600x1600 Mandelbrot set, a parallel for loop over rows) with 2 threads
# (-Dpj.nt=2), once per loop schedule in $PJ_SCHEDULES (-Dpj.schedule=...:
# fixed = one chunk of rows per thread, dynamic(1) = one row per chunk).
# Check: the image file (PJG) is byte-identical plain vs recorded, and across
# schedules; exit 0. One row per schedule. Expected findings: bench/real/expected.json
# (PJ's team barrier, a Semaphore, is not lock contention).
source "$(dirname "$0")/lib.sh"
need_apt libpj-java
SCHEDULES="${PJ_SCHEDULES:-fixed dynamic(1) guided(1)}"
cd "$WORK"
first=""
for s in $SCHEDULES; do
    tag=$(echo "$s" | tr -c 'a-z0-9\n' '_')
    args=(-Dpj.nt=2 "-Dpj.schedule=$s" -cp /usr/share/java/pj.jar edu.rit.smp.fractal.MandelbrotSetSmp 1600 1600 -0.75 0 600 1000 0.4)
    t0=$(now); plain 300 "$JAVA" "${args[@]}" "plain-$tag.pjg" > "plain-$tag.log" 2>&1; rc=$?; t1=$(now)
    t2=$(now); record 300 "$WORK/pj-$tag.weft" "$JAVA" "${args[@]}" "rec-$tag.pjg" > "rec-$tag.log" 2>&1; rrc=$?; t3=$(now)
    p=$(md5sum < "plain-$tag.pjg" | cut -c1-8); r=$(md5sum < "rec-$tag.pjg" | cut -c1-8)
    first=${first:-$p}
    check="schedule $s: image md5 $p plain = rec, exit $rc/$rrc"
    [ "$p" = "$r" ] && [ "$p" = "$first" ] && [ $rc = 0 ] && [ $rrc = 0 ] || check="MISMATCH: schedule $s: image $p/$r (first $first), exit $rc/$rrc"
    real_row "pj $s" "$check" "$(elapsed $t0 $t1)" "$(elapsed $t2 $t3)" "$WORK/pj-$tag.weft"
    python3 "$REAL_DIR/expect.py" pj "$WORK/pj-$tag.weft.json"
done
