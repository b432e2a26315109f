#!/usr/bin/env python3
"""Possible-speedups accuracy (issue 18): each validation workload recorded with
weft, its efficiencies against the truth it prints (its threads' CPU times), and
each "if removed" line against the gain measured by turning the workload's knob.

Usage: bench/speedups/run.py [--reps N] [--out table.md] [--only CLASS]   (from the
repo root, after `cargo build --release`; WEFT_BIN overrides target/release/weft).
Needs java, javac and taskset on the PATH.

Each workload is measured in N rounds; each round is three runs back to back: one
recorded by weft without the knob (sampler at 10 ms: weft's efficiencies and lines,
and the workload's truth), one plain run without the knob and one with it (the
measured gain = elapsed without ÷ elapsed with, elapsed = the workload's own timed
span). A round's prediction and measurement are taken under the same load; the
table gives the medians over the rounds and the range of the measured gain (how
stable the knob's gain is on this machine).
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WEFT = os.environ.get("WEFT_BIN", os.path.join(ROOT, "target", "release", "weft"))
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


def java_cmd(classes, cls, args, prefix, record=None):
    cmd = list(prefix)
    if record:
        cmd += [WEFT, "record", "--interval", "10ms", "-o", record, "--"]
    return cmd + ["java", "-cp", classes, PKG + cls] + args


def together(cmds):
    """Runs the commands at the same time, each in its own session (its own
    scheduler autogroup, so each gets an equal share of a loaded machine): the
    recorded run, the plain run and the knob run see the same load."""
    ps = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True) for c in cmds]
    outs = []
    for c, p in zip(cmds, ps):
        out, err = p.communicate(timeout=900)
        if p.returncode != 0:
            raise RuntimeError(f"{c} failed: {err}")
        outs.append(truth(out))
    return outs


def line_of(s, line, key):
    return next((l[key] for l in s["lines"] if l["remove"] == line), None)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--only")
    ap.add_argument("--concurrent", action="store_true",
                    help="run each round's three runs at the same time, each in its own session")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="weft-speedups-")
    classes = os.path.join(tmp, "classes")
    srcs = []
    for d, _, fs in os.walk(os.path.join(ROOT, "java", "workloads", "src")):
        srcs += [os.path.join(d, f) for f in fs if f.endswith(".java")]
    subprocess.run(["javac", "--release", "17", "-d", classes] + srcs, check=True)
    rows = []
    loads = [os.getloadavg()[0]]
    for name, cls, args, knob, line, pre, pre_knob in WORKLOADS:
        if a.only and a.only not in cls:
            continue
        trace = os.path.join(tmp, cls + ".weft")
        reps = []
        for k in range(a.reps):
            if a.concurrent:
                t, b, kn = together([java_cmd(classes, cls, args, pre, record=trace),
                                     java_cmd(classes, cls, args, pre),
                                     java_cmd(classes, cls, args + knob, pre_knob)])
                base, knobbed = b["elapsed_ns"], kn["elapsed_ns"]
            else:
                t = java(classes, cls, args, pre, record=trace)
                base = java(classes, cls, args, pre)["elapsed_ns"]
                knobbed = java(classes, cls, args + knob, pre_knob)["elapsed_ns"]
            r = subprocess.run([WEFT, "speedups", trace, "--json"], capture_output=True, text=True, check=True)
            s = json.loads(r.stdout)
            loads.append(os.getloadavg()[0])
            rep = {
                "pred": line_of(s, line, "closed_form_gain"),
                "sim": line_of(s, line, "simulated_gain"),
                "measured": base / knobbed,
                "effs": {k: (s["efficiencies"].get(k), t.get(k)) for k in EFFS},
                "residual": s.get("residual"),
                "notes": s.get("notes", []),
            }
            reps.append(rep)
            print(name, k, rep, file=sys.stderr)
        rows.append((name, line, reps))
    mode = "the three runs of a round at the same time, each in its own session" if a.concurrent \
        else "the three runs of a round one after the other"
    out = [f"Load average (1 min) during the runs: {min(loads):.1f}-{max(loads):.1f}; {a.reps} rounds, {mode}.", "",
           "| workload | line | predicted gain (median, range) | simulated gain | measured gain (median, range) | ratio of medians | efficiencies weft / truth (diff), last round | residual |",
           "|---|---|---|---|---|---|---|---|"]
    fmt = lambda x: "-" if x is None else f"×{x:.2f}"
    for name, line, reps in rows:
        preds = [r["pred"] for r in reps if r["pred"] is not None]
        meas = [r["measured"] for r in reps]
        pred, sim, measured = med(preds), med([r["sim"] for r in reps]), med(meas)
        ratio = pred / measured if pred else None
        ok = ratio is not None and 0.95 <= ratio <= 1.25
        e = []
        for k, (w, tr) in reps[-1]["effs"].items():
            if w is None or tr is None:
                e.append(f"{k} {w} / {tr}")
                continue
            d = w - tr
            e.append(f"{k} {w:.2f} / {tr:.2f} ({d:+.2f}{'' if abs(d) <= 0.05 else ' MISS'})")
        resid = reps[-1]["residual"]
        prange = f" ({min(preds):.2f}-{max(preds):.2f})" if preds else ""
        out.append(f"| {name} | {line} | {fmt(pred)}{prange} | {fmt(sim)} | "
                   f"{fmt(measured)} ({min(meas):.2f}-{max(meas):.2f}) | "
                   f"{ratio and f'{ratio:.2f}'}{'' if ok else ' MISS'} | {'; '.join(e)} | "
                   f"{resid and f'{resid:+.1%}'} |")
    text = "\n".join(out) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
        with open(a.out + ".json", "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
