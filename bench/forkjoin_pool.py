#!/usr/bin/env python3
"""Pools several runs of bench/forkjoin.sh (same build, same machine) into one result.

Usage: bench/forkjoin.sh --runs 30 2> run1.log; ... ; bench/forkjoin_pool.py run1.log run2.log ...

Reads the per-pair progress lines that forkjoin.sh writes to stderr ("  Fft 3/30: A 1.5s/2.8s
cpu  B 1.6s/2.9s cpu"; pair 0, the warm-up, is skipped) and prints, per workload, the ratio of
the median wall times over all pairs, then their geometric mean with a 95% bootstrap interval
(each side's runs resampled per workload, 2,000 resamples, fixed seed: forkjoin.sh's method).
"""
import math
import random
import re
import statistics
import sys

LINE = re.compile(r"\s+(\w+) (\d+)/\d+: A ([\d.]+)s/[\d.]+s cpu\s+B ([\d.]+)s")


def main(paths):
    runs = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                m = LINE.match(line)
                if not m or m.group(2) == "0":
                    continue
                a, b = runs.setdefault(m.group(1), ([], []))
                a.append(float(m.group(3)))
                b.append(float(m.group(4)))
    if not runs:
        sys.exit("forkjoin_pool.py: no pair lines in " + ", ".join(paths))
    ratios = {k: statistics.median(b) / statistics.median(a) for k, (a, b) in runs.items()}
    geo = math.exp(sum(math.log(r) for r in ratios.values()) / len(ratios))
    rng = random.Random(1)

    def resampled():
        s = 0.0
        for a, b in runs.values():
            rb = statistics.median(rng.choices(b, k=len(b)))
            ra = statistics.median(rng.choices(a, k=len(a)))
            s += math.log(rb / ra)
        return math.exp(s / len(runs))

    boot = sorted(resampled() for _ in range(2000))
    lo, hi = boot[int(0.025 * len(boot))], boot[int(0.975 * len(boot)) - 1]
    print("| workload | pairs | A wall s | B wall s | wall ratio |")
    print("|---|---:|---:|---:|---:|")
    for k, (a, b) in runs.items():
        print(f"| {k} | {len(a)} | {statistics.median(a):.3f} | {statistics.median(b):.3f} | {ratios[k]:.3f} |")
    print()
    print(f"geometric mean of the wall ratios over {len(ratios)} workloads: {geo:.3f} "
          f"(95% bootstrap interval {lo:.3f}-{hi:.3f})")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
