"""python -m clscale.bench: the Python API against the C library, numpy and
scikit-learn on the benchmark's workloads, in one run, as JSON (like
`clscale bench --json`).

  seed-a  min-max scaling of 18 matrices of 60 x 98450 float64, statistics
          per matrix (and z-score, the same shape): clscale's estimators
          (into a given `out`, and with a new output array each call), the
          same library call timed in C inside the extension (no Python in the
          timed span), numpy per matrix, scikit-learn per matrix.
  seed-a-loop  (with seed-a) the same data as a scikit-learn user's loop:
          `for i: y[i] = MinMaxScaler().fit_transform(x[i])` against
          scikit-learn's same loop; one 2-D and one 3-D call against
          numpy's allocate-and-copy of the same array (_bench_loops.py).
          Alone, without seed-a's rows: --workload seed-a-loop;
          seed-a-loop-f32 the same values in float32 (not in the default
          --workload).
  seed-b  discount of 100 x 4000 x 5 float64 by factors 4000 x 5: Discount,
          the same call timed in C, numpy's multiply into `out`.
  quantiles  median and quartiles (25, 50, 75 %, exact: cls_quantiles) of
          seed-A's shape per matrix, against one min-max pass over the same
          data (cls_fit: the statistics' read pass; cls_fit_transform: the
          scaling pass) and numpy's nanpercentile(axis=0) per matrix (and
          percentile(axis=0), numpy's path for data without NaN). numpy's
          nanpercentile takes seconds per matrix: it runs on the first
          --numpy-matrices matrices (default 2), and its ratio is over
          clscale.nanpercentile timed on the same matrices (no scaling). Also
          clscale.nanpercentile(x, [25, 50, 75], axis=1) on the batch, numpy's call.
  sigma-clip  3-sigma clipping to convergence of 18 x 60 x 20000 float64
          (5% NaN) per matrix: clscale.sigma_clip(x, axis=1) (astropy's
          call, a masked array), the SigmaClip estimator, the library call
          into a reused output, and astropy's sigma_clip(x, axis=1) when
          astropy is installed (masks compared); sigma_clipped_stats beside
          astropy's (mean, median, std compared).
  impute  mean imputation + z-score of 2,000,000 x 8 float32 (rows scaled by
          --size) with 5% NaN: clscale.make_pipeline(SimpleImputer(),
          StandardScaler()) (one fused call), the same two clscale steps one
          after the other, StandardScaler alone on the same data without NaN,
          scikit-learn's make_pipeline(SimpleImputer(), StandardScaler()), and
          StandardScaler on the data with NaN (not imputed), SimpleImputer
          alone (clscale's and scikit-learn's), and the library
          calls (fused; z-score alone without NaN and with NaN) timed in C. impute-seed-a: the same
          rows on 18 x 60 x 20000 float64 (batch scaled by --size),
          statistics per matrix (scikit-learn per matrix). Neither is in
          the default --workload.
  shapes  exact statistics and cleaning at every group length (1 to 10^7
          values per group): robust scaling, quantiles, median imputation
          and sigma clipping as multiples of one min-max call and against
          scikit-learn, numpy and astropy (clscale/_bench_shapes.py says
          what each row runs); --svg FILE draws the speed-ups. Not in the
          default --workload.
  lightcurves  2000 light curves x 4000 cadences x 2 bands float64 along
          time: savgol_filter(x, 101, 2, axis=1) and uniform_filter1d(x,
          101, axis=1) against scipy's, bins against one min-max call,
          flatten and clip + flatten + bin + min-max against lightkurve's
          loop where it is installed and --lk-curves N is given (both
          on the first N light curves)
          (clscale/_bench_lightcurves.py). Not in the default --workload.
  memory  a fresh process transforms seed-A in place (copy=False; and
          another the library call itself): the peak RSS during the call
          against the RSS with the array and the array's size.

Every row of a workload runs once per round, in order on even rounds and
in reverse order on odd ones, after one warm-up round; times are medians of the rounds. Each result is checked
against numpy in float64. Options: --json FILE (default: stdout),
--repeats N, --devices SEL, --workload seed-a,seed-b, --size F (scales the
batch, as `clscale bench --size`), --no-memory.
"""
import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

from . import _bench_loops, _clscale
from ._bench_calls import time_rows as _time_rows
from ._context import context
from ._clean import SigmaClip
from ._discount import Discount
from ._functions import nanpercentile, sigma_clip, sigma_clipped_stats
from ._scalers import MinMaxScaler, StandardScaler

SEED = 20261122


def _flush(buf):
    """Evicts the caches (a 64 MiB write) before a call on small data."""
    buf += 1.0


def _seed_a(size):
    b = max(1, round(18 * size))
    x = np.empty((b, 60, 98450))
    np.random.default_rng(SEED).random(out=x)
    x *= 200.0
    x -= 50.0
    return x


def _minmax_ref(x):
    y = np.empty_like(x)
    for b in range(x.shape[0]):
        mn, mx = x[b].min(0), x[b].max(0)
        np.divide(x[b] - mn, mx - mn, out=y[b])
    return y


def _zscore_ref(x):
    y = np.empty_like(x)
    for b in range(x.shape[0]):
        np.divide(x[b] - x[b].mean(0), x[b].std(0), out=y[b])
    return y


def _rows_seed_a(x, y, devices, method):
    """(name, kind, function) rows for seed-A with `method` minmax|zscore."""
    import sklearn.preprocessing as skp

    cls, skcls = (MinMaxScaler, skp.MinMaxScaler) if method == "minmax" else (StandardScaler, skp.StandardScaler)
    code = _clscale.MINMAX if method == "minmax" else _clscale.ZSCORE
    est = cls(scope="matrix", devices=devices)
    c_times = []

    def c_call():
        with context(devices) as ctx:
            c_times.append(ctx.timed("fit_transform", x, y, scaler=code, scope=_clscale.SCOPE_MATRIX)[0])

    def numpy_call():
        for b in range(x.shape[0]):
            if method == "minmax":
                mn, mx = x[b].min(0), x[b].max(0)
                np.divide(x[b] - mn, mx - mn, out=y[b])
            else:
                np.divide(x[b] - x[b].mean(0), x[b].std(0), out=y[b])

    def sklearn_call():
        for b in range(x.shape[0]):
            y[b] = skcls().fit_transform(x[b])

    name = cls.__name__
    return [
        (f"clscale {name}.fit_transform(x, out=y)", "python", lambda: est.fit_transform(x, out=y)),
        (f"clscale {name}.fit_transform(x) (new output array)", "python-alloc", lambda: est.fit_transform(x)),
        ("C library cls_fit_transform, timed in C", "c", c_call, c_times),
        (f"numpy per matrix ({method})", "numpy", numpy_call),
        (f"scikit-learn {name} per matrix", "sklearn", sklearn_call),
    ]


def _summary(ts):
    return {"unit": "s", "repeats": ts, "median": statistics.median(ts), "min": min(ts), "max": max(ts)}


def _result(name, kind, ts, nbytes, c_med, peers, err):
    med = statistics.median(ts)
    d = {"name": name, "kind": kind, "times": _summary(ts), "gbs": nbytes / med / 1e9, "max_error": err}
    if kind.startswith("python"):
        d["ratio_to_c"] = med / c_med
        d["speedup"] = {k: v / med for k, v in peers.items()}
    return d


def _run_seed_a(args, results):
    x = _seed_a(args.size)
    y = np.empty_like(x)
    nbytes = 2 * x.nbytes
    for method, ref in (("minmax", _minmax_ref), ("zscore", _zscore_ref)):
        want = ref(x)
        rows = _rows_seed_a(x, y, args.devices, method)
        times = _time_rows(rows, args.repeats)
        errors = {}
        for r in rows:  # each row's output, once more, against numpy
            y.fill(np.nan)
            out = r[2]()
            got = y if out is None or (isinstance(out, np.ndarray) and out is y) else out
            errors[r[0]] = float(np.nanmax(np.abs(got - want)))
        c_med = statistics.median(times[rows[2][0]])
        peers = {r[1]: statistics.median(times[r[0]]) for r in rows if r[1] in ("numpy", "sklearn")}
        peers["c"] = c_med
        results.append({
            "name": "seed-a" if method == "minmax" else "seed-a-zscore",
            "description": f"{'min-max' if method == 'minmax' else 'z-score'} scaling of {x.shape[0]} matrices "
                           f"of 60 x 98450 float64, statistics per matrix",
            "dtype": "float64", "shape": list(x.shape), "bytes": nbytes,
            "runs": [_result(r[0], r[1], times[r[0]], nbytes, c_med, peers, errors[r[0]]) for r in rows]})
        if method == "minmax":
            # the same data as a scikit-learn user's loop writes it
            results.append(_bench_loops.loops(x, y, want, args.repeats, args.devices))
        del want


def _run_loops(args, results, dtype):
    """seed-a-loop (float64) or seed-a-loop-f32 (the same values rounded
    to float32) alone, without seed-a's rows."""
    x = _seed_a(args.size).astype(dtype)
    want = _minmax_ref(x.astype(np.float64))
    results.append(_bench_loops.loops(x, np.empty_like(x), want, args.repeats, args.devices))


def _run_quantiles(args, results):
    x = _seed_a(args.size)
    y = np.empty_like(x)
    q = [0.25, 0.5, 0.75]
    nb = x.shape[0]
    nm = max(1, min(nb, args.numpy_matrices))
    times_c = {"q": [], "fit": [], "ft": []}
    got = {}
    with context(args.devices) as ctx:

        def quantiles():
            out, t = _clscale.quantiles(ctx, x, q, scope=_clscale.SCOPE_MATRIX)
            got["q"] = out
            times_c["q"].append(t[0])

        def fit():
            times_c["fit"].append(ctx.timed("fit", x, scaler=_clscale.MINMAX, scope=_clscale.SCOPE_MATRIX)[0])

        def fit_transform():
            times_c["ft"].append(ctx.timed("fit_transform", x, y, scaler=_clscale.MINMAX,
                                           scope=_clscale.SCOPE_MATRIX)[0])

        def nanpct():
            got["np"] = np.stack([np.nanpercentile(x[b], [25, 50, 75], axis=0) for b in range(nm)])

        def function_nm():
            got["fn_nm"] = nanpercentile(x[:nm], [25, 50, 75], axis=1, devices=args.devices)

        def function():
            # numpy's call, per matrix: axis 1 of the batch (no copy; includes the +-Inf scan)
            got["fn"] = nanpercentile(x, [25, 50, 75], axis=1, devices=args.devices)

        def pct():
            for b in range(nb):
                np.percentile(x[b], [25, 50, 75], axis=0)

        rows = [
            ("C library cls_quantiles (25, 50, 75 %), timed in C", "c", quantiles, times_c["q"]),
            ("clscale.nanpercentile(x, [25, 50, 75], axis=1) (Python, numpy's arguments)", "python", function),
            ("C library cls_fit min-max (statistics: one read pass), timed in C", "c-minmax-fit", fit, times_c["fit"]),
            ("C library cls_fit_transform min-max (one scaling pass), timed in C", "c-minmax", fit_transform,
             times_c["ft"]),
            (f"numpy nanpercentile(axis=0) per matrix, {nm} of {nb} matrices", "numpy-nan", nanpct),
            (f"clscale.nanpercentile(x[:{nm}], [25, 50, 75], axis=1): numpy's {nm} matrices", "python-nm",
             function_nm),
            ("numpy percentile(axis=0) per matrix (no NaN handling)", "numpy", pct),
        ]
        times = _time_rows(rows, args.repeats)
    exact = bool(np.array_equal(got["q"][:nm], got["np"]))
    exact_fn = bool(np.array_equal(np.moveaxis(got["fn"], 0, 1), got["q"])
                    and np.array_equal(np.moveaxis(got["fn_nm"], 0, 1), got["np"]))
    med = {r[1]: statistics.median(times[r[0]]) for r in rows}
    results.append({
        "name": "quantiles",
        "description": f"median and quartiles of {nb} matrices of 60 x 98450 float64, per matrix (exact)",
        "dtype": "float64", "shape": list(x.shape), "bytes": x.nbytes,
        "numpy_nanpercentile_matrices": nm,
        "exact_vs_numpy": exact,
        "function_equals_c": exact_fn,
        "runs": [{"name": r[0], "kind": r[1], "times": _summary(times[r[0]]),
                  "gbs": (x[:nm] if r[1] in ("numpy-nan", "python-nm") else x).nbytes / med[r[1]] / 1e9}
                 for r in rows],
        "ratios": {
            "quantiles_over_minmax_fit": med["c"] / med["c-minmax-fit"],
            "quantiles_over_minmax_fit_transform": med["c"] / med["c-minmax"],
            "numpy_percentile_over_quantiles": med["numpy"] / med["c"],
            "function_over_c": med["python"] / med["c"],
            "numpy_nanpercentile_over_function": med["numpy-nan"] / med["python-nm"],
        }})


def _run_sigma_clip(args, results):
    """3-sigma clipping to convergence, per matrix, through numpy-style
    calls: clscale.sigma_clip(x, axis=1) against astropy's sigma_clip(x,
    axis=1) on the same array (when astropy is installed), the SigmaClip
    estimator and the library call timed in C."""
    b = max(1, round(18 * args.size))
    rng = np.random.default_rng(SEED)
    x = rng.normal(10.0, 2.0, (b, 60, 20000))
    x[rng.random(x.shape) < 0.05] = np.nan
    y = np.empty_like(x)
    got = {}
    c_times = []
    try:
        from astropy.stats import sigma_clip as astro_clip
        from astropy.stats import sigma_clipped_stats as astro_clipped_stats
    except ImportError:
        astro_clip = astro_clipped_stats = None
    with context(args.devices) as ctx:

        def c_call():
            t0 = time.perf_counter()
            _clscale.clean(ctx, x, y, scope=_clscale.SCOPE_MATRIX, sigma=3.0, maxiters=-1)
            c_times.append(time.perf_counter() - t0)

        def function():
            got["fn"] = sigma_clip(x, sigma=3, maxiters=None, axis=1, devices=args.devices)

        def astro(key, fn):
            def run():
                import warnings
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # astropy warns of the NaN it clips
                    got[key] = fn(x, sigma=3, maxiters=None, axis=1)
            return run

        def stats():
            got["stats"] = sigma_clipped_stats(x, sigma=3, maxiters=None, axis=1, devices=args.devices)

        rows = [("clscale.sigma_clip(x, sigma=3, maxiters=None, axis=1) (masked array)", "python", function),
                ("clscale.SigmaClip(3, maxiters=None).fit_transform(x) (NaN where clipped)", "python-estimator",
                 lambda: SigmaClip(3, maxiters=None, devices=args.devices).fit_transform(x)),
                ("library cls_fit_transform into a reused output (the extension's call)", "c", c_call, c_times),
                ("clscale.sigma_clipped_stats(x, sigma=3, maxiters=None, axis=1)", "python-stats", stats)]
        if astro_clip is not None:
            rows.append(("astropy sigma_clip(x, sigma=3, maxiters=None, axis=1)", "astropy",
                         astro("astropy", astro_clip)))
            rows.append(("astropy sigma_clipped_stats(x, sigma=3, maxiters=None, axis=1)", "astropy-stats",
                         astro("astropy-stats", astro_clipped_stats)))
        times = _time_rows(rows, args.repeats)
    med = {r[1]: statistics.median(times[r[0]]) for r in rows}
    res = {
        "name": "sigma-clip",
        "description": f"3-sigma clipping to convergence (median centre, std) of {b} matrices of 60 x 20000 "
                       f"float64 with 5% NaN, per matrix",
        "dtype": "float64", "shape": list(x.shape), "bytes": x.nbytes,
        "runs": [{"name": r[0], "kind": r[1], "times": _summary(times[r[0]])} for r in rows],
        "ratios": {"function_over_c": med["python"] / med["c"]}}
    if astro_clip is not None:
        res["masks_equal_astropy"] = bool(np.array_equal(np.ma.getmaskarray(got["fn"]),
                                                         np.ma.getmaskarray(got["astropy"])))
        res["ratios"]["astropy_over_function"] = med["astropy"] / med["python"]
        res["ratios"]["astropy_over_estimator"] = med["astropy"] / med["python-estimator"]
        res["ratios"]["astropy_over_stats"] = med["astropy-stats"] / med["python-stats"]
        # the medians bit for bit, the means and stds within rounding
        g, w = got["stats"], got["astropy-stats"]
        res["stats_equal_astropy"] = bool(np.array_equal(g[1], w[1], equal_nan=True) and all(
            np.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True) for a, b in zip(g[0::2], w[0::2])))
    results.append(res)


def _run_seed_b(args, results):
    b = max(1, round(100 * args.size))
    rng = np.random.default_rng(SEED)
    x = rng.uniform(-50.0, 150.0, size=(b, 4000, 5))
    f = rng.uniform(0.5, 1.5, size=(4000, 5))
    y = np.empty_like(x)
    want = x * f
    disc = Discount(f, devices=args.devices).fit(x)
    c_times = []

    def c_call():
        with context(args.devices) as ctx:
            c_times.append(ctx.timed("transform", x, y, factors=f)[0])

    rows = [("clscale Discount.transform(x, out=y)", "python", lambda: disc.transform(x, out=y)),
            ("clscale Discount.transform(x) (new output array)", "python-alloc", lambda: disc.transform(x)),
            ("C library cls_transform (discount), timed in C", "c", c_call, c_times),
            ("numpy multiply(x, f, out=y)", "numpy", lambda: np.multiply(x, f, out=y))]
    flush = np.zeros(8 << 20)
    times = _time_rows(rows, args.repeats * 4, flush)  # short calls: more rounds
    errors = {}
    for r in rows:
        y.fill(np.nan)
        out = r[2]()
        got = y if out is None or out is y else out
        errors[r[0]] = float(np.max(np.abs(got - want)))
    nbytes = 2 * x.nbytes + f.nbytes
    c_med = statistics.median(times[rows[2][0]])
    peers = {"numpy": statistics.median(times[rows[3][0]]), "c": c_med}
    results.append({
        "name": "seed-b", "description": f"discount {b} x 4000 x 5 float64 by factors 4000 x 5",
        "dtype": "float64", "shape": list(x.shape), "factors_shape": [4000, 5], "bytes": nbytes,
        "runs": [_result(r[0], r[1], times[r[0]], nbytes, c_med, peers, errors[r[0]]) for r in rows]})


def _run_impute(args, results, name):
    """impute (2-D float32, one statistics group) or impute-seed-a (3-D
    float64, statistics per matrix): the doc's rows."""
    import sklearn.impute as ski
    import sklearn.pipeline as skpl
    import sklearn.preprocessing as skp

    from ._clean import SimpleImputer
    from ._pipeline import make_pipeline

    rng = np.random.default_rng(SEED)
    if name == "impute":
        shape, dtype = (max(1, round(2_000_000 * args.size)), 8), np.float32
    else:
        shape, dtype = (max(1, round(18 * args.size)), 60, 20000), np.float64
    scope = _clscale.SCOPE_BATCH if len(shape) == 2 else _clscale.SCOPE_MATRIX
    clean = rng.normal(3.0, 2.0, size=shape).astype(dtype)
    x = clean.copy()
    x[rng.random(x.shape) < 0.05] = np.nan
    x64 = x.astype(np.float64)
    filled = np.where(np.isnan(x64), np.nanmean(x64, axis=-2, keepdims=True), x64)
    want = (filled - filled.mean(-2, keepdims=True)) / filled.std(-2, keepdims=True)
    c64 = clean.astype(np.float64)
    want_clean = (c64 - c64.mean(-2, keepdims=True)) / c64.std(-2, keepdims=True)
    del x64, filled, c64
    dev = args.devices
    pipe = make_pipeline(SimpleImputer(devices=dev), StandardScaler(devices=dev))
    y = np.empty_like(x)
    c_times = {"fused": [], "alone": [], "nan": []}
    opts = SimpleImputer()._opts()

    def two_steps():
        return StandardScaler(devices=dev).fit_transform(SimpleImputer(devices=dev).fit_transform(x))

    def sklearn_call():
        def one(m):
            return skpl.make_pipeline(ski.SimpleImputer(), skp.StandardScaler()).fit_transform(m)
        return one(x) if x.ndim == 2 else np.stack([one(m) for m in x])

    def sklearn_imputer():
        def one(m):
            return ski.SimpleImputer().fit_transform(m)
        return one(x) if x.ndim == 2 else np.stack([one(m) for m in x])

    def c_call(key, data, **extra):
        """The library's z-score fit_transform of `data` into y, timed in C into c_times[key]."""
        def call():
            with context(dev) as ctx:
                c_times[key].append(ctx.timed("fit_transform", data, y, scaler=_clscale.ZSCORE, scope=scope,
                                              **extra)[0])
            return y
        return call

    per = " per matrix" if x.ndim == 3 else ""
    rows = [(f"clscale make_pipeline(SimpleImputer(), StandardScaler()).fit_transform(x) (fused)", "fused",
             lambda: pipe.fit_transform(x)),
            ("clscale SimpleImputer().fit_transform, then StandardScaler().fit_transform", "two-steps",
             two_steps),
            ("clscale StandardScaler().fit_transform on the data without NaN", "scaler-alone",
             lambda: StandardScaler(devices=dev).fit_transform(clean)),
            ("clscale StandardScaler().fit_transform on the data with NaN (not imputed)", "scaler-nan",
             lambda: StandardScaler(devices=dev).fit_transform(x)),
            (f"scikit-learn make_pipeline(SimpleImputer(), StandardScaler()).fit_transform{per}", "sklearn",
             sklearn_call),
            ("clscale SimpleImputer().fit_transform alone", "imputer", lambda: SimpleImputer(devices=dev).fit_transform(x)),
            (f"scikit-learn SimpleImputer().fit_transform alone{per}", "sklearn-imputer", sklearn_imputer),
            ("C library cls_fit_transform z-score with mean imputation (cls_pipeline.clean), timed in C",
             "c-fused", c_call("fused", x, clean=opts), c_times["fused"]),
            ("C library cls_fit_transform z-score on the data without NaN, timed in C", "c-alone",
             c_call("alone", clean), c_times["alone"]),
            ("C library cls_fit_transform z-score on the data with NaN (clscale-clean-bench's base), timed in C",
             "c-nan", c_call("nan", x), c_times["nan"])]
    times = _time_rows(rows, args.repeats)
    errors = {}
    for r in rows:
        out = r[2]()
        if r[1] in ("scaler-nan", "c-nan"):  # NaN kept, the rest scaled by the moments of the values present
            x64 = x.astype(np.float64)
            ref = (x64 - np.nanmean(x64, -2, keepdims=True)) / np.nanstd(x64, -2, keepdims=True)
            del x64
            assert np.array_equal(np.isnan(out), np.isnan(x))
        elif r[1] in ("imputer", "sklearn-imputer"):
            x64 = x.astype(np.float64)
            ref = np.where(np.isnan(x64), np.nanmean(x64, -2, keepdims=True), x64)
            del x64
        else:
            ref = want_clean if r[1] in ("scaler-alone", "c-alone") else want
        errors[r[1]] = float(np.nanmax(np.abs(out.astype(np.float64) - ref)))
    assert pipe.fused_
    med = {r[1]: statistics.median(times[r[0]]) for r in rows}
    nbytes = 2 * x.nbytes
    what = "float32, one statistics group" if x.ndim == 2 else "float64, statistics per matrix"
    results.append({
        "name": name,
        "description": f"mean imputation + z-score of {' x '.join(map(str, shape))} {what}, 5% NaN",
        "dtype": np.dtype(dtype).name, "shape": list(x.shape), "bytes": nbytes,
        "runs": [{"name": r[0], "kind": r[1], "times": _summary(times[r[0]]), "gbs": nbytes / med[r[1]] / 1e9,
                  "max_error": errors[r[1]]} for r in rows],
        "ratios": {
            "fused_over_scaler_alone": med["fused"] / med["scaler-alone"],
            "fused_over_scaler_on_nan": med["fused"] / med["scaler-nan"],
            "two_steps_over_scaler_alone": med["two-steps"] / med["scaler-alone"],
            "two_steps_over_fused": med["two-steps"] / med["fused"],
            "sklearn_over_fused": med["sklearn"] / med["fused"],
            "sklearn_imputer_over_imputer": med["sklearn-imputer"] / med["imputer"],
            "imputer_over_scaler_on_nan": med["imputer"] / med["scaler-nan"],
            "c_fused_over_c_alone": med["c-fused"] / med["c-alone"],
            "c_fused_over_c_on_nan": med["c-fused"] / med["c-nan"],
        }})


def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise OSError(f"no {field} in /proc/self/status")


def _reset_peak():
    """Starts the peak RSS (VmHWM) over from the current RSS (Linux 4.0+)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _memory_child(devices, size, via):
    """In a fresh process: seed-A transformed in place through `via`
    ("python": MinMaxScaler(copy=False); "c": the library call itself),
    after a warm-up call on one matrix of the same shape (kernels built for
    it, pools made) that is freed again. Reports the RSS before the array,
    with it, and the peak during the call alone."""
    x1 = _seed_a(1 / 18)
    est = MinMaxScaler(copy=False, scope="matrix", devices=devices)
    with context(devices) as ctx:
        if via == "python":
            est.fit_transform(x1)
        else:
            ctx.fit_transform(x1, x1, scaler=_clscale.MINMAX, scope=_clscale.SCOPE_MATRIX)
        del x1
        before = _status_kb("VmRSS")
        x = _seed_a(size)
        with_array = _status_kb("VmRSS")
        _reset_peak()
        if via == "python":
            assert est.fit_transform(x) is x
            stats = est._fitted
        else:
            stats = ctx.fit_transform(x, x, scaler=_clscale.MINMAX, scope=_clscale.SCOPE_MATRIX)
        peak = _status_kb("VmHWM")
    print(json.dumps({"via": via, "array_bytes": x.nbytes, "stats_bytes": 56 * stats.summary()["columns"],
                      "rss_before_array": before, "rss_with_array": with_array, "peak_rss_during_call": peak}))


def _run_memory(args):
    out = {"what": "a fresh process per row transforms seed-A in place (MinMaxScaler(copy=False), or the "
                   "library call on the same array); peak RSS (VmHWM, reset just before the call) against the "
                   "RSS with the array and against the array's bytes; stats_bytes: the fitted statistics "
                   "the call returns (56 bytes per column per matrix)", "runs": []}
    for via in ("python", "c"):
        cmd = [sys.executable, "-m", "clscale.bench", "--memory-child", via, "--size", str(args.size)]
        if args.devices is not None:
            cmd += ["--devices", args.devices]
        r = subprocess.run(cmd, capture_output=True, text=True, check=True)
        m = json.loads(r.stdout.strip().splitlines()[-1])
        m["extra_during_call_bytes"] = m["peak_rss_during_call"] - m["rss_with_array"]
        m["extra_over_array"] = m["extra_during_call_bytes"] / m["array_bytes"]
        m["peak_over_array_and_process"] = ((m["peak_rss_during_call"] - m["rss_before_array"])
                                            / m["array_bytes"])
        out["runs"].append(m)
    return out


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m clscale.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--json", help="write the results here (default: stdout)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--devices", default=None, help="device selector, as --devices of the tool")
    p.add_argument("--workload", default="seed-a,seed-b")
    p.add_argument("--size", type=float, default=1.0, help="scales the batch of each workload")
    p.add_argument("--no-memory", action="store_true", help="skip the peak-RSS measurement")
    p.add_argument("--rows", type=int, default=None,
                   help="shapes: only the groups of this many rows (one of the sweep's lengths)")
    p.add_argument("--svg", help="shapes: draw the speed-up over the peers by group length here")
    p.add_argument("--lk-curves", type=int, default=0,
                   help="lightcurves: lightkurve's loop and clscale's flatten and pipeline rows on the "
                        "first N light curves (0: clscale's alone, on the whole batch)")
    p.add_argument("--numpy-matrices", type=int, default=2,
                   help="quantiles: matrices numpy's nanpercentile runs on (clscale timed on the same ones)")
    p.add_argument("--memory-child", choices=("python", "c"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.memory_child:
        _memory_child(args.devices, args.size, args.memory_child)
        return 0
    if args.repeats < 1 or not args.size > 0:
        p.error("--repeats must be >= 1 and --size > 0")
    wanted = args.workload.split(",")
    t0 = time.perf_counter()
    with context(args.devices) as ctx:
        devs = ctx.devices()
    import sklearn

    results = []
    if "seed-a" in wanted:
        _run_seed_a(args, results)
    elif "seed-a-loop" in wanted:
        _run_loops(args, results, np.float64)
    if "seed-a-loop-f32" in wanted:
        _run_loops(args, results, np.float32)
    if "seed-b" in wanted:
        _run_seed_b(args, results)
    if "quantiles" in wanted:
        _run_quantiles(args, results)
    if "sigma-clip" in wanted:
        _run_sigma_clip(args, results)
    for name in ("impute", "impute-seed-a"):
        if name in wanted:
            _run_impute(args, results, name)
    if "lightcurves" in wanted:
        from . import _bench_lightcurves
        results.append(_bench_lightcurves.lightcurves(args))
    if "shapes" in wanted:
        from . import _bench_shapes
        results.append(_bench_shapes.shapes(args))
        if args.svg:
            with open(args.svg, "w") as f:
                f.write(_bench_shapes.svg(results[-1], f"clscale against its peers by group length "
                                                      f"({_cpu_model()}, {os.cpu_count()} cores)"))
    doc = {
        "tool": "python -m clscale.bench", "clscale_version": _clscale.version(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "options": {"size": args.size, "repeats": args.repeats, "devices": args.devices, "seed": SEED},
        "method": {
            "time": "wall clock around each Python call (the C row: clock_gettime around the library call "
                    "inside the extension, GIL released); median of the rounds after one warm-up round, rows "
                    "taking turns, in order and in reverse order on alternate rounds; seed-b's calls after a 64 MiB cache-evicting write",
            "memory": "numpy arrays (pageable); 'out=y' rows reuse one output array, as the C row does",
            "bytes": "every input byte read once, every output byte written once",
            "ratio_to_c": "median of the Python row over the median of the C row of the same run",
            "speedup": "median of the peer (numpy, scikit-learn, C) over the median of the Python row",
            "check": "every row's output against numpy in float64 (max_error)"},
        "machine": {"cpu_model": _cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
                    "numpy": np.__version__, "sklearn": sklearn.__version__, "devices": devs},
        "workloads": results,
    }
    if not args.no_memory and "seed-a" in wanted:
        doc["memory"] = _run_memory(args)
    doc["total_wall_s"] = time.perf_counter() - t0
    text = json.dumps(doc, indent=1)
    if args.json:
        tmp = f"{args.json}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, args.json)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
