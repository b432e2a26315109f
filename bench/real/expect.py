#!/usr/bin/env python3
"""Checks weft's advice on a real application against what bench/real/expected.json
says a senior engineer would conclude (issue 16): the top finding (kind and, when
given, the class it names), and task classes that must never be called
coarse-grained (acceptor, selector and idle-pool loops), findings that would be
false advice (`never_findings`: kind, and class, class_contains, site_contains or
message_contains), and what given idle classes must
be reported as (`activity`: off_cpu for a blocking loop, waiting for
an idle worker).

usage: expect.py APP REPORT.json [REPORT.json ...]
Prints `expect: APP: ok` or `expect: APP: FAILED: ...` lines; exit status 1 on failure."""
import json
import os
import sys

TRACE_KINDS = {"losses", "truncated", "unknown_records", "unbalanced"}


def main():
    app, paths = sys.argv[1], sys.argv[2:]
    with open(os.path.join(os.path.dirname(__file__), "expected.json")) as f:
        want = json.load(f)[app]
    findings, classes = [], {}
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        findings += d.get("findings", [])
        for c in d.get("tasks", {}).get("classes", []):
            classes[c["class"]] = (c.get("time_split") or {}).get("activity")
    costed = sorted((f for f in findings if f["kind"] not in TRACE_KINDS),
                    key=lambda f: -f.get("cost_ns", 0))
    problems = []
    top = want.get("top_finding")
    if top:
        if not costed:
            problems.append(f"no finding; expected {top}")
        else:
            got = costed[0]
            for k, v in top.items():
                if k in ("class_contains", "site_contains"):
                    field = k.split("_")[0]
                    if v not in (got.get(field) or ""):
                        problems.append(f"top finding's {field} {got.get(field)!r} lacks {v!r}: {got['message']}")
                elif got.get(k) != v:
                    problems.append(f"top finding {k} = {got.get(k)!r}, expected {v!r}: {got['message']}")
    for f in costed:
        if f["kind"] == "coarse_grained":
            for pat in want.get("never_coarse", []):
                if pat in (f.get("class") or ""):
                    problems.append(f"{f['class']} called coarse-grained: {f['message']}")
    # Findings that would be false advice: kind, and when given the class, a part of
    # the class or site, or words of the message (all given must match).
    def matches(bad, f):
        return (f["kind"] == bad["kind"]
                and bad.get("class", f.get("class")) == f.get("class")
                and bad.get("class_contains", "") in (f.get("class") or "")
                and bad.get("site_contains", "") in (f.get("site") or "")
                and bad.get("message_contains", "") in f["message"])
    for bad in want.get("never_findings", []):
        for f in costed:
            if matches(bad, f):
                problems.append(f"false finding {f['kind']} on {f.get('class')}: {f['message']}")
    # What idle classes are (a blocking loop is off_cpu, an idle pool worker waiting).
    for cls, act in want.get("activity", {}).items():
        if cls not in classes:
            problems.append(f"class {cls} not in the report")
        elif classes[cls] != act:
            problems.append(f"{cls}: activity {classes[cls]!r}, expected {act!r}")
    if problems:
        for p in problems:
            print(f"expect: {app}: FAILED: {p}")
        sys.exit(1)
    print(f"expect: {app}: ok (top finding: {costed[0]['kind'] if costed else 'none'})")


if __name__ == "__main__":
    main()
