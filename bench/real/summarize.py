#!/usr/bin/env python3
"""Summarize `weft report --json` outputs of one recorded run (one or more traces,
several JVMs) into one markdown table row, and check that the report makes sense.

usage: summarize.py APP CHECK PLAIN_S RECORDED_S TRACE_BYTES REPORT.json [REPORT.json ...]

Prints the row on stdout; every sanity problem found goes to stderr as
`weft-sanity: ...` lines (and the row's last column says `N sanity problems`).
Sanity checks: no negative or impossible time (self time > recording, thread CPU
> lifetime + 10%, queue wait < 0), counts consistent (per-class executions equal
the sum of their sites, lock contended ≥ 1 for a listed contended lock), no
unknown or garbled class names, trace readable (unknown records, lost records,
unmatched ends reported)."""
import json
import re
import sys

# Binary class names; lambdas as docs/task-model.md §Lambdas names them:
# Decl$$Lambda[method:line], Decl$$Lambda[Owner::method], Decl$$Lambda.
NAME = re.compile(r"^(\[+L?)?[A-Za-z_$][\w$]*(\.[\w$]+)*;?"
                  r"(\$\$Lambda(\[([\w$<>]+:\d+|[\w$.]+::[\w$<>]+)\])?)?$")


def sanity(app, d, problems):
    dur = d.get("duration_ns") or 0
    tr = d.get("trace", {})
    for k in ("unknown_records", "lost_records", "unmatched_ends"):
        if tr.get(k):
            problems.append(f"{app}: trace {k} = {tr[k]}")
    if tr.get("truncated"):
        problems.append(f"{app}: trace truncated")
    for c in d.get("tasks", {}).get("classes", []):
        name = c.get("class", "")
        if not name or "unknown" in name.lower() or not NAME.match(name):
            problems.append(f"{app}: odd class name {name!r}")
        g = c.get("granularity_ns") or {}
        for k, v in g.items():
            if v is not None and (v < 0 or (k != "total" and v > dur * 1.05)):
                problems.append(f"{app}: {name} self time {k}={v} ns (recording {dur} ns)")
        q = c.get("queue_wait_ns") or {}
        for k, v in q.items():
            if v is not None and v < 0:
                problems.append(f"{app}: {name} queue wait {k}={v}")
        sites = c.get("sites") or []
        if sites:
            s = sum(x.get("count", 0) for x in sites)
            n = c.get("executions", 0) + c.get("aggregated", 0) + c.get("incomplete", 0)
            if s > n:
                problems.append(f"{app}: {name} sites count {s} > executions {n}")
    for t in d.get("threads", []):
        life = (t.get("end_ns") or dur) - (t.get("start_ns") or 0)
        cpu = t.get("cpu_ns")
        if life < 0:
            problems.append(f"{app}: thread {t.get('name')} negative lifetime")
        if cpu is not None and life > 0 and cpu > life * 1.1 + 20e6:
            problems.append(f"{app}: thread {t.get('name')} cpu {cpu/1e6:.0f} ms > lifetime {life/1e6:.0f} ms")
    locks = d.get("locks") or {}
    for l in locks.get("locks", []):
        if l.get("blocked_ns", 0) < 0 or l.get("max_blocked_ns", 0) > dur * 1.05:
            problems.append(f"{app}: lock {l.get('id')} impossible blocked time")


def main():
    app, check, plain, rec, size = sys.argv[1:6]
    reports = []
    for p in sys.argv[6:]:
        try:
            with open(p) as f:
                reports.append(json.load(f))
        except Exception as e:  # noqa: BLE001
            print(f"weft-sanity: {app}: cannot read report {p}: {e}", file=sys.stderr)
    problems = []
    execs = fj = contended = 0
    have_fj = have_locks = False
    findings = []
    for d in reports:
        sanity(app, d, problems)
        for c in d.get("tasks", {}).get("classes", []):
            execs += c.get("executions", 0) + c.get("aggregated", 0)
        if "forkjoin" in d:
            have_fj = True
            f = d["forkjoin"] or {}
            fj += f.get("tasks", f.get("executions", 0)) if isinstance(f, dict) else 0
        if "locks" in d:
            have_locks = True
            contended += sum(1 for l in d["locks"].get("locks", []) if l.get("contended", 0) > 0)
        findings += d.get("findings", [])
    for p in problems:
        print(f"weft-sanity: {p}", file=sys.stderr)
    top = findings[0]["message"] if findings else "no finding"
    if not findings:
        best = None
        for d in reports:
            for l in (d.get("locks") or {}).get("locks", []):
                if l.get("contended", 0) > 0 and (best is None or l.get("csp", 0) > best.get("csp", 0)):
                    best = l
        if best and best.get("csp", 0) >= 0.01:
            site = (best.get("sites") or ["?"])[0]
            top += f"; most contended lock: {best['class']} at {site} (CSP {best['csp']*100:.0f}%)"
    top = top.replace("|", "/")
    if len(top) > 170:
        top = top[:167] + "…"
    jvms = f" ({len(reports)} JVMs)" if len(reports) > 1 else ""
    mb = int(size) / 1e6
    print(
        f"| {app} | {check} | {float(plain):.1f} s | {float(rec):.1f} s | {mb:.2f} MB{jvms} | {execs} | "
        f"{fj if have_fj else '–'} | {contended if have_locks else '–'} | {top} | "
        f"{len(problems) if problems else 'ok'} |"
    )


if __name__ == "__main__":
    main()
