"""3-sigma clipping to convergence: clscale beside astropy, in one run.

The ratio is what this measures: both rows run in the same process on the
same data, taking turns (the order alternates every round), after a warm-up
round (kernel builds); the median of the rounds is reported.

Data: seed-A's shape cut to 18 x 60 x COLS float64 (default 20000, the
shape of clscale-clean-bench 18 60 20000), normal (mean 10, sd 2) with 5%
NaN, numpy's default_rng(12345). Statistics per matrix (scope "matrix"), so astropy runs
sigma_clip(x[b], sigma=3, maxiters=None, axis=0) per matrix, as the library
does.

    PYTHONPATH=build/python /usr/bin/python3 tools/bench/clip_astropy.py \
        [--cols 20000] [--batch 18] [--rows 60] [--repeats 5] [--dtype f64]

Rows: clscale SigmaClip (one pass: each column sorted once) and astropy. The masks are compared on the first matrix.

--raw FILE: astropy (and numpy's nanpercentile) alone, on a machine where
clscale's Python package does not load (another Python): the data goes to
FILE for `clscale-clean-bench BATCH ROWS COLS REPEATS --raw FILE` (its
"3-sigma clip" and "median and quartiles" rows time the same calls on the
same values).

Where the one-pass kernel's time goes (its stages): `clscale-clip-kernels
B R C N --stages` in a build configured with -Dbench_stages=true (the
library's switch clip_stage, which Python does not reach).
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
    ap.add_argument("--raw", metavar="FILE",
                    help="astropy alone: write the data to FILE (numpy's tofile) for "
                         "clscale-clean-bench B R C N --raw FILE in another process, and time astropy")
    a = ap.parse_args()

    from astropy.stats import sigma_clip

    rng = np.random.default_rng(12345)
    x = rng.normal(10, 2, (a.batch, a.rows, a.cols))
    x[rng.random(x.shape) < 0.05] = np.nan
    x = x.astype(np.float32 if a.dtype == "f32" else np.float64)
    if a.raw:
        x.tofile(a.raw)
    else:
        import clscale

    def lib():
        return clscale.SigmaClip(3, maxiters=None).fit_transform(x)

    def astro():
        return [sigma_clip(x[b], sigma=3, maxiters=None, axis=0) for b in range(a.batch)]

    def pct():
        return [np.nanpercentile(x[b], [25, 50, 75], axis=0) for b in range(a.batch)]

    if a.raw:
        rows = [("astropy sigma_clip(axis=0, maxiters=None) per matrix", astro),
                ("numpy nanpercentile([25, 50, 75], axis=0) per matrix", pct)]
    else:
        rows = [("clscale SigmaClip(3, maxiters=None)", lib)]
        rows.append(("astropy sigma_clip(axis=0, maxiters=None) per matrix", astro))
    times = {name: [] for name, _ in rows}
    for r in range(-1, a.repeats):
        order = rows if r % 2 == 0 else rows[::-1]
        for name, fn in order:
            t0 = time.perf_counter()
            out = fn()
            dt = time.perf_counter() - t0
            if r >= 0:
                times[name].append(dt)
            if r == -1 and fn is lib:
                y = out
            if r == -1 and fn is astro:
                m = out
    head = f"{a.batch} x {a.rows} x {a.cols} {a.dtype} ({x.nbytes / 1e6:.0f} MB), 5% NaN, " \
           f"median of {a.repeats} after a warm-up, rows alternating; load {os.getloadavg()[0]:.2f}"
    med = {name: statistics.median(t) for name, t in times.items()}
    if a.raw:
        print(f"clip bench, astropy and numpy alone (data in {a.raw}): {head}")
        for name, _ in rows:
            print(f"  {name:55s} {med[name]:8.4f} s")
        return 0
    same = np.array_equal(np.isnan(y[0]), np.ma.getmaskarray(m[0]) | np.isnan(x[0]))
    print(f"clip bench: {head}")
    base = med[rows[-1][0]]
    for name, _ in rows:
        print(f"  {name:55s} {med[name]:8.3f} s   astropy / this: {base / med[name]:6.2f}x")
    print(f"  masks equal to astropy's on matrix 0: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
