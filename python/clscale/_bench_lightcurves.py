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
  bin-median  clscale.bin(x, 10, "median", axis=1)  (one row per bin)
  minmax    MinMaxScaler().fit_transform(x) per matrix: the unit of 'to_minmax'
Times are medians of --repeats calls after a warm-up (a peer over 2 s runs
once). clscale's trends are checked against scipy's (max relative error).
"""
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

    mm = clscale.MinMaxScaler(devices=dev)
    row("minmax", lambda: mm.fit_transform(x))
    row("savgol", lambda: clscale.savgol_filter(x, 101, 2, axis=1, devices=dev),
        lambda: signal.savgol_filter(x, 101, 2, axis=1), "scipy.signal.savgol_filter(x, 101, 2, axis=1)",
        lambda: _err(clscale.savgol_filter(x, 101, 2, axis=1, devices=dev), signal.savgol_filter(x, 101, 2, axis=1)))
    row("mean", lambda: clscale.uniform_filter1d(x, 101, axis=1, devices=dev),
        lambda: ndimage.uniform_filter1d(x, 101, axis=1), "scipy.ndimage.uniform_filter1d(x, 101, axis=1)",
        lambda: _err(clscale.uniform_filter1d(x, 101, axis=1, devices=dev), ndimage.uniform_filter1d(x, 101, axis=1)))
    row("bin-smooth", lambda: clscale.bin(x, 10, "mean", axis=1, smooth=True, devices=dev))
    row("bin-median", lambda: clscale.bin(x, 10, "median", axis=1, devices=dev))
    unit = rows[0]["median_s"]
    for r in rows:
        r["to_minmax"] = r["median_s"] / unit
    return {"name": "lightcurves",
            "description": f"{x.shape[0]} light curves x 4000 cadences x 2 bands float64 along time (axis 1)",
            "dtype": "float64", "shape": list(x.shape), "bytes": int(x.nbytes), "rows": rows}
