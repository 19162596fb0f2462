"""numpy's nanquantile, nanpercentile and nanmedian and astropy's sigma_clip
and sigma_clipped_stats as functions, on the devices (and describe, the
tool's data summary, for arrays in memory): the same arguments
and the same results (bit for bit where numpy's arithmetic is the
library's: every quantile and median; astropy's masks; means and stds
within rounding), for code that calls those functions today.

Each call runs the library on a batch x rows x columns view of the data,
per matrix: the axes before the reduced ones are the batch, those after
them the columns, so that reducing any run of neighbouring axes of a
C-contiguous array copies nothing (other sets of axes are moved to the
front, a copy): exact quantiles and medians by counting (cls_quantiles,
cls_medians), clipping by cls_fit_transform.

Where the library and numpy differ, the function does what numpy does:
+-Inf take part in numpy's quantiles and medians (the library skips them
as missing), so the columns holding one are computed by numpy; float16
and extended precision go to numpy whole; an empty reduction too; and
numpy's quantile methods other than "linear" (the library interpolates
linearly only); and float32 data's quantiles at a Python number q where
the installed numpy interpolates them in float32 (numpy 2; the library
interpolates in float64, numpy 1's way). The result's dtype is asked of
the installed numpy, whose rules changed between versions.
"""
import numbers
import sys
import threading
import warnings

import numpy as np

from . import _clip_loop, _clscale
from ._base import as_data
from ._clean import _STRATEGIES
from ._context import check_selector, context
from ._peers import (astropy_keeps_last_bounds, astropy_user_warning, clip_dtype, has_astropy,
                     normalize_axis_index, numpy_interpolates_float32)

__all__ = ["describe", "nanmedian", "nanpercentile", "nanquantile", "sigma_clip", "sigma_clipped_stats"]



def _axes(ndim, axis):
    """The reduced axes as a sorted tuple (numpy's checks and errors)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        ax = tuple(normalize_axis_index(int(a), ndim) for a in axis)
        if len(set(ax)) != len(ax):
            raise ValueError("repeated axis")
        return tuple(sorted(ax))
    if not isinstance(axis, numbers.Integral):
        raise TypeError(f"axis must be None, an integer or a tuple of integers, got {axis!r}")
    return (normalize_axis_index(int(axis), ndim),)


def _blocks(a, axes):
    """a as (batch, rows, cols) for the library's per-matrix scope, with the
    reduced axes' values down each column of each matrix, and the shape of
    the kept axes. A run of neighbouring axes (axis 0, None, -1, 1 of a 3-D
    array, ...) is a view of a C-contiguous array: the axes before it are
    the batch, those after it the columns. Other sets of axes are moved to
    the front (a copy)."""
    kept = [d for d in range(a.ndim) if d not in axes]
    shape = tuple(a.shape[d] for d in kept)
    if axes != tuple(range(axes[0], axes[-1] + 1)):
        a = np.moveaxis(a, axes, tuple(range(len(axes))))
        axes = tuple(range(len(axes)))
    a = np.ascontiguousarray(a)
    n = lambda dims: int(np.prod(dims, dtype=np.int64))
    b, r, c = n(a.shape[:axes[0]]), n(a.shape[axes[0]:axes[-1] + 1]), n(a.shape[axes[-1] + 1:])
    return a.reshape(b, r, c), shape


def _data(a):
    """(array the library takes, or None for numpy's own path)."""
    a = np.asanyarray(a)
    if isinstance(a, np.ma.MaskedArray):
        return None
    if a.dtype.kind in "biu":
        return a.astype(np.float64)
    if a.dtype in (np.float32, np.float64):
        return a
    return None


def _inf_columns(m):
    """(batch, cols) entries of m (batch x rows x cols, C-contiguous)
    holding +-Inf, None when none does: one read of the data in C, the GIL
    released."""
    return _clscale.inf_columns(m)


class _Beside:
    """fn(*args) in a thread of its own while the devices work (both
    release the GIL): _inf_columns(m), or the copy of the data a masked
    result holds; on a machine with cores to spare it costs nothing."""

    def __init__(self, fn, *args):
        self._fn, self._args, self._res, self._err = fn, args, None, None
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        try:
            self._res = self._fn(*self._args)
        except BaseException as e:  # raised in the caller's thread
            self._err = e

    def result(self):
        self._t.join()
        if self._err is not None:
            raise self._err
        return self._res


def _finish(res, shape, axes, keepdims):
    """res (batch x cols entries, any leading axes before them) to numpy's
    output shape: the leading axes, then the kept axes (or all, with the
    reduced ones of size 1 under keepdims)."""
    lead = res.shape[:-2]
    res = res.reshape(lead + shape)
    if keepdims:
        for d in axes:
            res = np.expand_dims(res, len(lead) + d)
    return res


def _per_column(x, axes, devices, on_devices, by_numpy):
    """The reduction of x over `axes` on the devices: on_devices(ctx, m)
    gives res (any leading axes, then batch x cols) for m, x's batch x
    rows x cols view; the columns holding +-Inf (found by a scan beside the
    device call) are replaced by by_numpy(their values, rows x k), as numpy
    ranks +-Inf. Returns res and the kept axes' shape."""
    m, shape = _blocks(x, axes)
    scan = _Beside(_inf_columns, m)
    with context(devices) as ctx:
        res = on_devices(ctx, m)
    inf = scan.result()
    if inf is not None:
        for b in np.nonzero(inf.any(axis=1))[0]:
            res[..., b, inf[b]] = by_numpy(m[b][:, inf[b]])
    _warn_all_nan(res, inf)
    return res, shape


def _warn_all_nan(res, inf):
    """numpy's "All-NaN slice encountered", once per all-NaN slice (its
    nanmedian and nanquantile reduce slice by slice): a slice whose first
    result is NaN, but for the +-Inf columns (numpy's own results, NaN
    where Inf - Inf is interpolated, without a warning)."""
    if res.size == 0:
        return
    first = res[(0,) * (res.ndim - 2)]
    empty = np.isnan(first)
    if inf is not None:
        empty &= ~inf
    for _ in range(int(np.count_nonzero(empty))):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)


# numpy's quantile methods (numpy.quantile's documentation). "linear",
# numpy's default, is the library's (cls_quantiles); the others go to numpy
# itself on the host, so that they too are numpy's bits.
_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
            "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint", "nearest")


def _check_method(method):
    if not isinstance(method, str) or method not in _METHODS:
        raise ValueError(f"method must be one of {', '.join(_METHODS)} (numpy's; 'linear' runs on the devices, "
                         f"the others with numpy on the host), got {method!r}")


def _first_slice_all_nan(m):
    """Whether the first slice numpy reduces (kept index 0 in C order:
    m[0, :, 0]) is all NaN: numpy's nanquantile takes its result's dtype
    from that slice's result (apply_along_axis), the data's dtype for an
    all-NaN slice."""
    return bool(m.shape[1]) and bool(np.isnan(m[0, :, 0]).all())


def _result_dtype(like, dtype, q, all_nan):
    """The dtype numpy's `like` (nanquantile or nanpercentile) gives for
    data of `dtype` and this q, from a one-value array: its dtype rules
    (an integer q keeps float32; float32 data and a float q give float64
    in numpy 1.x; an all-NaN first slice keeps the data's dtype) differ
    between numpy versions, and asking it follows the installed one."""
    probe = np.full(1, np.nan if all_nan else 0, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(like(probe, q)).dtype


def _into(out, res):
    """numpy's out=: the result written into `out` (cast as numpy's
    `out[...] = result` casts), which is returned."""
    if out is None:
        return res
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, got {type(out).__name__}")
    if out.shape != np.shape(res):
        raise ValueError(f"out has shape {out.shape}, the result {np.shape(res)}")
    out[...] = res
    return out


def _quantile(a, q, qa, axis, out, overwrite_input, method, keepdims, weights, interpolation, devices, like):
    """nanquantile (like=np.nanquantile, qa = q) and nanpercentile
    (like=np.nanpercentile, qa = q / 100): qa, float64 in [0, 1], is what
    the devices interpolate at."""
    devices = check_selector(devices)
    if interpolation is not None:
        # numpy's deprecated name of method: numpy's own call, which warns
        # (DeprecationWarning) and refuses both, as numpy does
        kw = {} if weights is None else dict(weights=weights)
        return like(np.asanyarray(a), q, axis=axis, out=out, overwrite_input=False, method=method,
                    keepdims=keepdims, interpolation=interpolation, **kw)
    _check_method(method)
    x = _data(a)
    arr = np.asanyarray(a)
    axes = _axes(arr.ndim, axis)
    qd = np.asanyarray(q)
    # numpy's own computation: the methods other than "linear", weights
    # (numpy 2's), data the library does not take, integer data with an
    # integer q (numpy returns its elements as integers, beyond float64's
    # 2**53 too), a q neither integer nor float64 (numpy places a float32
    # q in float32 arithmetic, the library in float64), and float32 data
    # at a Python number q where numpy interpolates in float32 (numpy 2;
    # numpy 1 in float64, as the library)
    if (x is None or arr.size == 0 or arr.ndim == 0 or method != "linear" or weights is not None
            or (arr.dtype.kind in "biu" and qd.dtype.kind in "biu")
            or (qd.dtype.kind not in "biu" and qd.dtype != np.float64)
            or (x.dtype == np.float32 and type(q) in (int, float) and numpy_interpolates_float32())):
        kw = {} if weights is None else dict(weights=weights)
        # numpy never overwrites the data here either (the same result)
        return like(arr, q, axis=axis, out=out, overwrite_input=False, method=method,
                    keepdims=keepdims, **kw)
    qs = qa.reshape(-1)
    first = []

    def on_devices(ctx, m):
        first.append(_first_slice_all_nan(m))
        res = np.empty((qs.size, m.shape[0], m.shape[2]))
        for s in range(0, qs.size, 8):
            part, _ = _clscale.quantiles(ctx, m, [float(v) for v in qs[s:s + 8]], scope=_clscale.SCOPE_MATRIX)
            res[s:s + 8] = np.moveaxis(part, 1, 0)
        return res
    # the columns holding +-Inf: numpy's function on the q given (an integer
    # q takes an element there, where a float one would interpolate Inf - Inf)
    res, shape = _per_column(x, axes, devices, on_devices, lambda cols: like(cols, qd.reshape(-1), axis=0))
    # float64 values, numpy's bits; cast to numpy's dtype (an exact cast
    # where numpy's is not float64: an order statistic or NaN)
    res = res.astype(_result_dtype(like, arr.dtype, q, first[0]), copy=False)
    res = _finish(res, shape, axes, keepdims)
    res = res.reshape(qa.shape + res.shape[1:])
    return _into(out, res if res.ndim else res[()])


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None, interpolation=None, devices=None):
    """numpy.nanquantile, with its arguments: exact, on the devices for
    method "linear" (numpy's default): NaN ignored, results bit for bit
    numpy's in numpy's dtype (also for float32 and integer data). q: a
    number or an array of numbers in [0, 1]; the result has q's shape in
    front, as numpy's. The other methods of numpy, and `weights` (numpy
    2), and the deprecated `interpolation` (numpy's old name of method),
    are numpy's own computation on the host. out: the result written
    into it and returned; overwrite_input: allowed, the data is never
    changed (numpy's own computation is not let overwrite it either).
    devices: the device selector, as every clscale call's (keyword-only,
    after numpy's parameters: no call numpy takes reaches it)."""
    qa = np.asanyarray(q, dtype=np.float64)
    if not np.all((qa >= 0) & (qa <= 1)):
        raise ValueError("Quantiles must be in the range [0, 1]")
    return _quantile(a, q, qa, axis, out, overwrite_input, method, keepdims, weights, interpolation, devices,
                     np.nanquantile)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None, interpolation=None, devices=None):
    """numpy.nanpercentile: nanquantile at q / 100 (numpy's division),
    exact, q in [0, 100]."""
    qa = np.asanyarray(q, dtype=np.float64)
    if not np.all((qa >= 0) & (qa <= 100)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    return _quantile(a, q, qa / 100, axis, out, overwrite_input, method, keepdims, weights, interpolation,
                     devices, np.nanpercentile)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False, *, devices=None):
    """numpy.nanmedian, with its arguments, exact, on the devices: the
    middle value or the mean of the middle two in the data's dtype
    (float32 data gives float32, as numpy's), NaN ignored, bit for bit.
    out and overwrite_input as nanquantile's."""
    devices = check_selector(devices)
    x = _data(a)
    arr = np.asanyarray(a)
    axes = _axes(arr.ndim, axis)
    if x is None or arr.size == 0 or arr.ndim == 0:
        return np.nanmedian(arr, axis=axis, out=out, overwrite_input=False, keepdims=keepdims)
    res, shape = _per_column(x, axes, devices, lambda ctx, m: _clscale.medians(ctx, m, scope=_clscale.SCOPE_MATRIX),
                             lambda cols: np.nanmedian(cols, axis=0))
    res = res.astype(x.dtype, copy=False)
    out_ = _finish(res, shape, axes, keepdims)
    return _into(out, out_ if out_.ndim else out_[()])


def _unit_of(data):
    """(data without its unit, the unit) for an astropy Quantity (astropy
    returns Quantities from sigma_clip and sigma_clipped_stats then), else
    (data, None). astropy is not imported for it."""
    units = sys.modules.get("astropy.units")
    if units is not None and isinstance(data, units.Quantity):
        return data.value, data.unit
    return data, None


def _with_unit(v, unit):
    """v (an array, masked array or scalar) as a Quantity of `unit`."""
    if unit is None:
        return v
    if isinstance(v, np.ma.MaskedArray):
        # as astropy's flattened masked case: a masked array of a Quantity
        return np.ma.MaskedArray(np.ma.getdata(v) << unit, mask=np.ma.getmaskarray(v), copy=False)
    return v << unit


def _native_float(arr):
    """A float array the library reads: big-endian float32/float64 (FITS
    files' byte order) converted to the native order, float16 to float32
    (exact); other arrays as they are."""
    if arr.dtype.kind != "f":
        return arr
    if arr.dtype.itemsize == 2:
        return arr.astype(np.float32)
    if arr.dtype.itemsize in (4, 8) and not arr.dtype.isnative:
        return arr.astype(arr.dtype.newbyteorder("="))
    return arr


def _unmasked(data):
    """(the data as an ndarray, its mask or None): masked values are left
    out, as astropy leaves them out (NaN for the library)."""
    arr = np.asanyarray(data)
    if isinstance(arr, np.ma.MaskedArray):
        return np.ma.getdata(arr), np.ma.getmaskarray(arr)
    return arr, None


def _warn_invalid(invalid, stacklevel):
    """astropy's warning for NaN or +-Inf among the values not masked
    (`invalid`: how many), once per call, where astropy is installed:
    astropy's sigma_clip and sigma_clipped_stats give it on every path
    but empty and all-masked data (which return first)."""
    cls = astropy_user_warning() if invalid else None
    if cls is not None:
        warnings.warn("Input data contains invalid values (NaNs or infs), which were automatically clipped.",
                      cls, stacklevel=stacklevel + 1)


def _invalid(arr, inmask):
    """How many of arr's values not masked are NaN or +-Inf (a pass over
    the data: for the host's paths; the library's counts the others)."""
    if arr.dtype.kind != "f" or not has_astropy():
        return 0
    bad = ~np.isfinite(arr)
    if inmask is not None:
        bad &= ~inmask
    return int(np.count_nonzero(bad))


def _masked_count(inmask):
    return 0 if inmask is None else int(np.count_nonzero(inmask))


# cls_clip_mode's CLS_CLIP_KEEP: every value written as read, the mask apart
_KEEP = 2


def _check_grow(grow):
    """astropy's grow: False, None or 0 for none, else a radius > 0 (True
    is 1, as in astropy)."""
    if grow is None or grow is False:
        return False
    if not (isinstance(grow, numbers.Real) and np.isfinite(grow) and grow >= 0):
        raise ValueError(f"grow must be False or a radius >= 0 (in pixels), got {grow!r}")
    return grow


def _host_loop(cenfunc, stdfunc, grow):
    """Whether the clipping iterates here (_clip_loop) rather than in one
    library call: grow dilates the masks between iterations, and a
    callable runs on the host."""
    return bool(grow) or callable(cenfunc) or callable(stdfunc)


def _clip_options(sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc, grow):
    """astropy's clipping arguments, checked, as the extension's clean()
    takes them (center and spread name the functions when both are named;
    callables are _clip_loop's)."""
    _check_grow(grow)
    for name, fn, named in (("cenfunc", cenfunc, ("median", "mean")), ("stdfunc", stdfunc, ("std", "mad_std"))):
        if not (callable(fn) or (isinstance(fn, str) and fn in named)):
            raise ValueError(f"{name} must be {named[0]!r}, {named[1]!r} (on the devices) or a callable taking "
                             f"(data, axis=...) and ignoring NaN (on the host), got {fn!r}")

    def k(v, name):
        if not (isinstance(v, numbers.Real) and np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        return float(v)
    slo = k(sigma if sigma_lower is None else sigma_lower, "sigma_lower")
    shi = k(sigma if sigma_upper is None else sigma_upper, "sigma_upper")
    # astropy iterates until nothing changes for maxiters None, inf and 0
    # (its `maxiters or np.inf`)
    if maxiters is None or (isinstance(maxiters, numbers.Real) and (np.isinf(maxiters) or maxiters == 0)):
        iters = -1
    elif isinstance(maxiters, numbers.Integral) and maxiters > 0:
        iters = int(maxiters)
    else:
        raise ValueError(f"maxiters must be None or an integer >= 0, got {maxiters!r}")
    return dict(sigma=slo, sigma_lower=slo, sigma_upper=shi, maxiters=iters, center=int(cenfunc == "mean"),
                spread=int(stdfunc == "mad_std"))


def _sigma_clip_loop(arr, inmask, sigma, sigma_lower, sigma_upper, clip, cenfunc, stdfunc, axis, masked,
                     return_bounds, copy, grow, devices):
    """sigma_clip with grow or a callable: astropy's iterating paths
    (_clip_loop), with astropy's results for empty and all-masked data."""
    if arr.dtype.kind not in "biuf" or (arr.dtype.kind == "f" and arr.dtype.itemsize > 8):
        raise ValueError(f"data must be float16, float32, float64 or integer, got {arr.dtype}")
    if arr.size == 0 or (inmask is not None and inmask.all()):
        if masked:
            result = np.ma.MaskedArray(arr, mask=inmask)
        else:
            result = arr if arr.size == 0 else np.full(arr.shape, np.nan)
        return (result, np.nan, np.nan) if return_bounds else result
    _warn_invalid(_invalid(arr, inmask), 3)
    axes = None if axis is None else _axes(arr.ndim, axis)
    # astropy's own sigma_lower/upper (`sigma_lower or sigma`): their
    # types take part in the flattened path's arithmetic, as in astropy's
    bounds = _clip_loop._Bounds(cenfunc, stdfunc, sigma_lower or sigma, sigma_upper or sigma, clip, axes, devices)
    iters = np.inf if clip["maxiters"] < 0 else clip["maxiters"]
    if axis is None and not grow:
        return _clip_loop.clip_flat(arr, inmask, masked, return_bounds, copy, iters, bounds)
    return _clip_loop.clip_with_axis(arr, inmask, axes, masked, return_bounds, copy, iters, bounds, grow)


def sigma_clip(data, sigma=3.0, sigma_lower=None, sigma_upper=None, maxiters=5, cenfunc="median",
               stdfunc="std", axis=None, masked=True, return_bounds=False, copy=True, grow=False,
               devices=None):
    """astropy.stats.sigma_clip on the devices, for cenfunc "median" or
    "mean" and stdfunc "std" or "mad_std" (astropy's fast path): values
    beyond sigma_lower / sigma_upper spreads from the centre of the values
    kept are clipped, iteration after iteration, until none is or maxiters
    iterations ran (None: until none is); the values clipped in the end
    are those outside the last bounds; NaN and +-Inf are masked too (with
    an axis, a column an iteration clips whole: all masked under its last
    bounds in newer astropy, NaN bounds clipping nothing in astropy 5).
    masked=True returns a numpy.ma.MaskedArray over the data (copied unless
    copy=False), masked=False an array with NaN where masked (when copied:
    the installed astropy's type, float64 in astropy 5, else the data's
    float type, float32 for integers; in place with copy=False), or with
    axis=None the values kept, flattened, in the data's type (as
    astropy's); return_bounds adds the last bounds (float64, or the
    working copy's type with grow or callables; per column of the kept
    axes). Masked input: its masked values are left out. grow and
    callable cenfunc/stdfunc: astropy's iterating path (_clip_loop), the
    callables on the host; maxiters=0 is astropy's no limit."""
    devices = check_selector(devices)
    clip = _clip_options(sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc, grow)
    data, unit = _unit_of(data)
    if unit is not None:
        out = sigma_clip(data, sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc, axis, masked,
                         return_bounds, copy, grow, devices)
        if not return_bounds:
            return _with_unit(out, unit)
        return tuple(_with_unit(v, unit) for v in out)
    arr, inmask = _unmasked(data)
    if arr.ndim == 0:
        raise ValueError("data must have at least one dimension")
    if _host_loop(cenfunc, stdfunc, grow):
        return _sigma_clip_loop(arr, inmask, sigma, sigma_lower, sigma_upper, clip, cenfunc, stdfunc, axis, masked,
                                return_bounds, copy, grow, devices)
    if arr.dtype.kind in "biu":
        if not copy and not masked:
            raise ValueError("cannot mask non-floating-point array with NaN values, set copy=True or "
                             "masked=True to avoid this.")
        x = arr.astype(np.float64)
    elif arr.dtype.kind == "f" and arr.dtype.itemsize in (2, 4, 8):
        # big-endian (FITS) and float16 data: clipped as native float32/float64
        # values, the result in the data's type as astropy's
        x = _native_float(arr)
    else:
        raise ValueError(f"data must be float16, float32, float64 or integer, got {arr.dtype}")
    if inmask is not None and inmask.any():
        x = np.where(inmask, np.nan, x).astype(x.dtype, copy=False)
    if axis is None and not masked and x.size:
        return _clip_flat(arr, x, clip, maxiters, devices, return_bounds, _masked_count(inmask))
    axes = _axes(x.ndim, axis)
    m, shape = _blocks(x, axes)
    # in place (copy=False, masked=False) where the view is the data itself
    inplace = not copy and not masked and x is arr and np.shares_memory(m, arr)
    # the cleaned values (NaN where masked) where the result is made of
    # them; else the library's mask alone (a byte per value, not a float64
    # output to read the mask back from: 2x faster on 18 x 60 x 20000)
    want_y = not masked and axis is not None and (inplace or (copy and x.dtype == np.float64
                                                           and clip_dtype(arr.dtype) == np.float64))
    # a masked result's copy of the data: written by the devices in the
    # pass that writes the mask (CLS_CLIP_KEEP) where it is a view of the
    # data's own layout, else made by a thread while the devices clip
    keep = (masked and copy and x is arr and arr.flags.c_contiguous and m.size
            and axes == tuple(range(axes[0], axes[-1] + 1)))
    y = (m if inplace else np.empty_like(m)) if want_y or keep else None
    bad = None if want_y else np.empty(m.shape, dtype=bool)
    data = _Beside(np.copy, arr) if masked and copy and not keep else None
    # newer astropy's clipping with an axis keeps the bounds that clipped
    # a column whole: the bounds tell those columns
    last = axis is not None and bool(m.size) and astropy_keeps_last_bounds()
    if m.size:
        # astropy's warning (float data, astropy installed) needs the count
        # of NaN and +-Inf: from the library's per-column counts where a
        # column holds 16 values or more; shorter columns' counts cost more
        # than a host pass over the data (at one value a column, twice the
        # clipping's own time), so they take that pass
        warn = x.dtype.kind == "f" and arr.dtype.kind == "f" and has_astropy()
        counts = warn and m.shape[1] >= 16
        with context(devices) as ctx:
            missing, _, _, _, lo, hi, _, _ = _clscale.clean(ctx, m, y, bad, False, counts, return_bounds or last,
                                                            scope=_clscale.SCOPE_MATRIX,
                                                            mode=_KEEP if keep else 0, **clip)
        if counts:
            _warn_invalid(int(missing.sum()) - _masked_count(inmask), 2)
        elif warn:
            _warn_invalid(_invalid(arr, inmask), 2)
    else:
        lo = hi = np.full((m.shape[0], m.shape[2]), np.nan)
    if want_y:
        # masked: NaN and +-Inf as given, and the values clipped (NaN in y now)
        bad = np.isfinite(y)
        np.logical_not(bad, out=bad)
    if last:
        lo, hi = _clipped_whole(y if want_y else m, y if want_y else None, bad, lo, hi, clip)

    def back(v):
        """batch x rows x cols to the data's layout."""
        if axes == tuple(range(axes[0], axes[-1] + 1)):
            return v.reshape(x.shape)
        k_ = len(axes)
        v = v.reshape(tuple(x.shape[d] for d in axes) + shape)
        return np.moveaxis(v, tuple(range(k_)), axes)
    mask = back(bad)

    def inf_to_nan(v):
        """+-Inf become NaN, as in astropy's unmasked result (y holds NaN
        where clipped already)"""
        inf = np.isinf(v)
        if inf.any():
            v[inf] = np.nan
    if masked:
        # astropy's: the data (copied unless copy=False) under the mask
        # (the library's, not copied again)
        values = y.reshape(arr.shape) if keep else data.result() if copy else arr
        result = np.ma.MaskedArray(values, mask=mask, copy=False)
    elif axis is None:
        # astropy's flattened case: the values kept, in the data's type
        result = arr.ravel()[~mask.ravel()]
    elif want_y and not inplace:
        inf_to_nan(y)
        result = back(y)
    elif copy:
        # a copy in the type of the installed astropy's (float64, or the
        # data's float type, float32 for integers)
        result = arr.astype(clip_dtype(arr.dtype), copy=True)
        result[mask] = np.nan
    elif inplace:
        inf_to_nan(y)
        result = arr
    else:
        result = arr
        result[mask] = np.nan
    if not return_bounds:
        return result
    lo, hi = lo.reshape(shape), hi.reshape(shape)
    if not shape:
        lo, hi = float(lo), float(hi)
    return result, lo, hi


def _clipped_whole(v, y, bad, lo, hi, clip):
    """Newer astropy's result for the columns an iteration clipped whole
    (the library's bounds NaN, nothing clipped: astropy 5's): their last
    bounds, and every value outside them masked (NaN in y where given).
    v: the values (batch x rows x cols; unchanged in those columns)."""
    lo = np.array(lo, dtype=np.float64).reshape(bad.shape[0], bad.shape[2])
    hi = np.array(hi, dtype=np.float64).reshape(lo.shape)
    for b, c in zip(*np.nonzero(np.isnan(lo) & ~bad.all(axis=1))):
        col = v[b, :, c].astype(np.float64)
        lo[b, c], hi[b, c] = _clip_loop.fast_bounds(col, clip)
        with np.errstate(invalid="ignore"):
            out = ~np.isfinite(col) | (col < lo[b, c]) | (col > hi[b, c])
        bad[b, :, c] = out
        if y is not None:
            y[b, out, c] = np.nan
    return lo, hi


def _clip_flat(arr, x, clip, maxiters, devices, return_bounds, masked_count):
    """astropy's flattened clipping (axis=None, masked=False: its
    _sigmaclip_noaxis): the values kept are those within the bounds of
    every iteration, each iteration's bounds taken from the values the one
    before kept; a value clipped once stays clipped. (With an axis, and
    with masked=True, astropy keeps the values within the last bounds
    instead, which may take back values clipped earlier: the library's one
    call.) One library call per iteration (maxiters=1) on the finite values
    still kept, as a column; the values kept in the data's type, and the
    last bounds (NaN once no value is left). masked_count: how many of
    x's NaN were masked values (for astropy's warning)."""
    v = x.ravel()
    idx = np.flatnonzero(np.isfinite(v))
    _warn_invalid(v.size - idx.size - masked_count, 3)
    v = np.ascontiguousarray(v[idx])
    iters = np.inf if clip["maxiters"] < 0 else clip["maxiters"]
    one = dict(clip, maxiters=1)
    lo = hi = np.nan
    it, changed = 0, True
    with context(devices) as ctx:
        while changed and it < iters:
            it += 1
            if v.size == 0:
                lo = hi = np.nan  # astropy's bounds of no values
                break
            bad = np.empty((1, v.size, 1), dtype=bool)
            _, _, _, _, lo_, hi_, _, _ = _clscale.clean(ctx, v.reshape(1, -1, 1), None, bad,
                                                        scope=_clscale.SCOPE_MATRIX, mode=0, **one)
            lo, hi = float(np.ravel(lo_)[0]), float(np.ravel(hi_)[0])
            keep = ~bad.ravel()
            changed = not keep.all()
            if changed:
                idx, v = idx[keep], v[keep]
    result = arr.ravel()[idx]
    return (result, lo, hi) if return_bounds else result


def _clipped_stats(data, sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc, std_ddof, axis, grow,
                   devices):
    """sigma_clipped_stats in one library call, or None where it cannot
    be: the clipping's own statistics of the values kept (cls_clean's
    mean_out, m2_out, and the median as a median imputation's fill value),
    nothing written back. Over float64 values, as astropy's copy (integers
    and float32 converted), with an axis (the flattened case keeps other
    values: _clip_flat), not on devices without float64."""
    clip = _clip_options(sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc, grow)
    if _host_loop(cenfunc, stdfunc, grow):
        return None
    arr, inmask = _unmasked(data)
    if arr.ndim == 0 or arr.size == 0 or arr.dtype.kind not in "biuf" or arr.dtype.itemsize > 8:
        return None
    if axis is None:
        return None  # astropy's flattened clipping (_clip_flat): not the library's one call
    if clip_dtype(arr.dtype) != np.float64:
        return None  # newer astropy's statistics of float32 (float16) values, in their type
    with context(devices) as ctx:
        if not all(d["fp64"] for d in ctx.devices()):
            return None
        x = arr.astype(np.float64, copy=False)
        if inmask is not None and inmask.any():
            x = np.where(inmask, np.nan, x)
        axes = _axes(x.ndim, axis)
        m, shape = _blocks(x, axes)
        last = astropy_keeps_last_bounds()
        missing, clipped, med, _, lo, _, mean, m2 = _clscale.clean(ctx, m, None, None, True,
                                                                    scope=_clscale.SCOPE_MATRIX,
                                                                    impute=_STRATEGIES["median"], **clip)
    if last and (np.isnan(lo) & (missing < m.shape[1])).any():
        return None  # a column clipped whole, newer astropy's bounds kept: sigma_clip's (it warns)
    _warn_invalid(int(missing.sum()) - _masked_count(inmask), 3)
    n = (m.shape[1] - missing - clipped).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, mean, np.nan)
        std = np.where(n > std_ddof, np.sqrt(m2 / (n - std_ddof)), np.nan)
    if np.isnan(mean).any() or np.isnan(std).any():
        warnings.warn("Mean of empty slice" if np.isnan(mean).any() else "Degrees of freedom <= 0 for slice.",
                      RuntimeWarning, stacklevel=3)
    shape = () if axis is None else shape
    out = tuple(np.asarray(v, np.float64).reshape(shape) for v in (mean, med, std))
    return tuple(v if v.ndim else v[()] for v in out)


def sigma_clipped_stats(data, mask=None, mask_value=None, sigma=3.0, sigma_lower=None, sigma_upper=None,
                        maxiters=5, cenfunc="median", stdfunc="std", std_ddof=0, axis=None, grow=False,
                        devices=None):
    """astropy.stats.sigma_clipped_stats on the devices: the mean, median
    and standard deviation (ddof std_ddof) of the values sigma_clip keeps
    (`mask` and values equal to `mask_value`, as numpy.ma.masked_values
    finds them, left out first). The median is numpy's nanmedian of them,
    bit for bit; the mean and std come from the library's moments (Welford
    per column), within rounding of numpy's nanmean and nanstd. All masked:
    numpy.ma.masked three times, as astropy's."""
    data, unit = _unit_of(data)
    if unit is not None:
        # astropy's: Quantities in the data's unit
        if mask_value is not None:
            mask_value = (mask_value << unit).to_value(unit) if hasattr(mask_value, "unit") else mask_value
        out = sigma_clipped_stats(data, mask, mask_value, sigma, sigma_lower, sigma_upper, maxiters, cenfunc,
                                  stdfunc, std_ddof, axis, grow, devices)
        return tuple(v if v is np.ma.masked else _with_unit(v, unit) for v in out)
    if mask is not None:
        data = np.ma.MaskedArray(data, mask)
    if mask_value is not None:
        data = np.ma.masked_values(data, mask_value)
    if isinstance(data, np.ma.MaskedArray) and data.mask.all():
        return np.ma.masked, np.ma.masked, np.ma.masked
    if not (isinstance(std_ddof, numbers.Integral) and std_ddof >= 0):
        raise ValueError(f"std_ddof must be an integer >= 0, got {std_ddof!r}")
    devices = check_selector(devices)
    fast = _clipped_stats(data, sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc, std_ddof, axis,
                          grow, devices)
    if fast is not None:
        return fast
    # astropy's: the values kept, NaN where clipped (float64; with axis=None
    # flattened, NaN-free, in the data's type: float32 statistics then)
    y = sigma_clip(data, sigma=sigma, sigma_lower=sigma_lower, sigma_upper=sigma_upper, maxiters=maxiters,
                   cenfunc=cenfunc, stdfunc=stdfunc, axis=axis, masked=False, copy=True, grow=grow,
                   devices=devices)
    # the statistics' type: the values kept's where they are float16 or
    # float32 (numpy's nanmean of them: the flattened case, and with an
    # axis in newer astropy), else float64
    rtype = (np.dtype(y.dtype.kind + str(y.dtype.itemsize)) if y.dtype.kind == "f"
             and y.dtype.itemsize in (2, 4) else np.dtype(np.float64))
    y = _native_float(y)
    if axis is None:
        if y.size == 0:
            # every value clipped: numpy's statistics of no values, as astropy's
            warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
            nan = np.dtype(rtype).type(np.nan)
            return nan, nan, nan
        y = y.reshape(-1, 1)  # one column of the values kept
    if y.dtype.kind != "f":
        y = y.astype(np.float64)
    # the median in the values' type (numpy's nanmedian: float32 for the
    # flattened float32 case), the moments over float64
    axes = _axes(y.ndim, 0 if axis is None else axis)
    m, shape = _blocks(y, axes)
    if m.size == 0:
        # no values along the axis (or no slices): numpy's statistics of
        # nothing, NaN per slice, as astropy's
        if m.shape[0] * m.shape[2]:
            warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
        nan = np.full(shape, np.nan, dtype=rtype)
        return nan, nan.copy(), nan.copy()
    with context(devices) as ctx:
        if all(d["fp64"] for d in ctx.devices()):
            med = _clscale.medians(ctx, m, scope=_clscale.SCOPE_MATRIX)
            m64 = m if m.dtype == np.float64 else m.astype(np.float64)
            c = ctx.fit(m64, scaler=_clscale.NONE, scope=_clscale.SCOPE_MATRIX).columns()
        else:
            # devices without float64 (rusticl, some GPUs): the values are
            # float32 data's (or the call would have failed already), taken
            # as float32: the median interpolated in float64 (cls_quantiles),
            # the moments within the float32 promise (1e-5 of the reference)
            m32 = m.astype(np.float32)
            q, _ = _clscale.quantiles(ctx, m32, [0.5], scope=_clscale.SCOPE_MATRIX)
            med = q[:, 0, :] if rtype == np.float64 else _clscale.medians(ctx, m32, scope=_clscale.SCOPE_MATRIX)
            c = ctx.fit(m32, scaler=_clscale.NONE, scope=_clscale.SCOPE_MATRIX).columns()
    n = c["count"].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, c["mean"], np.nan)
        std = np.where(n > std_ddof, np.sqrt(c["m2"] / (n - std_ddof)), np.nan)
    if np.isnan(mean).any() or np.isnan(std).any():
        warnings.warn("Mean of empty slice" if np.isnan(mean).any() else "Degrees of freedom <= 0 for slice.",
                      RuntimeWarning, stacklevel=2)
    shape = () if axis is None else shape
    out = tuple(v.reshape(shape).astype(rtype, copy=False) for v in (mean, med, std))
    return tuple(v if v.ndim else v[()] for v in out)


_SUMMARY = ("count", "missing", "mean", "std", "min", "25%", "50%", "75%", "max", "outliers")


def describe(x, *, sigma=3.0, scope="matrix", devices=None):
    """The data summary of `clscale describe`, for an array in memory
    (cls_describe, on the devices): per column the count of finite values,
    the missing ones (NaN, +-Inf), mean, std (ddof 0), min, the quartiles
    and median (numpy's nanpercentile and nanmedian, exact), max, and the
    values beyond `sigma` standard deviations from the mean; and the
    duplicate rows, counted as pandas' DataFrame.duplicated().sum() counts
    them (exact: hashes on the devices, candidates compared on the host).

    x: 2-D (rows x cols), or 3-D (batch x rows x cols) summarised per
    matrix (scope="matrix") or over all rows (scope="batch"). Returns a
    dict of arrays of shape (cols,) (3-D per matrix: (batch, cols)) in
    pandas' describe() order, and "duplicate_rows" (an int; 3-D per matrix:
    an array of batch); `pandas.DataFrame(d)` turns a 2-D summary into a
    table without the duplicates."""
    devices = check_selector(devices)
    if not (isinstance(sigma, numbers.Real) and np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be a finite number > 0, got {sigma!r}")
    if scope not in ("matrix", "batch"):
        raise ValueError(f"scope must be 'matrix' or 'batch', got {scope!r}")
    x = as_data(x)
    per_matrix = x.ndim == 3 and scope == "matrix"
    with context(devices) as ctx:
        d = _clscale.describe(ctx, x, sigma=float(sigma),
                              scope=_clscale.SCOPE_MATRIX if scope == "matrix" else _clscale.SCOPE_BATCH)
    out = {k: (d[k] if per_matrix else d[k][0]) for k in _SUMMARY}
    dup = d["duplicate_rows"]
    out["duplicate_rows"] = dup if per_matrix else int(dup[0])
    return out
