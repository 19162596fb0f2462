"""Checks `clscale clean` and `clscale normalize` with cleaning options
against scikit-learn's SimpleImputer and astropy's sigma_clip(axis=0) on
hostile columns (ties, heavy tails, missing values, constant, all-missing,
a large offset, one row, +-Inf, a sentinel), through .npy files, and the
usage errors that name their option. Run by meson (tests/meson.build) with
Debian's /usr/bin/python3: python3 check_impute_clip.py CLSCALE TMPDIR.
Exit 0 when every check passes; each failure prints one line."""
import os
import sys
import warnings

import numpy as np
from astropy.stats import sigma_clip
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import MinMaxScaler, StandardScaler

import toolcheck
from toolcheck import check, compare, fail

warnings.simplefilter("ignore")  # all-NaN columns
tool, tmp = sys.argv[1], sys.argv[2]
os.makedirs(tmp, exist_ok=True)


def run(*args):
    return toolcheck.run(tool, args)


def hostile(rows, seed, dtype):
    return toolcheck.hostile(rows, seed, dtype, last=(np.nan, 0.1), outliers=True)


def tool_out(args, x):
    inp, out = os.path.join(tmp, "in.npy"), os.path.join(tmp, "out.npy")
    np.save(inp, x)
    if os.path.exists(out):
        os.unlink(out)
    rc, err = run(*args, inp, out)
    if rc != 0:
        fail(f"{' '.join(args)}: exit {rc}: {err.strip()}")
        return None
    return np.load(out)


def imputed(x, strategy, fill=None, missing=np.nan):
    """SimpleImputer, keeping all-missing columns missing (clscale keeps the shape)."""
    x = x.astype(np.float64)
    want = x.copy()
    probe = x if np.isnan(missing) else np.where(x == missing, np.nan, x)
    keep = ~np.all(np.isnan(probe), axis=0)
    if strategy == "constant":
        keep[:] = True
    imp = SimpleImputer(missing_values=missing, strategy=strategy, fill_value=fill)
    want[:, keep] = imp.fit_transform(x[:, keep])
    if not np.isnan(missing):
        want[:, ~keep] = np.where(x[:, ~keep] == missing, np.nan, x[:, ~keep])
    return want


def clipped(x, **kw):
    c = sigma_clip(x.astype(np.float64), axis=0, masked=True, **kw)
    return np.where(np.ma.getmaskarray(c), np.nan, np.asarray(c.data)), np.ma.getmaskarray(c)


for dtype, tol in ((np.float64, 1e-12), (np.float32, 2e-6)):
    dn = np.dtype(dtype).name
    for rows in (1, 60, 1000):
        x = hostile(rows, rows, dtype)
        # imputation
        for strategy in ("mean", "median", "most_frequent"):
            got = tool_out(["clean", "--impute", strategy], x)
            # float32: scikit-learn's mean accumulates in float32; compare loosely
            compare(f"impute {strategy} {rows} rows {dn}", got, imputed(x, strategy),
                    tol if strategy != "mean" else max(tol, 1e-6 if dtype == np.float32 else tol))
        got = tool_out(["clean", "--impute", "constant:-1.5"], x)
        compare(f"impute constant {rows} rows {dn}", got, imputed(x, "constant", -1.5), tol)
        # sentinel: scikit-learn with missing_values=-9999 on data without NaN
        xs = np.nan_to_num(x.copy(), nan=-9999.0)
        for strategy in ("mean", "median", "most_frequent"):
            got = tool_out(["clean", "--missing-value", "-9999", "--impute", strategy], xs)
            compare(f"sentinel impute {strategy} {rows} rows {dn}", got,
                    imputed(xs, strategy, missing=-9999.0), max(tol, 1e-6) if strategy == "mean" else tol)
        if dtype != np.float64:
            continue  # astropy computes in float64: the bounds of float32 data differ in the last bits
        # sigma clipping, masked, against astropy
        for center, spread in (("median", "std"), ("mean", "std"), ("median", "mad_std"), ("mean", "mad_std")):
            for sig, iters, astro_iters in (("3", "5", 5), ("2.5", "none", None), ("2", "1", 1)):
                arg = sig if iters == "5" else f"{sig},{iters}"
                got = tool_out(["clean", "--sigma-clip", arg, "--clip-center", center, "--clip-spread", spread], x)
                want, _ = clipped(x, sigma=float(sig), maxiters=astro_iters, cenfunc=center, stdfunc=spread)
                # (the heavy-tailed column included: a mean-centred MAD clips all of
                # it in one iteration, the next one's bounds are NaN and, as
                # astropy's, clip nothing)
                compare(f"sigma-clip {arg} {center} {spread} {rows} rows", got, want, 0)
        got = tool_out(["clean", "--sigma-clip", "3", "--sigma-lower", "1.5", "--sigma-upper", "2"], x)
        want, _ = clipped(x, sigma=3, sigma_lower=1.5, sigma_upper=2, maxiters=5)
        compare(f"sigma-lower/upper {rows} rows", got, want, 0)
        # clamp: clipped values take the bound astropy returns
        c, lo, hi = sigma_clip(x, axis=0, sigma=2, maxiters=None, return_bounds=True, masked=True)
        m = np.ma.getmaskarray(c) & np.isfinite(x)
        want = np.where(m, np.clip(x, lo, hi), x)
        got = tool_out(["clean", "--sigma-clip", "2,none", "--clip-mode", "clamp"], x)
        compare(f"clamp {rows} rows", got, want, 1e-12)
        # clip then impute, then scale: fused (min-max, z-score) and not (robust)
        base, _ = clipped(x, sigma=3, maxiters=5)
        filled = imputed(base, "median")
        got = tool_out(["normalize", "--method", "zscore", "--sigma-clip", "3", "--impute", "median"], x)
        want = filled.copy()
        ok = ~np.all(np.isnan(filled), axis=0)
        want[:, ok] = StandardScaler().fit_transform(filled[:, ok])
        compare(f"clip+impute+zscore {rows} rows", got, want, 1e-7)
        got = tool_out(["normalize", "--method", "minmax", "--impute", "mean"], x)
        f2 = imputed(x, "mean")
        want = f2.copy()
        ok2 = ~np.all(np.isnan(f2), axis=0)
        want[:, ok2] = MinMaxScaler().fit_transform(f2[:, ok2])
        compare(f"impute+minmax {rows} rows", got, want, 1e-8)

# the one-kernel clipping's row counts around its sorting networks (32, 64)
for rows in (2, 3, 33, 64):
    x = hostile(rows, 100 + rows, np.float64)
    # (mean + mad_std: its bounds widen once the outliers are gone, and values
    # clipped early come back, as astropy's last bounds decide)
    for center, spread in (("median", "std"), ("median", "mad_std"), ("mean", "std"), ("mean", "mad_std")):
        got = tool_out(["clean", "--sigma-clip", "2,none", "--clip-center", center, "--clip-spread", spread], x)
        want, _ = clipped(x, sigma=2, maxiters=None, cenfunc=center, stdfunc=spread)
        compare(f"sigma-clip 2,none {center} {spread} {rows} rows", got, want, 0)
    c, lo, hi = sigma_clip(x, axis=0, sigma=2, maxiters=None, return_bounds=True, masked=True)
    m = np.ma.getmaskarray(c) & np.isfinite(x)
    got = tool_out(["clean", "--sigma-clip", "2,none", "--clip-mode", "clamp"], x)
    compare(f"clamp {rows} rows", got, np.where(m, np.clip(x, lo, hi), x), 1e-12)

# +-Inf are missing; a one-row file; a 3-D file per matrix
x = np.array([[1.0, np.inf], [2.0, -np.inf], [4.0, 3.0]])
compare("inf imputed", tool_out(["clean", "--impute", "mean"], x), np.array([[1.0, 3.0], [2.0, 3.0], [4.0, 3.0]]), 0)
x3 = np.stack([hostile(50, 7, np.float64), hostile(50, 8, np.float64)])
want = np.stack([imputed(m, "median") for m in x3])
compare("3-D per matrix", tool_out(["clean", "--impute", "median"], x3), want, 0)

# usage errors: exit 2, the option named, nothing written
inp, out = os.path.join(tmp, "in.npy"), os.path.join(tmp, "bad-out.npy")
np.save(inp, hostile(10, 1, np.float64))
for args, name in ((["--sigma-clip", "0"], "--sigma-clip"), (["--sigma-clip", "-1"], "--sigma-clip"),
                   (["--sigma-clip", "3,0"], "--sigma-clip"), (["--sigma-lower", "0"], "--sigma-lower"),
                   (["--impute", "constant:nan"], "--impute"), (["--missing-value", "nan"], "--missing-value"),
                   (["--impute", "mode"], "--impute"), (["--clip-mode", "clamp"], "--clip-mode"),
                   (["--clip-spread", "iqr", "--sigma-clip", "3"], "--clip-spread")):
    for cmd in (["clean"], ["normalize", "--method", "zscore"]):
        if os.path.exists(out):
            os.unlink(out)
        rc, err = run(*cmd, *args, inp, out)
        check(rc == 2 and name in err and not os.path.exists(out),
              f"{' '.join(cmd + args)}: exit {rc}, stderr {err.strip()!r}, output written {os.path.exists(out)}")
rc, err = run("normalize", "--method", "robust", "--quantile-range", "75,25", inp, out)
check(rc == 2 and "--quantile-range" in err and not os.path.exists(out),
      f"reversed --quantile-range: exit {rc}, stderr {err.strip()!r}")

toolcheck.finish()
