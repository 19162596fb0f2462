"""What the workloads of `python -m clscale.bench` share: the seed of the
call-by-call ones (_bench_shapes.py, _bench_lightcurves.py), the timing
of one call, and rows taking turns (bench.py, _bench_loops.py)."""
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


def time_rows(rows, repeats, flush=None):
    """Runs every row once per round (one warm-up round first), in turn;
    returns {name: [seconds]}; a row with its own C timings reports those."""
    times = {r[0]: [] for r in rows}
    for rnd in range(repeats + 1):
        # forward, then backward: no row always follows the same one
        for r in (rows if rnd % 2 == 0 else rows[::-1]):
            if flush is not None:
                flush += 1.0  # evicts the caches (a write over the buffer)
            t0 = time.perf_counter()
            r[2]()
            dt = time.perf_counter() - t0
            if rnd:
                times[r[0]].append(dt)
    for r in rows:
        if len(r) > 3:  # the C-timed row: the library call alone, measured in C
            times[r[0]] = r[3][1:]  # the warm-up round's call left out
    return times
