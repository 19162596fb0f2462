#!/usr/bin/python3
"""numpy's straightforward seed-A (what a user writes first), for comparison
with `clscale bench --workload seed-a` on the same machine:
per matrix, x.min(0), x.max(0), (x - mn) / (mx - mn). Median of 5 after a
warm-up. Needs python3-numpy (not a dependency of clscale)."""
import numpy as np

from seed_a import data, time_it

x, y = data()


def run():
    for b in range(x.shape[0]):
        mn = x[b].min(0)
        mx = x[b].max(0)
        y[b] = (x[b] - mn) / (mx - mn)


time_it("numpy", run, x.nbytes, f", numpy {np.__version__}")
