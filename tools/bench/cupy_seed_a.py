#!/usr/bin/python3
"""CuPy's straightforward seed-A (what a CUDA user writes first), for
comparison with `clscale bench --workload seed-a` on the same machine:
per matrix, cp.asarray, min(0), max(0), (x - mn) / (mx - mn), cp.asnumpy
into the caller's (pageable) output. Median of 5 after a warm-up; the
result is checked against numpy's. Needs CuPy and an NVIDIA GPU (not a
dependency of clscale)."""
import cupy as cp
import numpy as np

from seed_a import data, time_it

x, y = data()


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
time_it("cupy", run, x.nbytes,
        f", max error {err:.3g}, cupy {cp.__version__}, "
        f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
