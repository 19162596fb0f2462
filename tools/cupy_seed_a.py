#!/usr/bin/python3
"""CuPy's straightforward seed-A (what a CUDA user writes first), for
comparison with `clscale bench --workload seed-a` on the same machine:
per matrix, cp.asarray, min(0), max(0), (x - mn) / (mx - mn), cp.asnumpy
into the caller's (pageable) output. Median of 5 after a warm-up; the
result is checked against numpy's. Needs CuPy and an NVIDIA GPU (not a
dependency of clscale)."""
import statistics
import time

import cupy as cp
import numpy as np

rng = np.random.default_rng(20261122)
x = rng.uniform(-50.0, 150.0, size=(18, 60, 98450))
y = np.empty_like(x)


def run():
    for b in range(x.shape[0]):
        g = cp.asarray(x[b])
        mn = g.min(0)
        mx = g.max(0)
        y[b] = cp.asnumpy((g - mn) / (mx - mn))


run()
mn = x.min(1, keepdims=True)
mx = x.max(1, keepdims=True)
err = np.max(np.abs(y - (x - mn) / (mx - mn)))
times = []
for _ in range(5):
    t = time.perf_counter()
    run()
    times.append(time.perf_counter() - t)
moved = 2 * x.nbytes
med = statistics.median(times)
print(f"cupy seed-a: median {med * 1e3:.1f} ms ({moved / med / 1e9:.2f} GB/s), "
      f"min {min(times) * 1e3:.1f} max {max(times) * 1e3:.1f} ms, max error {err:.3g}, "
      f"cupy {cp.__version__}, {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
