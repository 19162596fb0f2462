"""Light curves (clscale.savgol_filter, uniform_filter1d, flatten, bin)
against scipy on finite data (every mode, windows of 1 and 2, even and odd,
longer than the series), against numpy and scipy built references with
NaN gaps, and lightkurve's flatten as its algorithm (lightkurve itself is
not a Debian package): a Savitzky-Golay trend, refitted without the values
astropy's sigma_clip finds outliers in flux - trend, then flux / trend."""
import os
import subprocess
import warnings

import numpy as np
import pytest
from scipy import ndimage, signal

import clscale
from conftest import DTYPES, IMPL

# float32 data: float64 sums where the device has them, float sums on rusticl
def _tol(dtype):
    return 1e-10 if dtype == np.float64 else (3e-4 if IMPL == "rusticl" else 2e-5)


def _close(got, want, dtype):
    assert got.shape == want.shape and got.dtype == want.dtype
    both_nan = np.isnan(got) & np.isnan(want)
    scale = max(1.0, float(np.nanmax(np.abs(want))) if np.isfinite(want).any() else 1.0)
    err = np.where(both_nan, 0, np.abs(got.astype(np.float64) - want.astype(np.float64))) / scale
    assert np.all(np.isfinite(err) | both_nan)
    assert err.max() <= _tol(dtype), f"max relative error {err.max():.3g}"


def _curves(dtype, shape=(3, 60, 4), seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(shape[1])[None, :, None]
    x = 50 + 10 * np.arange(shape[2])[None, None, :] + np.sin(0.1 * t) + 0.05 * rng.normal(size=shape)
    return np.ascontiguousarray(x.astype(dtype))


SG = [(1, 0, 0), (2, 1, 0), (2, 0, 0), (5, 2, 0), (8, 3, 0), (9, 2, 1), (11, 4, 2), (31, 2, 0)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["mirror", "constant", "nearest", "wrap", "interp"])
@pytest.mark.parametrize("w,p,deriv", SG)
def test_savgol_filter_matches_scipy(dtype, mode, w, p, deriv):
    x = _curves(dtype)
    for axis in (1, -1, 0):
        if mode == "interp" and w > x.shape[axis]:
            continue
        # scipy's on the float64 values, in the data's type: scipy 1.17 fits interp's edges
        # of float32 data in float32 (errors of 3e-4 of the scale), scipy 1.10 in float64
        want = signal.savgol_filter(x.astype(np.float64), w, p, deriv=deriv, delta=0.5, axis=axis, mode=mode,
                                    cval=2.0).astype(dtype)
        got = clscale.savgol_filter(x, w, p, deriv=deriv, delta=0.5, axis=axis, mode=mode, cval=2.0)
        _close(got, want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["mirror", "constant", "nearest", "wrap"])
def test_savgol_window_longer_than_the_series(dtype, mode):
    x = _curves(dtype, (2, 6, 3))
    _close(clscale.savgol_filter(x, 15, 2, axis=1, mode=mode), signal.savgol_filter(x, 15, 2, axis=1, mode=mode),
           dtype)
    with pytest.raises(ValueError, match="interp"):
        clscale.savgol_filter(x, 15, 2, axis=1, mode="interp")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "constant", "wrap", "grid-wrap", "grid-mirror"])
@pytest.mark.parametrize("size,origin", [(1, 0), (2, 0), (2, -1), (5, 2), (8, -4), (8, 3), (101, 0)])
def test_uniform_filter1d_matches_scipy(dtype, mode, size, origin):
    x = _curves(dtype)
    for axis in (1, -1):
        want = ndimage.uniform_filter1d(x, size, axis=axis, mode=mode, cval=1.5, origin=origin)
        got = clscale.uniform_filter1d(x, size, axis=axis, mode=mode, cval=1.5, origin=origin)
        _close(got, want, dtype)


def test_uniform_filter1d_output_argument():
    x = _curves(np.float32)
    out = np.empty(x.shape, np.float64)
    r = clscale.uniform_filter1d(x, 7, axis=1, output=out)
    assert r is out
    want = ndimage.uniform_filter1d(x, 7, axis=1, output=np.float64)
    assert np.allclose(out, want, rtol=0, atol=1e-4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "constant", "wrap"])
def test_moving_average_ignores_nan_gaps(dtype, mode):
    x = _curves(dtype, (2, 80, 3))
    x[0, 20:33, 0] = np.nan  # a gap longer than the window
    x[1, ::7, 1] = np.nan
    x[:, :, 2] = np.nan  # nothing valid: NaN out
    valid = np.isfinite(x)
    # the mean of the valid values: the sums of the values and of the
    # valid flags, both extended alike (cval counts as a value)
    num = ndimage.uniform_filter1d(np.where(valid, x, 0).astype(np.float64), 9, axis=1, mode=mode, cval=1.5)
    den = ndimage.uniform_filter1d(valid.astype(np.float64), 9, axis=1, mode=mode, cval=1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        want = np.where(den > 1e-12, num / den, np.nan).astype(dtype)
    _close(clscale.uniform_filter1d(x, 9, axis=1, mode=mode, cval=1.5), want, dtype)


# CPUs take 8 columns per work-item in vector lanes, loaded by layout:
# 8 neighbouring columns of a group (columns a multiple of 8), 2 or 4
# groups of 4 or 2 columns, else one value per lane; a last vector with
# lanes past the end. Each layout, finite data against scipy, and a gap
# against the mean of the valid values.
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 300, 1), (7, 300, 2), (3, 300, 3), (5, 300, 4), (2, 300, 8), (3, 300, 16),
                                   (1, 300, 5)])
def test_every_lane_layout(dtype, shape):
    x = _curves(dtype, shape, seed=7)
    _close(clscale.savgol_filter(x, 31, 2, axis=1), signal.savgol_filter(x, 31, 2, axis=1), dtype)
    _close(clscale.savgol_filter(x, 31, 2, axis=1, mode="wrap"), signal.savgol_filter(x, 31, 2, axis=1, mode="wrap"),
           dtype)
    for mode in ("reflect", "constant"):
        _close(clscale.uniform_filter1d(x, 31, axis=1, mode=mode, cval=1.5),
               ndimage.uniform_filter1d(x, 31, axis=1, mode=mode, cval=1.5), dtype)
    x[-1, 100:140, -1] = np.nan  # a gap longer than the window in the last lane
    x[0, 50, 0] = np.inf
    valid = np.isfinite(x)
    num = ndimage.uniform_filter1d(np.where(valid, x, 0).astype(np.float64), 31, axis=1)
    den = ndimage.uniform_filter1d(valid.astype(np.float64), 31, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        want = np.where(den > 1e-12, num / den, np.nan).astype(dtype)
    _close(clscale.uniform_filter1d(x, 31, axis=1), want, dtype)
    # the fit through the valid values around the gap (NaN where fewer than 3)
    got = clscale.savgol_filter(x, 31, 2, axis=1)[-1, :, -1]
    s = x[-1, :, -1].astype(np.float64)
    want = np.empty(s.shape, dtype)
    for i in range(60, 180):
        v = s[i - 15:i + 16]
        ok = np.isfinite(v)
        t = (np.arange(31) - 15)[ok]
        want[i] = np.polyval(np.polyfit(t, v[ok], 2), 0) if ok.sum() > 2 else np.nan
    rows = np.arange(60, 180)
    if IMPL == "rusticl":
        # float sums: a fit through a few values at one end of the window
        # (the gap's borders) is ill-conditioned in float (1e-2 off, as
        # before the lanes); its windows at least half full only
        rows = rows[[np.isfinite(s[i - 15:i + 16]).sum() >= 16 for i in rows]]
    _close(got[rows], want[rows], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_savgol_fits_through_the_valid_values(dtype):
    x = _curves(dtype, (1, 40, 2))
    x[0, 10:14, 0] = np.nan
    x[0, 3, 1] = np.inf
    w, p = 7, 2
    got = clscale.savgol_filter(x, w, p, axis=1, mode="nearest")
    want = np.empty_like(x)
    n = x.shape[1]
    for c in range(2):
        s = x[0, :, c].astype(np.float64)
        for i in range(n):
            idx = np.clip(np.arange(i - w // 2, i + w // 2 + 1), 0, n - 1)
            v = s[idx]
            ok = np.isfinite(v)
            t = (np.arange(w) - w // 2)[ok]
            want[0, i, c] = np.polyval(np.polyfit(t, v[ok], p), 0) if ok.sum() > p else np.nan
    _close(got, want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [1, 3, 10, 60, 100])
@pytest.mark.parametrize("method", ["mean", "median", "sum", "count"])
def test_bin_reduces_each_bin(dtype, size, method):
    x = _curves(dtype)
    x[0, 5:12, 1] = np.nan
    x[1, 3, 0], x[1, 7, 2] = np.inf, -np.inf  # missing too: NaN in a bin of their own (size 1)
    got = clscale.bin(x, size, method, axis=1)
    n = x.shape[1]
    nb = -(-n // size)
    pad = np.full((x.shape[0], nb * size, x.shape[2]), np.nan, dtype=np.float64)
    pad[:, :n] = np.where(np.isfinite(x), x, np.nan)
    b = pad.reshape(x.shape[0], nb, size, x.shape[2])
    with np.errstate(invalid="ignore"), _quiet():
        want = {"mean": np.nanmean, "median": np.nanmedian, "sum": np.nansum,
                "count": lambda a, axis: np.isfinite(a).sum(axis=axis)}[method](b, axis=2)
    _close(got, want.astype(dtype), dtype)


class _quiet:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *a):
        self._w.__exit__(*a)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", ["mean", "median", "boundary"])
def test_bin_smooths_each_value(dtype, method):
    x = _curves(dtype, (2, 25, 3))
    x[1, 3, 2] = np.nan
    got = clscale.bin(x, 4, method, axis=1, smooth=True)
    want = x.astype(np.float64).copy()
    for b0 in range(0, 25, 4):
        blk = x[:, b0:b0 + 4].astype(np.float64)
        with _quiet():
            if method == "mean":
                v = np.broadcast_to(np.nanmean(blk, axis=1, keepdims=True), blk.shape)
            elif method == "median":
                v = np.broadcast_to(np.nanmedian(blk, axis=1, keepdims=True), blk.shape)
            else:
                lo, hi = np.nanmin(blk, axis=1, keepdims=True), np.nanmax(blk, axis=1, keepdims=True)
                v = np.where(blk - lo <= hi - blk, lo, hi)
        want[:, b0:b0 + 4] = np.where(np.isfinite(blk), v, blk)
    _close(got, want.astype(dtype), dtype)


@pytest.mark.fp64
def test_flatten_without_outliers_is_flux_over_scipys_trend():
    x = _curves(np.float64, (4, 300, 1))[:, :, 0]
    flat, trend = clscale.flatten(x, 51, 2, return_trend=True, niters=1)
    want = signal.savgol_filter(x, 51, 2, axis=-1)
    assert np.allclose(trend, want, rtol=1e-10, atol=0)
    assert np.allclose(flat, x / want, rtol=1e-10, atol=0)


@pytest.mark.fp64
def test_flatten_leaves_outliers_out_of_the_trend():
    x = _curves(np.float64, (2, 300, 1), seed=3)[:, :, 0]
    x[0, 150] += 30  # a flare
    x[1, 40:44] -= 20  # a dip
    x[1, 200:210] = np.nan  # a gap
    flat, trend = clscale.flatten(x, 51, 2, return_trend=True, niters=3, sigma=3)
    # the outliers pulled the first trend by 30 x its weight (~1.2) and
    # 20 x 4 weights; refitted without them it is that of the same curves
    # without them (as lightkurve's, the mask only grows: values the first
    # trend's pull made outliers stay out)
    base = _curves(np.float64, (2, 300, 1), seed=3)[:, :, 0]
    base[1, 200:210] = np.nan
    _, ref = clscale.flatten(base, 51, 2, return_trend=True, niters=3, sigma=3)
    assert abs(trend[0, 150] - ref[0, 150]) < 0.2
    # (the dip's first pull, ~3, leaves a wide hole in the fit: its trend is
    # only checked through the flattened values below)
    first = clscale.flatten(x, 51, 2, return_trend=True, niters=1)[1]
    assert abs(first[0, 150] - ref[0, 150]) > 0.5
    assert flat[0, 150] > 1.3 and np.all(flat[1, 40:44] < 0.8)
    assert np.all(np.isnan(flat[1, 200:210]))
    rest = np.isfinite(flat) & (np.abs(flat - 1) < 0.2)
    assert rest.sum() >= flat.size - 10 - 6


def _flatten_reference(x, window, polyorder, niters, sigma, mask=None):
    """lightkurve's flatten as its algorithm, one step at a time: the trend
    of the values kept (clscale.savgol_filter, NaN left out of each window),
    astropy's sigma_clip of flux - trend over each light curve, the finite
    residuals it clips left out of the next fit (the values kept only
    shrink), flux / the last trend. The values `mask` leaves out take no
    part in the clips' statistics either (lightkurve clips the cadences
    it keeps)."""
    from astropy.stats import sigma_clip
    keep = np.isfinite(x) if mask is None else np.isfinite(x) & ~mask
    for it in range(niters):
        trend = clscale.savgol_filter(np.where(keep, x, np.nan).astype(x.dtype), window, polyorder, axis=-1)
        resid = x - trend if mask is None else np.where(mask, np.nan, x) - trend
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # all-NaN residuals
            clipped = sigma_clip(resid, sigma=sigma, maxiters=5, axis=-1, masked=True).mask
        keep &= ~(clipped & np.isfinite(resid))
    return x / trend, trend


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("niters", [1, 2, 3, 4])
def test_flatten_is_its_algorithm_step_by_step(dtype, niters):
    # outliers both ways, a gap, a light curve all NaN, one constant, one
    # shorter than the window (flatten shortens it), a mask; the refits
    # run in place between the fits (nothing is fitted after the last)
    pytest.importorskip("astropy")
    rng = np.random.default_rng(43)
    n = 2 if IMPL == "oclgrind" else 5
    x = _curves(np.float64, (n, 400, 1), seed=7)[:, :, 0]
    x += rng.standard_t(3, size=x.shape) * 0.05
    x[0, 100] += 5
    x[1, 60:66] -= 3
    x[1, 300:320] = np.nan
    x[-1, 200] = np.inf
    x = x.astype(dtype)
    for window, polyorder in ((51, 2), (21, 3)):
        got, gtrend = clscale.flatten(x, window, polyorder, return_trend=True, niters=niters, sigma=3)
        want, wtrend = _flatten_reference(x, window, polyorder, niters, 3)
        np.testing.assert_array_equal(gtrend, wtrend)
        np.testing.assert_array_equal(got, want)
        # the library's divide (no trend asked for): the same bytes
        np.testing.assert_array_equal(clscale.flatten(x, window, polyorder, niters=niters, sigma=3), want)
    mask = np.zeros(x.shape, dtype=bool)
    mask[0, 10:30] = True
    got = clscale.flatten(x, 51, 2, niters=niters, sigma=2.5, mask=mask)
    np.testing.assert_array_equal(got, _flatten_reference(x, 51, 2, niters, 2.5, mask)[0])
    flat = np.full((2, 30), np.nan, dtype=dtype)
    flat[1] = 7
    got, trend = clscale.flatten(flat, 51, 2, return_trend=True, niters=niters)
    want, wtrend = _flatten_reference(flat, 29, 2, niters, 3)
    np.testing.assert_array_equal(trend, wtrend)
    np.testing.assert_array_equal(got, want)


def _flatten_previous(x3, window, polyorder, niters, sigma):
    """clscale.flatten as it was written in Python before the library had
    its flatten: a loop of the library's trend, numpy's residual, the
    library's sigma clip (its mask), the clipped finite residuals turned
    NaN in a work array, flux / the last trend."""
    from clscale import _clscale
    from clscale._context import context
    work, trend = None, np.empty_like(x3)
    bad = np.empty(x3.shape, dtype=np.uint8)
    with context(None) as ctx:
        for it in range(niters):
            _clscale.clean(ctx, x3 if work is None else work, trend, detrend=2, detrend_op=2, window=window,
                           polyorder=polyorder)
            if it == niters - 1:
                break
            resid = x3 - trend
            _clscale.clean(ctx, resid, None, bad, sigma=float(sigma), maxiters=5, mode=2)
            out = np.isfinite(resid) & (bad != 0)
            if work is None:
                work = x3.copy()
            work[out] = np.nan
    return x3 / trend, trend


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("niters", [1, 3])
def test_flatten_is_the_previous_python_loop(dtype, niters):
    # the library's one implementation gives the bytes of the loop that
    # clscale.flatten ran in Python (batch x rows x bands, axis 1)
    rng = np.random.default_rng(11)
    x = _curves(np.float64, (2 if IMPL == "oclgrind" else 4, 300, 3), seed=12)
    x += rng.standard_t(3, size=x.shape) * 0.05
    x[0, 50, 1] += 4
    x[1, 100:108, 2] = np.nan
    x = x.astype(dtype)
    want, wtrend = _flatten_previous(x, 41, 2, niters, 3)
    got, gtrend = clscale.flatten(x, 41, 2, return_trend=True, niters=niters, sigma=3, axis=1)
    np.testing.assert_array_equal(gtrend, wtrend)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(clscale.flatten(x, 41, 2, niters=niters, sigma=3, axis=1), want)


def test_bad_arguments_raise_clear_errors():
    x = _curves(np.float32)
    with pytest.raises(ValueError, match="mode must be"):
        clscale.savgol_filter(x, 5, 2, mode="reflect")
    with pytest.raises(ValueError, match="polyorder must be less"):
        clscale.savgol_filter(x, 5, 5)
    with pytest.raises(ValueError, match="at most 8"):
        clscale.savgol_filter(x, 21, 9, axis=1)
    with pytest.raises(ValueError, match="invalid origin"):
        clscale.uniform_filter1d(x, 4, origin=2)
    with pytest.raises(RuntimeError, match="incorrect filter size"):
        clscale.uniform_filter1d(x, 0)
    with pytest.raises(RuntimeError, match="boundary mode"):
        clscale.uniform_filter1d(x, 3, mode="interp")
    with pytest.raises(TypeError, match="complex"):
        clscale.uniform_filter1d(x.astype(np.complex64), 3)
    with pytest.raises(ValueError, match="method"):
        clscale.bin(x, 3, "boundary")
    with pytest.raises(ValueError, match="size"):
        clscale.bin(x, 0)


TOOL = os.environ.get("CLS_TOOL")


@pytest.mark.fp64
@pytest.mark.skipif(not TOOL or not os.path.exists(TOOL), reason="the clscale tool is not built (CLS_TOOL unset)")
def test_tool_detrends_and_smooths_as_the_functions(tmp_path):
    x = _curves(np.float64, (3, 120, 2), seed=9)
    x[0, 30:36, 1] = np.nan
    src, dst = tmp_path / "in.npy", tmp_path / "out.npy"
    np.save(src, x)
    r = subprocess.run([TOOL, "clean", "--detrend", "savgol:21,2", "--detrend-op", "divide", "--bin-smooth",
                        "5,median", "--quiet", str(src), str(dst)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want = clscale.bin(x / clscale.savgol_filter(x, 21, 2, axis=1), 5, "median", axis=1, smooth=True)
    want[np.isnan(x)] = np.nan
    got = np.load(dst)
    assert np.allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)
    r = subprocess.run([TOOL, "clean", "--detrend", "savgol:21", str(src), str(dst)], capture_output=True, text=True)
    assert r.returncode == 2 and "savgol:W,P" in r.stderr
    # normalize: the cleaning stage (trend, bins), then min-max
    r = subprocess.run([TOOL, "normalize", "--method", "minmax", "--detrend", "mean:15", "--detrend-op", "divide",
                        "--quiet", str(src), str(dst)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    d = x / clscale.uniform_filter1d(x, 15, axis=1)
    d[np.isnan(x)] = np.nan
    lo, hi = np.nanmin(d, axis=1, keepdims=True), np.nanmax(d, axis=1, keepdims=True)
    assert np.allclose(np.load(dst), (d - lo) / (hi - lo), rtol=0, atol=1e-9, equal_nan=True)


@pytest.mark.fp64
@pytest.mark.skipif(not TOOL or not os.path.exists(TOOL), reason="the clscale tool is not built (CLS_TOOL unset)")
def test_tool_bin_reduces_each_bin_all_or_nothing(tmp_path):
    x = _curves(np.float64, (3, 95, 2), seed=11)
    x[0, 30:36, 1] = np.nan
    src, dst = tmp_path / "in.npy", tmp_path / "out.npy"
    np.save(src, x)

    def ref(a, k, how):  # numpy over bins padded with NaN (the last bin shorter)
        nb = -(-a.shape[1] // k)
        pad = np.full((a.shape[0], nb * k, a.shape[2]), np.nan)
        pad[:, :a.shape[1]] = a
        b = pad.reshape(a.shape[0], nb, k, a.shape[2])
        # (numpy 2.4 deprecates np.testing.suppress_warnings)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return {"mean": np.nanmean, "median": np.nanmedian, "sum": np.nansum,
                    "count": lambda v, axis: np.isfinite(v).sum(axis=axis).astype(float)}[how](b, axis=2)

    for how in ("mean", "median", "sum", "count"):
        r = subprocess.run([TOOL, "clean", "--bin", f"10,{how}", "--quiet", str(src), str(dst)], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr
        got = np.load(dst)
        assert got.shape == (3, 10, 2)
        assert np.allclose(got, ref(x, 10, how), rtol=1e-12, atol=1e-12, equal_nan=True)
    # after a trend; --scope batch: the whole batch's rows, 1 x bins x cols; a 2-D table
    r = subprocess.run([TOOL, "clean", "--detrend", "mean:15", "--bin", "7,median", "--scope", "batch", "--quiet",
                        str(src), str(dst)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    xb = x.reshape(1, -1, 2)  # with --scope batch the trend too runs over the whole batch's rows
    d = xb - clscale.uniform_filter1d(xb, 15, axis=1)
    d[np.isnan(xb)] = np.nan
    assert np.allclose(np.load(dst), ref(d, 7, "median"), rtol=1e-12, atol=1e-12, equal_nan=True)
    np.save(src, x[0])
    r = subprocess.run([TOOL, "clean", "--bin", "8,mean", "--quiet", str(src), str(dst)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert np.allclose(np.load(dst), ref(x[:1], 8, "mean")[0], rtol=1e-12, atol=1e-12, equal_nan=True)
    # all or nothing: a call the library refuses (the interp edge's window
    # longer than the rows) leaves OUT as it was and no temporary beside it
    before = dst.read_bytes()
    r = subprocess.run([TOOL, "clean", "--detrend", "savgol:201,2", "--bin", "8,mean", "--quiet", str(src), str(dst)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "interp" in r.stderr
    assert dst.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npy", "out.npy"]
    for bad in (["--bin", "10,boundary"], ["--bin", "0,mean"], ["--bin", "5,mean", "--bin-smooth", "5,mean"]):
        r = subprocess.run([TOOL, "clean", *bad, str(src), str(dst)], capture_output=True, text=True)
        assert r.returncode == 2, r.stderr
    r = subprocess.run([TOOL, "normalize", "--method", "minmax", "--bin", "5,mean", str(src), str(dst)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--bin" in r.stderr


# The estimators: Detrend and Flatten in scikit-learn pipelines
@pytest.mark.fp64
def test_detrend_estimator_in_a_pipeline():
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline as sk_make_pipeline
    from sklearn.preprocessing import MinMaxScaler as SkMinMax
    x = _curves(np.float64, (1, 400, 3), seed=3)[0]  # 400 cadences x 3 bands: rows are time
    d = clscale.Detrend("savgol", 51, 2)
    assert d.get_params()["window_length"] == 51 and d.get_params()["op"] == "subtract"
    d2 = clone(d).set_params(method="mean", window_length=21)
    assert d2.method == "mean" and d.method == "savgol"
    want = SkMinMax().fit_transform(x - signal.savgol_filter(x, 51, 2, axis=0))
    for pipe in (clscale.make_pipeline(clscale.Detrend("savgol", 51, 2), clscale.MinMaxScaler()),
                 sk_make_pipeline(clscale.Detrend("savgol", 51, 2), clscale.MinMaxScaler())):
        _close(pipe.fit_transform(x), want, np.float64)
        _close(pipe.transform(x), want, np.float64)
    _close(d2.fit_transform(x), x - ndimage.uniform_filter1d(x, 21, axis=0), np.float64)
    _close(clscale.Detrend("mean", 21, op="divide", mode="nearest").fit_transform(x),
           x / ndimage.uniform_filter1d(x, 21, axis=0, mode="nearest"), np.float64)
    _close(clscale.Detrend(window_length=9, polyorder=3, op="trend", mode="wrap").fit_transform(x),
           signal.savgol_filter(x, 9, 3, axis=0, mode="wrap"), np.float64)
    assert d.fit(x).n_features_in_ == 3
    # 3-D: batch x cadences x bands, rows axis 1; float32 stays float32; copy=False in place
    x3 = _curves(np.float32, (4, 300, 2), seed=4)
    y3 = clscale.Detrend(window_length=31).fit_transform(x3)
    assert y3.dtype == np.float32
    # the float64 reference (scipy 1.17 fits float32 edges in float32)
    _close(y3, (x3 - signal.savgol_filter(x3.astype(np.float64), 31, 2, axis=1)).astype(np.float32), np.float32)
    xc = x3.copy()
    r = clscale.Detrend(window_length=31, copy=False).fit_transform(xc)
    assert np.shares_memory(r, xc)
    _close(xc, y3, np.float32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_detrend_fit_transform_file_streams_the_same_bytes(tmp_path, dtype):
    # streamed in chunks of whole matrices: the bytes of fit_transform in memory
    x3 = _curves(dtype, (5, 300, 3), seed=7)
    x3[:, 40:47, 1] = np.nan
    for x, est in ((x3, clscale.Detrend("savgol", 31, 2, mode="mirror")),
                   (x3[0], clscale.Detrend("mean", 15, op="divide"))):
        src, dst = tmp_path / "in.npy", tmp_path / "out.npy"
        np.save(src, x)
        assert est.fit_transform_file(src, dst) is est and est.n_features_in_ == x.shape[-1]
        y = np.load(dst)
        want = est.fit_transform(x)
        assert y.dtype == x.dtype and y.shape == x.shape
        assert np.array_equal(y.view(np.uint8), want.view(np.uint8))
        np.testing.assert_array_equal(np.load(src), x)  # the input untouched


@pytest.mark.fp64
def test_detrend_estimator_bad_parameters():
    x = _curves(np.float64, (1, 50, 2))[0]
    for kw in ({"method": "median"}, {"op": "add"}, {"window_length": 0}, {"polyorder": 5, "window_length": 5},
               {"mode": "reflect"}, {"method": "mean", "mode": "interp"}, {"window_length": 61},
               {"cval": float("nan")}):
        with pytest.raises(ValueError):
            clscale.Detrend(**kw).fit(x)


@pytest.mark.fp64
def test_flatten_estimator_is_flatten():
    x = _curves(np.float64, (3, 500, 2), seed=5)
    x[1, 200, 0] += 5  # an outlier
    want = clscale.flatten(x, 101, 2, axis=1)
    pipe = clscale.make_pipeline(clscale.Flatten(101, 2), clscale.StandardScaler())
    got = pipe.fit_transform(x)
    assert pipe.named_steps["flatten"].get_params()["niters"] == 3
    from sklearn.preprocessing import StandardScaler as SkStd
    ref = np.stack([SkStd().fit_transform(m) for m in want])
    _close(got, ref, np.float64)
    _close(clscale.Flatten(101, 2).fit_transform(x[0]), clscale.flatten(x[0], 101, 2, axis=0), np.float64)
    with pytest.raises(ValueError):
        clscale.Flatten(sigma=0).fit(x)
