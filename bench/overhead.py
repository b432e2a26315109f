#!/usr/bin/env python3
"""Runs the A/B overhead measurement for bench/overhead.sh (see there for usage).

A = plain `java ...`, B = `weft record -o T.weft -- java ...`. Per workload: one
warm-up pair, then --runs alternating pairs (A, B, A, B, ...). Reports medians of
wall time, their ratio, the added cost per task execution
((median B - median A) / executions, executions taken from the workload's own
WEFT-TRUTH line, aggregated ones included since every execution is probed), and
trace bytes per task execution. JVM start-up added is measured on Hello.
"""
import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def env():
    e = dict(os.environ)
    for k in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"):
        e.pop(k, None)
    return e


def timed(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        log("FAILED (%d): %s\n%s" % (p.returncode, " ".join(map(shlex.quote, cmd)), p.stderr.decode(errors="replace")[-3000:]))
        sys.exit(1)
    return dt, p.stdout.decode(errors="replace")


def truth_executions(stdout):
    for line in stdout.splitlines():
        if line.startswith("WEFT-TRUTH "):
            t = json.loads(line[len("WEFT-TRUTH "):])
            return sum(c["executions"] for c in t["classes"].values())
    return 0


def fmt_s(x):
    return "%.3f" % x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--weft", required=True)
    ap.add_argument("--plain-only", type=int, default=0)
    ap.add_argument("--java", default="java")
    ap.add_argument("--java-opts", default="")
    ap.add_argument("workloads", nargs="+")
    a = ap.parse_args()

    classes = os.path.join(a.out, "classes")
    trace = os.path.join(a.out, "bench.weft")
    jvm = [a.java] + shlex.split(a.java_opts) + ["-cp", classes]

    rows = []
    for w in ["Hello"] + a.workloads:
        parts = w.split()
        java_cmd = jvm + ["weft.workloads." + parts[0]] + parts[1:]
        weft_cmd = [a.weft, "record", "-o", trace, "--"] + java_cmd
        log("== %s" % w)
        # warm-up pair (page cache, JIT of nothing: separate JVMs, but file caches and CPU frequency)
        _, plain_out = timed(java_cmd)
        if not a.plain_only:
            _, weft_out = timed(weft_cmd)
            if weft_out != plain_out:
                log("WARNING: stdout under weft differs from the plain run for %s" % w)
        execs = truth_executions(plain_out)
        ta, tb, sizes = [], [], []
        for i in range(a.runs):
            dt, _ = timed(java_cmd)
            ta.append(dt)
            if not a.plain_only:
                if os.path.exists(trace):
                    os.remove(trace)
                dt, _ = timed(weft_cmd)
                tb.append(dt)
                sizes.append(os.path.getsize(trace) if os.path.exists(trace) else 0)
            log("  run %d: plain %.3fs%s" % (i + 1, ta[-1], "" if a.plain_only else ", weft %.3fs, trace %d bytes" % (tb[-1], sizes[-1])))
        rows.append((w, execs, ta, tb, sizes))
    if os.path.exists(trace):
        os.remove(trace)

    java_version = subprocess.run([a.java, "-version"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env()).stderr.decode().splitlines()[0]
    print("Overhead of `weft record` (%s; %d CPUs; %s; %d alternating runs per side after one warm-up; medians of wall time)." % (
        platform.machine(), os.cpu_count(), java_version, a.runs))
    print()
    print("| workload | task executions | plain (s) | weft (s) | ratio | added per task (ns) | trace bytes per task |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    startup = None
    for w, execs, ta, tb, sizes in rows:
        ma = statistics.median(ta)
        if a.plain_only:
            print("| %s | %d | %s | – | – | – | – |" % (w, execs, fmt_s(ma)))
            continue
        mb = statistics.median(tb)
        ratio = mb / ma if ma > 0 else float("nan")
        if w == "Hello":
            startup = (ma, mb)
            print("| JVM start-up (Hello) | – | %s | %s | %.2f | – | – |" % (fmt_s(ma), fmt_s(mb), ratio))
            continue
        per_task = (mb - ma) * 1e9 / execs if execs else float("nan")
        bpt = statistics.median(sizes) / execs if execs else float("nan")
        print("| %s | %d | %s | %s | %.2f | %.0f | %.1f |" % (w, execs, fmt_s(ma), fmt_s(mb), ratio, per_task, bpt))
    if startup:
        print()
        print("JVM start-up added by weft: %.0f ms (median %s s with weft, %s s without)." % (
            (startup[1] - startup[0]) * 1000, fmt_s(startup[1]), fmt_s(startup[0])))
    print()
    print("Per-run spread (min–max, s):")
    print()
    for w, execs, ta, tb, sizes in rows:
        line = "- %s: plain %.3f–%.3f" % (w, min(ta), max(ta))
        if tb:
            line += ", weft %.3f–%.3f" % (min(tb), max(tb))
        print(line)


if __name__ == "__main__":
    main()
