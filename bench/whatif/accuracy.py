#!/usr/bin/env python3
"""Summarises bench/whatif/run.sh's results.tsv into ACCURACY.md's table: per case the
median estimated gain, the median measured gain (same window as the estimate), the
relative error |est - measured| / measured, and the goals of issue 17."""
import statistics
import sys
from collections import OrderedDict

rows = OrderedDict()
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) < 13:
        continue
    name, _, edit, est, lo, hi, conf, meas, phase, bns, ans, load, reason = f[:13]
    r = rows.setdefault(name, {"edit": edit, "est": [], "lo": [], "hi": [], "conf": [], "meas": [], "phase": [], "load": [], "reason": reason})
    if est not in ("None", ""):
        r["est"].append(float(est)); r["lo"].append(float(lo)); r["hi"].append(float(hi))
    r["conf"].append(conf)
    r["meas"].append(float(meas)); r["phase"].append(float(phase)); r["load"].append(float(load))

errors = []
sign_ok = []
print("| case | edit | estimated gain [range] | confidence | measured gain (pairs) | error | phase-only measured gain | load avg |")
print("|---|---|---|---|---|---|---|---|")
for name, r in rows.items():
    meas = statistics.median(r["meas"])
    phase = statistics.median(r["phase"]) if r["phase"] else 0
    pairs = ", ".join(f"{m:.2f}" for m in r["meas"])
    if r["est"]:
        est = statistics.median(r["est"])
        err = abs(est - meas) / meas
        errors.append(err)
        if abs(meas - 1) >= 0.10:
            sign_ok.append((est - 1) * (meas - 1) > 0)
        estxt = f"×{est:.2f} [{min(r['lo']):.2f}–{max(r['hi']):.2f}]"
        errtxt = f"{err * 100:.1f}%"
    else:
        estxt = "no estimate: " + r["reason"]
        errtxt = "—"
    conf = "/".join(sorted(set(r["conf"])))
    print(f"| {name} | `{r['edit']}` | {estxt} | {conf} | ×{meas:.2f} ({pairs}) | {errtxt} | ×{phase:.2f} | {statistics.median(r['load']):.1f} |")
print()
if errors:
    print(f"Median error {statistics.median(errors) * 100:.1f}% over {len(errors)} estimated cases "
          f"(goal <= 10%); worst {max(errors) * 100:.1f}% (goal <= 15%); "
          f"sign right in {sum(sign_ok)} of {len(sign_ok)} cases whose measured effect is >= 10%.")
print()
print("Conditions: " + open(sys.argv[2]).read().replace("\n", "; "))
