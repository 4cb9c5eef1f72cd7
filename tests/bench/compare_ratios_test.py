#!/usr/bin/env python3
"""bench/compare's ratios against perftest: best run against best run, and the paired median,
including perftest runs that printed 0 (perftest does when it could not time a run)."""
import importlib.machinery
import importlib.util
import sys

path = sys.argv[1]
loader = importlib.machinery.SourceFileLoader("compare", path)
spec = importlib.util.spec_from_loader("compare", loader)
compare = importlib.util.module_from_spec(spec)
loader.exec_module(compare)

failures = []


def expect(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


expect("best bw", compare.best_ratio("bw", [1.0, 3.0], [2.0, 4.0]), 0.75)
expect("best latency", compare.best_ratio("latency", [3.0, 2.0], [1.0, 4.0]), 2.0)
expect("best bw, perftest all 0", compare.best_ratio("bw", [1.0], [0.0]), None)
expect("best latency, a perftest 0", compare.best_ratio("latency", [2.0], [0.0, 4.0]), None)
expect("best without runs", compare.best_ratio("bw", [], [1.0]), None)
expect("paired", compare.paired_ratio([(1.0, 2.0), (3.0, 3.0), (2.0, 1.0)]), 1.0)
expect("paired skips perftest 0", compare.paired_ratio([(1.0, 0.0), (3.0, 2.0)]), 1.5)
expect("paired without pairs", compare.paired_ratio([(1.0, 0.0)]), None)

for failure in failures:
    print("FAIL", failure)
print(f"{8 - len(failures)} of 8 passed")
sys.exit(1 if failures else 0)
