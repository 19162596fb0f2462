#!/usr/bin/python3
"""numpy's straightforward seed-A (what a user writes first), for comparison
with `clscale bench --workload seed-a` on the same machine:
per matrix, x.min(0), x.max(0), (x - mn) / (mx - mn). Median of 5 after a
warm-up. Needs python3-numpy (not a dependency of clscale)."""
import statistics
import time

import numpy as np

rng = np.random.default_rng(20261122)
x = rng.uniform(-50.0, 150.0, size=(18, 60, 98450))
y = np.empty_like(x)


def run():
    for b in range(x.shape[0]):
        mn = x[b].min(0)
        mx = x[b].max(0)
        y[b] = (x[b] - mn) / (mx - mn)


run()
times = []
for _ in range(5):
    t = time.perf_counter()
    run()
    times.append(time.perf_counter() - t)
moved = 2 * x.nbytes
med = statistics.median(times)
print(f"numpy seed-a: median {med * 1e3:.1f} ms ({moved / med / 1e9:.2f} GB/s), "
      f"min {min(times) * 1e3:.1f} max {max(times) * 1e3:.1f} ms, numpy {np.__version__}")
