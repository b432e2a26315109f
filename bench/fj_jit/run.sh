#!/usr/bin/env bash
# The JIT side of the fork-join recording (BENCHMARKS.md, "Session 12: the fork-join cost at
# scale"): records fork-join workloads with HotSpot's compilation log and lists the uncommon
# traps hit in weft's hooks (each one deoptimizes the hook and has C2 compile it again) and
# the compile time of weft's methods. Counts do not depend on the machine's load; the
# compile times (wall time of each compile task) do.
# Usage: bench/fj_jit/run.sh [WORKLOAD ...]   WORKLOAD: "Class args" of weft.workloads.fj
#   (default: the six fork-join suite workloads with the most tasks, at benchmark sizes)
# Env: WEFT=weft binary (default target/release/weft, its libweft_agent.so beside it),
#      JAVA=java, BENCH_OUT=dir.
set -euo pipefail
cd "$(dirname "$0")/../.."
weft="${WEFT:-$PWD/target/release/weft}"; java="${JAVA:-java}"
[ -x "$weft" ] || { echo "run.sh: $weft not found (cargo build --release, or WEFT=...)" >&2; exit 2; }
out="${BENCH_OUT:-bench/out}/fj_jit"; mkdir -p "$out/classes"
javac --release 17 -d "$out/classes" $(find java/workloads/src/weft/workloads/fj -name '*.java')
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=("Fft 20 16 2 16" "Fibonacci 44 16 2" "Pi 800000000 2500 2"
    "Heat 1024 4 2 1000" "DoAll 4000000 1024 2 200" "FjKmeans 200000 1000 2 16 400")
for w in "${workloads[@]}"; do
    log="$out/$(echo "$w" | tr ' ' '_').log"
    # shellcheck disable=SC2086
    "$weft" record --no-sample -o "$out/t.weft" -- "$java" -XX:+UnlockDiagnosticVMOptions \
        -XX:+LogCompilation -XX:LogFile="$log" -cp "$out/classes" weft.workloads.fj.$w >/dev/null 2>&1
    python3 - "$w" "$log" <<'PY'
import re, sys
name, path = sys.argv[1], sys.argv[2]
lines = open(path, errors="replace").read().split("\n")
traps = []
for i, l in enumerate(lines):
    if not l.startswith("<uncommon_trap thread="):
        continue  # a runtime trap (not one compiled into code)
    reason = re.search(r"reason='([^']*)'", l).group(1)
    frames = []
    for m in lines[i + 1:i + 8]:
        if m.startswith("</uncommon_trap"):
            break
        j = re.search(r"<jvms bci='(\d+)' method='([^ ']*) ([^ ']*)", m)
        if j:
            frames.append(f"{j.group(2)}.{j.group(3)}@{j.group(1)}")
    if any(f.startswith("weft.") and not f.startswith("weft.workloads") for f in frames):
        traps.append(f"{reason} {' <- '.join(frames)}")
text = "\n".join(lines)
weft_ms, weft_n = 0.0, 0
for m in re.finditer(r"<task [^>]*?method='([^' ]*) ([^' ]*)[^>]*?stamp='([\d.]+)'>.*?<task_done[^>]*?stamp='([\d.]+)'", text, re.S):
    if m.group(1).startswith("weft.") and not m.group(1).startswith("weft.workloads"):
        weft_n += 1
        weft_ms += (float(m.group(4)) - float(m.group(3))) * 1000
print(f"{name}: {len(traps)} traps in weft's hooks; {weft_n} compiles of weft methods, {weft_ms:.0f} ms")
for t in traps:
    print(f"    {t}")
PY
done
