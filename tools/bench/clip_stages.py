"""Where the one-pass clipping kernel's time goes (cl/clip.cl), in one run.

Rows take turns (the order alternates every round) after a warm-up round;
the median of the rounds is reported. CLSCALE_CLIP_STAGE (read by
src/engine/clip_fast.c, benches only) cuts the kernel short:
  1  load the columns and write them (no sort, no clipping)
  2  also sort them (the sorting network)
  3  also the sums over the sorted values (and the row-order moments
     where they are read: not here); everything but the iterations
  -  the whole clipping to convergence (3 sigma, median, std, masked)
plus min-max fit-transform alone, the floor the issue compares with.
Data: as tools/bench/clip_astropy.py (18 x 60 x COLS float64, 5% NaN).

    PYTHONPATH=build/python /usr/bin/python3 tools/bench/clip_stages.py \
        [--cols 20000] [--repeats 5] [--dtype f64]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=18)
    ap.add_argument("--rows", type=int, default=60)
    ap.add_argument("--cols", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dtype", default="f64", choices=["f32", "f64"])
    a = ap.parse_args()

    import clscale

    rng = np.random.default_rng(12345)
    x = rng.normal(10, 2, (a.batch, a.rows, a.cols))
    x[rng.random(x.shape) < 0.05] = np.nan
    x = x.astype(np.float32 if a.dtype == "f32" else np.float64)

    def clip(stage):
        def f():
            if stage:
                os.environ["CLSCALE_CLIP_STAGE"] = stage
            try:
                return clscale.SigmaClip(3, maxiters=None).fit_transform(x)
            finally:
                os.environ.pop("CLSCALE_CLIP_STAGE", None)
        return f

    def minmax():
        return clscale.MinMaxScaler().fit_transform(x)

    rows = [("load + store only", clip("1")), ("load + sort + store", clip("2")),
            ("load + sort + sums + store", clip("3")),
            ("whole clipping", clip(None)), ("min-max fit-transform", minmax)]
    times = {name: [] for name, _ in rows}
    for r in range(-1, a.repeats):
        order = rows if r % 2 == 0 else rows[::-1]
        for name, fn in order:
            t0 = time.perf_counter()
            fn()
            if r >= 0:
                times[name].append(time.perf_counter() - t0)
    print(f"clip stages: {a.batch} x {a.rows} x {a.cols} {a.dtype} ({x.nbytes / 1e6:.0f} MB), 5% NaN, "
          f"median of {a.repeats} after a warm-up, rows alternating; load {os.getloadavg()[0]:.2f}")
    whole = statistics.median(times["whole clipping"])
    for name, _ in rows:
        m = statistics.median(times[name])
        print(f"  {name:38s} {m:8.3f} s   {m / whole:6.2f} of the whole")
    return 0


if __name__ == "__main__":
    sys.exit(main())
