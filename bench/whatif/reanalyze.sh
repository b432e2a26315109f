#!/usr/bin/env bash
# Re-estimates the traces a run.sh run kept (its OUT directory) with the current weft:
# the recordings, hence the measured gains, are unchanged; only the estimates move. A
# model change is checked on an idle machine's recordings while the machine is loaded.
#   bench/whatif/reanalyze.sh OUT_OF_A_RUN [RESULT_DIR]   (WEFT=path/to/weft)
# Rows keep the load average the run recorded (the third column of results.tsv).
set -euo pipefail
cd "$(dirname "$0")/../.."
RUN=${1:?usage: reanalyze.sh OUT_OF_A_RUN [RESULT_DIR]}
WEFT=${WEFT:-target/release/weft}
OUT=${2:-$(mktemp -d /tmp/weft-whatif-reanalyze.XXXXXX)}
# shellcheck source=bench/whatif/pair.sh
. bench/whatif/pair.sh
mkdir -p "$OUT"
RES="$OUT/results.tsv"
: > "$RES"
cp "$RUN/conditions.txt" "$OUT/conditions.txt"
grep -v '^#' bench/whatif/cases.tsv | while IFS=$'\t' read -r name _ edit _; do
  for b in "$RUN/$name".base.*.weft; do
    [ -e "$b" ] || continue
    i=${b%.weft}; i=${i##*.}
    for f in base."$i".weft variant."$i".weft base."$i".out variant."$i".out; do ln -sf "$RUN/$name.$f" "$OUT/$name.$f"; done
    load=$(awk -F'\t' -v n="$name" -v i="$i" '$1 == n && $2 == i { print $12 }' "$RUN/results.tsv")
    pair "$name" "$i" "$edit" "${load:-?}" >> "$RES"
  done
done
python3 bench/whatif/accuracy.py "$RES" "$OUT/conditions.txt" > "$OUT/ACCURACY.table.md"
cat "$OUT/ACCURACY.table.md"
