"""What the tool's checks (check_*.py) share: the count of checks and
failures, running the tool, comparing with a float64 reference, and columns
that break naive code. Each check script imports it from its own folder."""
import subprocess
import sys

import numpy as np

checks = 0
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL:", msg)


def check(ok, msg):
    global checks
    checks += 1
    if not ok:
        fail(msg)


def compare(name, got, want, tol):
    """got (None: the tool failed, already counted) against a float64
    reference: the same shape, NaN at the same places, the rest within tol
    relative to max(1, |want|)."""
    global checks
    checks += 1
    if got is None:
        return
    if got.shape != want.shape:
        return fail(f"{name}: shape {got.shape} != {want.shape}")
    gn, wn = np.isnan(got), np.isnan(want)
    if not np.array_equal(gn, wn):
        return fail(f"{name}: NaN positions differ ({gn.sum()} vs {wn.sum()})")
    d = np.abs(got[~gn].astype(float) - want[~wn]) / np.maximum(1, np.abs(want[~wn]))
    if d.size and d.max() > tol:
        fail(f"{name}: max relative difference {d.max():.3g} > {tol}")


def run(tool, args, env=None):
    """The tool's exit status and stderr."""
    p = subprocess.run([tool, *args], capture_output=True, text=True, env=env)
    return p.returncode, p.stderr


def hostile(rows, seed, dtype, offset=True, last=(np.nan, 0.5), outliers=False, infs=False):
    """Columns of `rows` values: normal, ties, heavy tails, 20% NaN,
    constant, all NaN, a large offset (unless offset=False), and exponential
    values of which a fraction last[1] are last[0] (NaN or a sentinel).
    outliers plants 40 and -25, infs +Inf and -Inf (rows > 5)."""
    r = np.random.default_rng(seed)
    cols = [
        r.normal(1, 3, rows),
        r.integers(-2, 3, rows).astype(float),                       # ties
        r.standard_cauchy(rows),                                     # heavy tails
        np.where(r.random(rows) < 0.2, np.nan, r.normal(size=rows)),
        np.full(rows, 7.25),                                         # constant
        np.full(rows, np.nan),                                       # all missing
    ]
    if offset:
        cols.append(1e6 + r.normal(0, 0.01, rows))
    cols.append(np.where(r.random(rows) < last[1], last[0], r.exponential(size=rows)))
    x = np.stack(cols, axis=1)
    if rows > 5 and outliers:
        x[rows // 3, 0] = 40.0
        x[rows // 2, 3] = -25.0
    if rows > 5 and infs:
        x[rows // 4, len(cols) - 1] = np.inf
        x[rows // 5, 1] = -np.inf
    return x.astype(dtype)


def finish():
    """Print the counts and exit: 0 when nothing failed."""
    print(f"{checks} checks, {failures} failures")
    sys.exit(1 if failures else 0)
