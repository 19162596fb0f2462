"""What tools/numpy_seed_a.py and tools/cupy_seed_a.py share: seed-A's data
(18 x 60 x 98450 float64, the bench's seed) and the timing (median of 5
after a warm-up, GB/s counting one read and one write of the data)."""
import statistics
import time

import numpy as np


def data():
    rng = np.random.default_rng(20261122)
    x = rng.uniform(-50.0, 150.0, size=(18, 60, 98450))
    return x, np.empty_like(x)


def time_it(name, run, nbytes, extra=""):
    run()
    times = []
    for _ in range(5):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    med = statistics.median(times)
    print(f"{name} seed-a: median {med * 1e3:.1f} ms ({2 * nbytes / med / 1e9:.2f} GB/s), "
          f"min {min(times) * 1e3:.1f} max {max(times) * 1e3:.1f} ms{extra}")
