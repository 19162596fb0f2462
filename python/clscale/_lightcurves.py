"""Light curves on the devices: scipy's savgol_filter and uniform_filter1d
with their signatures and results (on finite data), lightkurve's flatten,
and bins (lightkurve's bin, the lecture's smoothing by bins), for a whole
batch of light curves in one call.

Each call views the array as batch x rows x columns with the filtered axis
as the rows (the axes before it the batch, those after it the columns: a
view of a C-contiguous array, no copy) and runs cls_fit_transform's trend or
bins, or cls_fit_transform (bins reduced), on every device. Missing values (NaN, +-Inf) are
ignored in each window and kept in the output, where scipy spreads them;
on finite data the results are scipy's (float64 sums where a device has
float64, float32 sums with a compensation on rusticl, ~1e-5 relative).
"""
import math
import numbers
import operator

import numpy as np

from sklearn.base import BaseEstimator, TransformerMixin

from . import _clscale, _output
from ._base import NanTags, as_data, keeps_float16, output_for
from ._context import check_selector, context
from ._peers import normalize_axis_index
from ._files import npy_layout, stream_clean, via_memory

__all__ = ["Detrend", "Flatten", "bin", "flatten", "savgol_filter", "uniform_filter1d"]

# include/clscale.h's enums
_MEAN, _SAVGOL = 1, 2
_SUBTRACT, _DIVIDE, _TREND = 0, 1, 2
_EDGES = {"reflect": 1, "grid-mirror": 1, "mirror": 2, "nearest": 3, "constant": 4, "grid-constant": 4,
          "wrap": 5, "grid-wrap": 5, "interp": 6}
_BINS = {"mean": 1, "median": 2, "boundary": 3, "sum": 4, "count": 5}
_PMAX = 8


def _along(x, axis):
    """x (float32/float64, any shape) as (batch, rows, cols) with `axis` as
    the rows: a view when x is C-contiguous."""
    x = np.ascontiguousarray(x)
    axis = normalize_axis_index(axis, x.ndim)
    n = lambda dims: int(np.prod(dims, dtype=np.int64))
    return x.reshape(n(x.shape[:axis]), x.shape[axis], n(x.shape[axis + 1:]))


def _new(shape, dtype):
    """A new output array, on memory a dropped output left mapped where
    there is such memory (_output: as the scalers' outputs), else fresh
    memory mapped before the devices write it."""
    return _output.empty_like(np.broadcast_to(np.empty((), dtype), shape))


def _float(x, what):
    x = np.asarray(x)
    if np.iscomplexobj(x):
        raise TypeError(f"clscale.{what}: complex data is not supported")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"clscale.{what}: float32 or float64 data (got {x.dtype}); convert it first")
    return x


def _run(x3, out3, devices, **opts):
    with context(devices) as ctx:
        _clscale.clean(ctx, x3, out3, **opts)


def savgol_filter(x, window_length, polyorder, deriv=0, delta=1.0, axis=-1, mode="interp", cval=0.0, *,
                  devices=None):
    """scipy.signal.savgol_filter on the devices: the same arguments and,
    on finite data, the same results. NaN and +-Inf are ignored in each
    window (the fit goes through the valid values; NaN with fewer than
    polyorder + 1 of them) and the trend is written at every row. polyorder
    at most 8."""
    if mode not in ("mirror", "constant", "nearest", "interp", "wrap"):
        raise ValueError("mode must be 'mirror', 'constant', 'nearest' 'wrap' or 'interp'.")
    x = np.asarray(x)
    if x.dtype != np.float64 and x.dtype != np.float32:
        x = _float(x.astype(np.float64), "savgol_filter")
    window_length, polyorder, deriv = (operator.index(v) for v in (window_length, polyorder, deriv))
    if window_length < 1:
        raise ValueError("window_length must be a positive integer")
    if polyorder >= window_length:
        raise ValueError("polyorder must be less than window_length.")
    if deriv < 0:
        raise ValueError("deriv must be nonnegative.")
    if polyorder > _PMAX:
        raise ValueError(f"clscale.savgol_filter: polyorder {polyorder}: at most {_PMAX}")
    axis = normalize_axis_index(axis, x.ndim)
    if mode == "interp" and window_length > x.shape[axis]:
        raise ValueError("If mode is 'interp', window_length must be less than or equal to the size of x.")
    if not math.isfinite(cval):
        raise ValueError("clscale.savgol_filter: cval must be finite")
    if deriv and not delta > 0:
        raise ValueError(f"clscale.savgol_filter: delta must be > 0, got {delta}")
    if x.size == 0:
        return x.copy()
    x3 = _along(x, axis)
    out = _new(x3.shape, x3.dtype)
    _run(x3, out, devices, detrend=_SAVGOL, detrend_op=_TREND, window=window_length, polyorder=polyorder,
         deriv=deriv, delta=float(delta) if deriv else 0.0, edge=_EDGES[mode],
         cval=float(cval) if mode == "constant" else 0.0)
    return out.reshape(x.shape)


def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *, devices=None):
    """scipy.ndimage.uniform_filter1d on the devices: the same arguments and,
    on finite data, the same results. NaN and +-Inf are ignored in each
    window (the mean of the valid values; NaN with none) and the mean is
    written at every row. float32 and float64 data."""
    x = _float(input, "uniform_filter1d")
    size = operator.index(size)
    if size < 1:
        raise RuntimeError("incorrect filter size")
    origin = operator.index(origin)
    if size // 2 + origin < 0 or size // 2 + origin >= size:
        raise ValueError("invalid origin")
    if mode not in _EDGES or mode == "interp":
        raise RuntimeError("boundary mode not supported")
    if not math.isfinite(cval):
        raise ValueError("clscale.uniform_filter1d: cval must be finite")
    axis = normalize_axis_index(axis, x.ndim)
    if isinstance(output, np.ndarray):
        if output.shape != x.shape:
            raise RuntimeError("output shape not correct")
        target = output
    else:
        target = _new(x.shape, x.dtype if output is None else np.dtype(output))
        if target.dtype not in (np.float32, np.float64):
            raise TypeError(f"clscale.uniform_filter1d: a float32 or float64 output (got {target.dtype})")
    if x.size == 0:
        return target
    x3 = _along(x, axis)
    direct = target.dtype == x.dtype and target.flags.c_contiguous and target.flags.writeable
    out = target.reshape(x3.shape) if direct else _new(x3.shape, x3.dtype)
    _run(x3, out, devices, detrend=_MEAN, detrend_op=_TREND, window=size, origin=origin, edge=_EDGES[mode],
         cval=float(cval) if _EDGES[mode] == 4 else 0.0)
    if not direct:
        target[...] = out.reshape(x.shape)
    return target


def flatten(flux, window_length=101, polyorder=2, return_trend=False, niters=3, sigma=3, mask=None, axis=-1, *,
            devices=None):
    """lightkurve's LightCurve.flatten for a batch of evenly sampled light
    curves along `axis`: a Savitzky-Golay trend (window_length, polyorder,
    scipy's interp edges) fitted `niters` times, each time without the
    values that astropy's sigma_clip (sigma, median centre, std, 5
    iterations) finds outliers in flux - trend (lightkurve's outlier mask),
    then flux / trend (NaN and +-Inf kept as they were): the library's
    flatten (cls_clean's flatten_niters), every fit and clip on the
    devices. NaN, +-Inf and `mask` (True: leave out of the fits and of the
    clips' statistics, as lightkurve's) take no part in the fit; the trend
    is the fit's value at every row (a value left out gets the trend of
    its window, where lightkurve interpolates between the values kept, and
    lightkurve drops the values left out before it fits: the windows here
    keep their length in rows). Returns the flattened flux, and
    (flattened, trend) with return_trend."""
    x = np.asarray(flux)
    if x.dtype not in (np.float32, np.float64):
        x = _float(x.astype(np.float64), "flatten")
    window_length, polyorder, niters = (operator.index(v) for v in (window_length, polyorder, niters))
    axis = normalize_axis_index(axis, x.ndim)
    n = x.shape[axis]
    if window_length > n:  # lightkurve shortens the window to the series (odd)
        window_length = n if n % 2 else n - 1
    if polyorder >= window_length:
        polyorder = window_length - 1
    if window_length < 1 or polyorder < 0 or niters < 1 or not sigma > 0:
        raise ValueError("clscale.flatten: window_length >= 1, polyorder >= 0, niters >= 1 and sigma > 0")
    x3 = _along(x, axis)
    # the library's flatten (cls_clean's flatten_niters): the fits and the
    # clips between them on the devices, no loop here; a mask leaves its
    # values out of every fit and of the clips' statistics, as lightkurve's
    src = x3
    if mask is not None:
        m = np.broadcast_to(np.asarray(mask, dtype=bool), x.shape)
        src = np.where(_along(m, axis), np.nan, x3).astype(x3.dtype, copy=False)
    opts = dict(detrend=_SAVGOL, window=window_length, polyorder=polyorder, flatten_niters=niters,
                flatten_sigma=float(sigma))
    flat = _new(x3.shape, x3.dtype)
    if not return_trend and mask is None:
        _run(x3, flat, devices, detrend_op=_DIVIDE, **opts)
        return flat.reshape(x.shape)
    trend = _new(x3.shape, x3.dtype)
    _run(src, trend, devices, detrend_op=_TREND, **opts)
    # flux / trend, the missing values kept as they were (the library's divide)
    np.copyto(flat, x3)
    np.divide(x3, trend, out=flat, where=np.isfinite(x3))
    flat = flat.reshape(x.shape)
    return (flat, trend.reshape(x.shape)) if return_trend else flat


def bin(x, size, method="mean", axis=-1, *, smooth=False, devices=None):
    """Bins of `size` neighbouring values along `axis` (from the first; the
    last may be shorter), missing values (NaN, +-Inf) left out.
    smooth=False (lightkurve's bin, astropy's aggregate_downsample for
    evenly sampled series): one value per bin, its 'mean', 'median', 'sum'
    or 'count' of valid values (NaN for the mean and median of a bin with
    none). smooth=True (smoothing by bins): the same shape, each valid
    value replaced by its bin's 'mean', 'median' or nearest 'boundary'
    (min or max; the min on a tie)."""
    x = _float(x, "bin")
    size = operator.index(size)
    if size < 1:
        raise ValueError(f"clscale.bin: size must be >= 1, got {size}")
    allowed = ("mean", "median", "boundary") if smooth else ("mean", "median", "sum", "count")
    if method not in allowed:
        raise ValueError(f"clscale.bin: method must be one of {', '.join(allowed)} (smooth={smooth}), "
                         f"got {method!r}")
    axis = normalize_axis_index(axis, x.ndim)
    x3 = _along(x, axis)
    if smooth:
        out = _new(x3.shape, x3.dtype)
        if x.size:
            _run(x3, out, devices, bin_rows=size, bin_stat=_BINS[method])
        return out.reshape(x.shape)
    if size == 1 and method in ("mean", "median"):
        # a bin of one row is its value, NaN where it is missing; the
        # library reads an output of the input's shape as smoothing, which
        # keeps the missing values as they were
        return np.where(np.isfinite(x), x, np.asarray(np.nan, dtype=x.dtype))
    nb = -(-x.shape[axis] // size)
    out = _new((x3.shape[0], nb, x3.shape[2]), x.dtype)
    if out.size:
        with context(devices) as ctx:
            _clscale.bin_data(ctx, x3, out, bin_rows=size, bin_stat=_BINS[method])
    shape = list(x.shape)
    shape[axis] = nb
    return out.reshape(shape)


class Detrend(NanTags, TransformerMixin, BaseEstimator):
    """A moving-average or Savitzky-Golay trend removed along the rows (the
    time axis: axis 0 of a 2-D table of cadences x bands, axis 1 of a 3-D
    batch x cadences x bands), per column, for a scikit-learn pipeline:
    `make_pipeline(Detrend(), MinMaxScaler())`.

    method "savgol" (scipy.signal.savgol_filter's trend: window_length,
    polyorder, mode "interp", "mirror", "nearest", "constant", "wrap") or
    "mean" (scipy.ndimage.uniform_filter1d's: window_length, mode
    "reflect", "mirror", "nearest", "constant", "wrap"); mode None takes
    scipy's default ("interp", "reflect"). op "subtract" (x - trend),
    "divide" (x / trend, as lightkurve's flatten) or "trend" (the trend
    itself). NaN and +-Inf are left out of each window and kept in the
    output (but with op="trend"). Stateless like SigmaClip: fit checks the
    parameters and records n_features_in_; transform detrends the data it
    is given (a new array, or X itself with copy=False)."""

    def __init__(self, method="savgol", window_length=101, polyorder=2, *, op="subtract", mode=None, cval=0.0,
                 copy=True, devices=None):
        self.method = method
        self.window_length = window_length
        self.polyorder = polyorder
        self.op = op
        self.mode = mode
        self.cval = cval
        self.copy = copy
        self.devices = devices

    def _opts(self, rows):
        if self.method not in ("savgol", "mean"):
            raise ValueError(f"method must be 'savgol' or 'mean', got {self.method!r}")
        if self.op not in ("subtract", "divide", "trend"):
            raise ValueError(f"op must be 'subtract', 'divide' or 'trend', got {self.op!r}")
        w = self.window_length
        if not isinstance(w, numbers.Integral) or w < 1:
            raise ValueError(f"window_length must be an integer >= 1, got {w!r}")
        if not (isinstance(self.cval, numbers.Real) and math.isfinite(self.cval)):
            raise ValueError(f"cval must be a finite number, got {self.cval!r}")
        savgol = self.method == "savgol"
        mode = self.mode if self.mode is not None else ("interp" if savgol else "reflect")
        modes = ("interp", "mirror", "nearest", "constant", "wrap") if savgol else \
            ("reflect", "mirror", "nearest", "constant", "wrap")
        if mode not in modes:
            raise ValueError(f"mode must be one of {', '.join(modes)} for method={self.method!r}, got {mode!r}")
        op = {"subtract": _SUBTRACT, "divide": _DIVIDE, "trend": _TREND}[self.op]
        o = dict(detrend=_SAVGOL if savgol else _MEAN, detrend_op=op, window=int(w), edge=_EDGES[mode],
                 cval=float(self.cval) if mode == "constant" else 0.0)
        if savgol:
            p = self.polyorder
            if not isinstance(p, numbers.Integral) or not 0 <= p < w or p > _PMAX:
                raise ValueError(f"polyorder must be an integer, 0 <= polyorder < window_length and at most {_PMAX}, "
                                 f"got {p!r}")
            if mode == "interp" and rows is not None and w > rows:
                raise ValueError(f"mode 'interp' needs window_length ({w}) <= the rows ({rows}); take another mode")
            o["polyorder"] = int(p)
        return o

    def fit(self, X, y=None):
        X = as_data(X, self)
        self._opts(X.shape[-2])
        self.n_features_in_ = X.shape[-1]
        return self

    @keeps_float16
    def transform(self, X):
        X = as_data(X, self)
        opts = self._opts(X.shape[-2])
        Y = output_for(X, self.copy, None)
        x3 = X.reshape((1,) + X.shape) if X.ndim == 2 else X
        _run(x3, Y.reshape(x3.shape), check_selector(self.devices), **opts)
        return Y

    @keeps_float16
    def fit_transform(self, X, y=None, **fit_params):
        return self.fit(X).transform(X)

    def fit_transform_file(self, in_path, out_path):
        """fit_transform() of the .npy file `in_path` into the .npy file
        `out_path` (replaced only when everything succeeded), streamed by
        the library in chunks of whole matrices, a matrix larger than a
        buffer in blocks of rows with the rows its windows read (halo
        rows, every edge mode): a file of any size, the same bytes as in
        memory. A file the streaming does not read (not float32/float64)
        goes through memory: the input mapped, the output a mapped
        temporary renamed onto out_path."""
        try:
            _, _, shape = npy_layout(in_path)
        except ValueError:
            shape = None
        if shape is not None:
            opts = self._opts(shape[-2])
            _, _, res = stream_clean(check_selector(self.devices), in_path, out_path, opts, _clscale.SCOPE_MATRIX)
            if res is not None:
                self.n_features_in_ = shape[-1]
                return self

        def run(X, Y):
            X = as_data(X, self)
            opts = self._opts(X.shape[-2])
            x3 = X.reshape((1,) + X.shape) if X.ndim == 2 else X
            _run(x3, Y.reshape(x3.shape), check_selector(self.devices), **opts)
            self.n_features_in_ = X.shape[-1]
        via_memory(in_path, out_path, run)
        return self


class Flatten(NanTags, TransformerMixin, BaseEstimator):
    """clscale.flatten (lightkurve's LightCurve.flatten: flux over a
    Savitzky-Golay trend refitted `niters` times without the outliers that
    a `sigma`-sigma clip of flux - trend finds) along the rows, for a
    scikit-learn pipeline: `make_pipeline(SigmaClip(), Flatten(),
    MinMaxScaler())`. The rows are the time axis: axis 0 of a 2-D table,
    axis 1 of a 3-D batch. Stateless: fit checks and records
    n_features_in_; transform returns a new array."""

    def __init__(self, window_length=101, polyorder=2, *, niters=3, sigma=3.0, devices=None):
        self.window_length = window_length
        self.polyorder = polyorder
        self.niters = niters
        self.sigma = sigma
        self.devices = devices

    def _check(self):
        for name in ("window_length", "polyorder", "niters"):
            v = getattr(self, name)
            if not isinstance(v, numbers.Integral) or v < (0 if name == "polyorder" else 1):
                raise ValueError(f"{name} must be an integer >= {0 if name == 'polyorder' else 1}, got {v!r}")
        if not (isinstance(self.sigma, numbers.Real) and self.sigma > 0):
            raise ValueError(f"sigma must be a number > 0, got {self.sigma!r}")

    def fit(self, X, y=None):
        self._check()
        self.n_features_in_ = as_data(X, self).shape[-1]
        return self

    @keeps_float16
    def transform(self, X):
        self._check()
        X = as_data(X, self)
        return flatten(X, self.window_length, self.polyorder, niters=self.niters, sigma=self.sigma,
                       axis=X.ndim - 2, devices=check_selector(self.devices))

    @keeps_float16
    def fit_transform(self, X, y=None, **fit_params):
        return self.fit(X).transform(X)
