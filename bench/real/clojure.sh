#!/usr/bin/env bash
# Clojure 1.11 (Debian clojure): apps/contend.clj — pmap, 8 futures contending on
# one `locking` monitor, an agent. Check: the program's own counts (pmap 200,
# agent 1000, counter 2400), plain and recorded. Expected findings:
# bench/real/expected.json (checked by expect.py).
source "$(dirname "$0")/lib.sh"
need_apt clojure
J=/usr/share/java
CP="$J/clojure.jar:$J/spec.alpha.jar:$J/core.specs.alpha.jar"
cmd=("$JAVA" -cp "$CP" clojure.main "$REAL_DIR/apps/contend.clj")
want=$'pmap 200\nagent 1000\ncounter 2400'
t0=$(now); pout=$(plain 300 "${cmd[@]}" 2>"$WORK/plain.err"); prc=$?; t1=$(now)
rm -f "$WORK"/clojure*.weft
rout=$(record 300 "$WORK/clojure.weft" "${cmd[@]}" 2>"$WORK/rec.err"); rrc=$?; t2=$(now)
check="counts pmap 200 / agent 1000 / counter 2400, exit $prc/$rrc"
if [ "$pout" != "$want" ] || [ "$rout" != "$want" ] || [ "$prc" != 0 ] || [ "$rrc" != 0 ]; then
    check="MISMATCH: plain [$pout] rc=$prc / recorded [$rout] rc=$rrc"
fi
real_row clojure "$check" "$(elapsed $t0 $t1)" "$(elapsed $t1 $t2)" "$WORK"/clojure*.weft
python3 "$REAL_DIR/expect.py" clojure "$WORK"/clojure*.weft.json
