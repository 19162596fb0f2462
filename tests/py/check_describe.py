"""Checks `clscale describe --json` against numpy (and pandas for the
duplicate rows when python3-pandas is installed; else numpy's
unique(axis=0) over rows made canonical: every NaN one NaN, -0.0 as 0.0,
which is what pandas' duplicated() counts) on hostile columns with repeated
rows, both scopes, float64 and float32, through .npy files. Run by meson
(tests/meson.build) with Debian's /usr/bin/python3:
python3 check_describe.py CLSCALE TMPDIR. Exit 0 when every check passes;
each failure prints one line."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np

import toolcheck
from toolcheck import fail

try:
    import pandas
except ImportError:
    pandas = None

warnings.simplefilter("ignore")  # all-NaN columns: numpy's "All-NaN slice" warnings
tool, tmp = sys.argv[1], sys.argv[2]
os.makedirs(tmp, exist_ok=True)


def hostile(batch, rows, seed, dtype):
    r = np.random.default_rng(seed)
    n = batch * rows
    cols = [
        r.normal(1, 3, n),
        r.integers(-2, 3, n).astype(float),                             # ties
        r.standard_cauchy(n),                                           # heavy tails
        np.where(r.random(n) < 0.2, np.nan, r.normal(size=n)),          # missing
        np.where(r.random(n) < 0.1, np.inf, r.normal(size=n)),          # +inf is missing
        np.full(n, 7.25),                                               # constant
        np.full(n, np.nan),                                             # all missing
        1e6 + r.normal(0, 0.01, n),                                     # large offset
        np.where(r.random(n) < 0.3, 0.0, r.integers(0, 2, n)),          # zeros
    ]
    x = np.stack(cols, axis=1)
    for k in range(n // 3):  # repeated rows, some with -0.0 and another NaN
        a, b = r.integers(0, n, 2)
        row = x[a].copy()
        if k % 2:
            row[row == 0] = -0.0
            row[np.isnan(row)] = -np.nan
        x[b] = row
    return x.reshape(batch, rows, len(cols)).astype(dtype)


def ref_duplicates(m):
    if pandas is not None:
        return int(pandas.DataFrame(m).duplicated().sum())
    a = m.copy()
    a[np.isnan(a)] = np.nan
    a[a == 0] = 0.0
    a = np.ascontiguousarray(a)
    rows = a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()
    return len(rows) - len(np.unique(rows))


def same(a, b):
    return (a is None and (b is None or np.isnan(b))) or (a is not None and a == b)


def check(batch, rows, seed, dtype, scope, sigma):
    x = hostile(batch, rows, seed, dtype)
    path = os.path.join(tmp, f"describe-{seed}-{np.dtype(dtype).name}.npy")
    np.save(path, x)
    args = [tool, "describe", "--json", "--scope", scope] + (["--sigma", str(sigma)] if sigma else [])
    p = subprocess.run(args + [path], capture_output=True, text=True)
    what = f"{np.dtype(dtype).name} {x.shape} {scope}"
    if p.returncode != 0:
        fail(f"{what}: exit {p.returncode}: {p.stderr.strip()}")
        return
    d = json.loads(p.stdout)
    groups = x if scope == "matrix" else x.reshape(1, -1, x.shape[2])
    if d["duplicate_rows"] != sum(ref_duplicates(g) for g in groups):
        fail(f"{what}: duplicate_rows {d['duplicate_rows']}")
    k = sigma or 3
    for gi, g in enumerate(groups):
        jg = d["groups"][gi]
        if jg["duplicate_rows"] != ref_duplicates(g):
            fail(f"{what} group {gi}: duplicate_rows {jg['duplicate_rows']} != {ref_duplicates(g)}")
        f = np.where(np.isfinite(g), g, np.nan)
        want = {
            "count": np.sum(np.isfinite(g), axis=0), "missing": np.sum(~np.isfinite(g), axis=0),
            "min": np.nanmin(f, axis=0), "max": np.nanmax(f, axis=0),
            "25%": np.nanpercentile(f, 25, axis=0), "50%": np.nanmedian(f, axis=0),
            "75%": np.nanpercentile(f, 75, axis=0),
        }
        mean = np.nanmean(f.astype(np.float64), axis=0)
        std = np.nanstd(f.astype(np.float64), axis=0)
        tol = 1e-9 if dtype == np.float64 else 1e-5
        for c, jc in enumerate(jg["columns"]):
            for key, w in want.items():
                if not same(jc[key], float(w[c])):
                    fail(f"{what} group {gi} column {c} {key}: {jc[key]!r} != {float(w[c])!r}")
            for key, w in (("mean", mean[c]), ("std", std[c])):
                got = jc[key]
                if (got is None) != bool(np.isnan(w)) or (got is not None and abs(got - w) > tol * max(1, abs(w))):
                    fail(f"{what} group {gi} column {c} {key}: {got!r} != {w!r}")
            # outliers from the tool's own mean and std, in the data's dtype
            if jc["mean"] is not None:
                m, t = dtype(jc["mean"]), dtype(k * jc["std"])
                v = f[:, c][np.isfinite(f[:, c])]
                n = int(np.sum(np.abs(v - m) > t))
                if jc["outliers"] != n:
                    fail(f"{what} group {gi} column {c} outliers: {jc['outliers']} != {n}")


def usage_and_failures():
    """Bad options exit 2 naming the option, unreadable input exits 1; nothing on stdout either way."""
    good = os.path.join(tmp, "good.npy")
    np.save(good, np.arange(12.0).reshape(4, 3))
    bad = os.path.join(tmp, "bad.npy")
    with open(bad, "wb") as f:
        f.write(b"not a numpy file")
    cases = [
        (["--sigma", "0", good], 2, "--sigma"), (["--sigma", "-1", good], 2, "--sigma"),
        (["--sigma", "nan", good], 2, "--sigma"), (["--sigma", "3x", good], 2, "--sigma"),
        (["--scope", "rows", good], 2, "--scope"), (["--frobnicate", good], 2, "--frobnicate"),
        ([], 2, "no input"), ([good, good], 2, "one input"),
        ([os.path.join(tmp, "absent.npy")], 1, "absent.npy"), ([bad], 1, "bad.npy"),
    ]
    for args, code, says in cases:
        p = subprocess.run([tool, "describe"] + args, capture_output=True, text=True)
        if p.returncode != code or p.stdout or says not in p.stderr:
            fail(f"describe {args}: exit {p.returncode} (want {code}), stdout {p.stdout[:40]!r}, "
                 f"stderr {p.stderr.strip()[:120]!r} (want {says!r})")
    p = subprocess.run([tool, "describe", good], capture_output=True, text=True)
    if p.returncode != 0 or "0 duplicate rows" not in p.stdout:
        fail(f"describe table: exit {p.returncode}: {p.stdout[:200]!r}")


usage_and_failures()
check(3, 40, 1, np.float64, "matrix", 0)
check(3, 40, 2, np.float64, "batch", 2)
check(2, 90, 3, np.float32, "matrix", 1.5)
check(1, 700, 4, np.float64, "matrix", 2.5)   # long columns: radix passes
check(1, 300, 5, np.float32, "batch", 0)
print(f"describe against numpy ({'pandas' if pandas else 'numpy unique'} for duplicates): "
      f"{toolcheck.failures} failure(s)")
sys.exit(1 if toolcheck.failures else 0)
