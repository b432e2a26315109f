#!/usr/bin/env bash
# One pair of an accuracy run (sourced by run.sh and reanalyze.sh): estimate the edit on
# the base trace and measure the gain against the variant (`weft compare`), then print
# the results.tsv row.   pair NAME I EDIT LOAD   (uses $WEFT and $OUT)
pair() {
  local name=$1 i=$2 edit=$3 load=$4
  # An edit that names nothing in the base trace (e.g. a lock that was not contended
  # in that run) is weft's one-line error: the row says "no estimate" with it.
  if ! "$WEFT" compare "$OUT/$name.base.$i.weft" "$OUT/$name.variant.$i.weft" --edit "$edit" --json > "$OUT/$name.$i.json" 2> "$OUT/$name.$i.err"; then
    "$WEFT" compare "$OUT/$name.base.$i.weft" "$OUT/$name.variant.$i.weft" --json > "$OUT/$name.$i.json"
    python3 - "$OUT/$name.$i.json" "$OUT/$name.$i.err" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
v["compare"]["reasons"] = [open(sys.argv[2]).read().strip().replace("\t", " ")[:300]]
json.dump(v, open(sys.argv[1], "w"))
PY
  fi
  python3 - "$OUT/$name.$i.json" "$name" "$i" "$edit" "$OUT/$name.base.$i.out" "$OUT/$name.variant.$i.out" "$load" <<'PY'
import json, re, sys
c = json.load(open(sys.argv[1]))["compare"]
def win(p):
    m = re.search(r"window_ns=(\d+)", open(p).read())
    return int(m.group(1)) if m else 0
wb, wv = win(sys.argv[5]), win(sys.argv[6])
phase = wb / wv if wv else 0
print("\t".join(map(str, [sys.argv[2], sys.argv[3], sys.argv[4], c["estimated_gain"], c["gain_lo"], c["gain_hi"],
      c["confidence"], c["measured_gain"], phase, c["before_ns"], c["after_ns"], sys.argv[7], (c["reasons"] or [""])[0]])))
PY
}
