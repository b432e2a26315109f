#!/usr/bin/env bash
# Does weft see all of Clojure's `locking` contention? apps/contend_truth.clj times each
# acquisition itself; this compares its sum and its count of slow (> 50 us) acquisitions
# with weft's blocked time and contended count for the monitor (java.lang.Object).
source "$(dirname "$0")/lib.sh"
need_apt clojure
J=/usr/share/java
CP="$J/clojure.jar:$J/spec.alpha.jar:$J/core.specs.alpha.jar"
out=$(record 300 "$WORK/truth.weft" "$JAVA" -cp "$CP" clojure.main "$REAL_DIR/apps/contend_truth.clj" 2>/dev/null)
echo "$out"
"$WEFT" report --json "$WORK/truth.weft" | python3 -c '
import json, sys
r = json.load(sys.stdin)
m = [l for l in r["locks"]["locks"] if l["class"] == "java.lang.Object" and l["kind"] == "monitor"]
if not m: sys.exit("weft recorded no contention on the monitor")
print("weft: contended %d, blocked %.0f ms" % (m[0]["contended"], m[0]["blocked_ns"] / 1e6))
'
