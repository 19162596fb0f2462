"""What the call-by-call workloads of `python -m clscale.bench`
(_bench_shapes.py, _bench_lightcurves.py) share: their seed and the timing
of one call."""
import time

import numpy as np

SEED = 20261128


def median_time(f, repeats):
    """The median of `repeats` timed calls of f() after one warm-up (one
    call only when the first takes over 2 s), and how many were timed."""
    f()
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
        if ts[0] > 2.0:
            break
    return float(np.median(ts)), len(ts)
