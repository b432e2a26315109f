#!/usr/bin/env python3
"""Possible-speedups accuracy (issue 18): each validation workload recorded with
weft, its efficiencies against the truth it prints (its threads' CPU times), and
each "if removed" line against the gain measured by turning the workload's knob.

Usage: bench/speedups/run.py [--reps N] [--out table.md]   (from the repo root,
after `cargo build --release`). Needs java, javac and taskset on the PATH.

For each workload: one recorded run without the knob (sampler at 10 ms) gives
the prediction and the truth; then N plain runs without and N with the knob,
interleaved, give the measured gain = median elapsed without / median with
(elapsed = the workload's own timed span, printed in its truth line).
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WEFT = os.path.join(ROOT, "target", "release", "weft")
PKG = "weft.workloads.speedups."

# (name, class, args, knob args, line, prefix without knob, prefix with knob)
WORKLOADS = [
    ("serial prologue", "SerialPrologue", [], ["split=true"], "serial", [], []),
    ("static block partition", "StaticImbalance", [], ["partition=cyclic"], "imbalance", [], []),
    ("rotating barrier", "RotatingBarrier", ["rounds=60", "work=10000"], ["even=true"], "imbalance", [], []),
    ("contended lock", "ContendedLock", [], ["lock=none"], "locks", [], []),
    ("2 threads on 1 CPU", "Oversubscribed", ["work=400000"], [], "oversubscription",
     ["taskset", "-c", "0"], []),
]
EFFS = ["parallel_fraction", "load_balance", "lock_contention", "cores"]


def truth(out):
    for line in out.splitlines():
        if line.startswith("WEFT-TRUTH "):
            return json.loads(line[len("WEFT-TRUTH "):])
    raise RuntimeError("no WEFT-TRUTH line in:\n" + out)


def java(classes, cls, args, prefix, record=None):
    cmd = list(prefix)
    if record:
        cmd += [WEFT, "record", "--interval", "10ms", "-o", record, "--"]
    cmd += ["java", "-cp", classes, PKG + cls] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {r.stderr}")
    return truth(r.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--only")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="weft-speedups-")
    classes = os.path.join(tmp, "classes")
    srcs = []
    for d, _, fs in os.walk(os.path.join(ROOT, "java", "workloads", "src")):
        srcs += [os.path.join(d, f) for f in fs if f.endswith(".java")]
    subprocess.run(["javac", "--release", "17", "-d", classes] + srcs, check=True)
    rows = []
    for name, cls, args, knob, line, pre, pre_knob in WORKLOADS:
        if a.only and a.only not in cls:
            continue
        trace = os.path.join(tmp, cls + ".weft")
        t = java(classes, cls, args, pre, record=trace)
        r = subprocess.run([WEFT, "speedups", trace, "--json"], capture_output=True, text=True, check=True)
        s = json.loads(r.stdout)
        base, knobbed = [], []
        for _ in range(a.reps):
            base.append(java(classes, cls, args, pre)["elapsed_ns"])
            knobbed.append(java(classes, cls, args + knob, pre_knob)["elapsed_ns"])
        measured = statistics.median(base) / statistics.median(knobbed)
        pred = next((l["closed_form_gain"] for l in s["lines"] if l["remove"] == line), None)
        effs = {k: (s["efficiencies"].get(k), t.get(k)) for k in EFFS}
        rows.append((name, line, pred, measured, effs, s.get("residual"), base, knobbed))
        print(name, line, pred, measured, effs, file=sys.stderr)
    out = ["| workload | line | predicted gain | measured gain | ratio | efficiencies weft / truth (diff) | residual |",
           "|---|---|---|---|---|---|---|"]
    for name, line, pred, measured, effs, resid, base, knobbed in rows:
        ratio = pred / measured if pred else None
        ok = ratio is not None and 0.95 <= ratio <= 1.25
        e = []
        for k, (w, tr) in effs.items():
            if w is None or tr is None:
                e.append(f"{k} {w} / {tr}")
                continue
            d = w - tr
            e.append(f"{k} {w:.2f} / {tr:.2f} ({d:+.2f}{'' if abs(d) <= 0.05 else ' MISS'})")
        out.append(f"| {name} | {line} | {pred and f'×{pred:.2f}'} | ×{measured:.2f} | "
                   f"{ratio and f'{ratio:.2f}'}{'' if ok else ' MISS'} | {'; '.join(e)} | "
                   f"{resid and f'{resid:+.1%}'} |")
    text = "\n".join(out) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
