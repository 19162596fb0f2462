"""The light-curve workload of `python -m clscale.bench --workload
lightcurves`: a batch of light curves detrended and binned along time on
the devices, against scipy on the same array and one min-max call.

Data: 2000 light curves x 4000 cadences x 2 bands float64 (128 MB; the
light curves scaled by --size), a slow trend, transits, noise; the time
axis is axis 1 (the rows of each 4000 x 2 matrix).

Rows (each a full call on the whole array, a new output array):
  savgol    clscale.savgol_filter(x, 101, 2, axis=1)   vs scipy.signal's
  mean      clscale.uniform_filter1d(x, 101, axis=1)   vs scipy.ndimage's
  bin-smooth  clscale.bin(x, 10, "mean", axis=1, smooth=True)
  bin-smooth-median  clscale.bin(x, 10, "median", axis=1, smooth=True)
  bin-median  clscale.bin(x, 10, "median", axis=1)  (one row per bin)
  minmax    MinMaxScaler().fit_transform(x) per matrix: the unit of 'to_minmax'
  flatten   clscale.flatten(x, 101, 2, axis=1) (lightkurve's flatten: niters 3,
            sigma 3)   vs a loop of lightkurve's LightCurve.flatten(101, 2)
  pipeline  sigma_clip(x, 3, axis=1) (NaN out), flatten, bin(10, "mean"),
            MinMaxScaler per matrix   vs a loop of lightkurve's
            remove_outliers(sigma=3).flatten(101, 2).bin(10 cadences).normalize()
The lightkurve rows are there where lightkurve is installed (it is not a
Debian package) and --lk-curves N is given: then both sides of these two
rows run on the first N/2 stars (N light curves, a band of a star each),
not the whole batch: nothing is scaled, each side is timed on the same
data (without it, clscale's alone on the whole batch).
Times are medians of --repeats calls after a warm-up (a peer over 2 s runs
once). clscale's trends are checked against scipy's (max relative error).
"""
import warnings

import numpy as np

from ._bench_calls import SEED, median_time


def _data(size):
    n = max(1, int(round(2000 * size)))
    rng = np.random.default_rng(SEED)
    t = np.arange(4000)[None, :, None]
    x = 1000 + 20 * np.sin(t / 700 + rng.uniform(0, 6, (n, 1, 2))) + rng.normal(0, 1, (n, 4000, 2))
    x -= 30 * ((t % 997) < 12)
    return np.ascontiguousarray(x)


def _err(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def _lightkurve_rows(args, x, dev, row):
    """The flatten and pipeline rows, against lightkurve's loop where it is
    installed (clscale's alone otherwise)."""
    import clscale
    try:
        import lightkurve as lk
    except ImportError:
        lk = None
    dt = 2.0 / 1440  # two-minute cadences, in days
    t = np.arange(x.shape[1]) * dt
    n = getattr(args, "lk_curves", 0)
    if n <= 0:
        lk = None  # lightkurve's loop takes ~0.1 s a light curve: asked for, on a part
    else:  # both sides on the same first stars, none timed on a part and scaled
        x = np.ascontiguousarray(x[:max(1, (n + x.shape[2] - 1) // x.shape[2])])
    curves = [(i, b) for i in range(x.shape[0]) for b in range(x.shape[2])]

    def loop(f):
        def run():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # lightkurve warns about its optional modules
                for i, b in curves:
                    f(lk.LightCurve(time=t, flux=x[i, :, b]))
        return run

    mm = clscale.MinMaxScaler(devices=dev)

    def pipeline():
        c = clscale.sigma_clip(x, sigma=3, axis=1, masked=False, devices=dev)
        f = clscale.flatten(c, 101, 2, axis=1, devices=dev)
        return mm.fit_transform(clscale.bin(f, 10, "mean", axis=1, devices=dev))

    flat_peer = loop(lambda lc: lc.flatten(window_length=101, polyorder=2)) if lk else None
    pipe_peer = loop(lambda lc: lc.remove_outliers(sigma=3).flatten(window_length=101, polyorder=2)
                     .bin(time_bin_size=10 * dt).normalize()) if lk else None
    for name, call, peer, what in (
            ("flatten", lambda: clscale.flatten(x, 101, 2, axis=1, devices=dev), flat_peer,
             "LightCurve.flatten(window_length=101, polyorder=2)"),
            ("pipeline", pipeline, pipe_peer,
             "LightCurve.remove_outliers(sigma=3).flatten(101, 2).bin(time_bin_size=10 cadences).normalize()")):
        r = row(name, call, peer, f"lightkurve {lk.__version__}: a loop of {what}" if lk else None)
        if n > 0:  # on a part: no multiple of the whole batch's min-max call
            r["light_curves"] = len(curves)


def lightcurves(args):
    import clscale
    from scipy import ndimage, signal
    x = _data(args.size)
    dev = args.devices
    rows = []

    def row(name, call, peer=None, peer_name=None, check=None):
        t, n = median_time(call, args.repeats)
        r = {"name": name, "median_s": t, "calls": n}
        if peer is not None:
            tp, npeer = median_time(peer, args.repeats)
            r.update({"peer": peer_name, "peer_median_s": tp, "peer_calls": npeer, "speedup": tp / t})
        if check is not None:
            r["max_rel_error"] = check()
        rows.append(r)
        return r

    mm = clscale.MinMaxScaler(devices=dev)
    row("minmax", lambda: mm.fit_transform(x))
    row("savgol", lambda: clscale.savgol_filter(x, 101, 2, axis=1, devices=dev),
        lambda: signal.savgol_filter(x, 101, 2, axis=1), "scipy.signal.savgol_filter(x, 101, 2, axis=1)",
        lambda: _err(clscale.savgol_filter(x, 101, 2, axis=1, devices=dev), signal.savgol_filter(x, 101, 2, axis=1)))
    row("mean", lambda: clscale.uniform_filter1d(x, 101, axis=1, devices=dev),
        lambda: ndimage.uniform_filter1d(x, 101, axis=1), "scipy.ndimage.uniform_filter1d(x, 101, axis=1)",
        lambda: _err(clscale.uniform_filter1d(x, 101, axis=1, devices=dev), ndimage.uniform_filter1d(x, 101, axis=1)))
    _lightkurve_rows(args, x, dev, row)
    row("bin-smooth", lambda: clscale.bin(x, 10, "mean", axis=1, smooth=True, devices=dev))
    row("bin-smooth-median", lambda: clscale.bin(x, 10, "median", axis=1, smooth=True, devices=dev))
    row("bin-median", lambda: clscale.bin(x, 10, "median", axis=1, devices=dev))
    unit = rows[0]["median_s"]
    for r in rows:
        if "light_curves" not in r:
            r["to_minmax"] = r["median_s"] / unit
    return {"name": "lightcurves",
            "description": f"{x.shape[0]} light curves x 4000 cadences x 2 bands float64 along time (axis 1)",
            "dtype": "float64", "shape": list(x.shape), "bytes": int(x.nbytes), "rows": rows}
