"""RobustScaler and MaxAbsScaler with scikit-learn's semantics, on the
devices: the statistics come from the library (a robust fit: counts and
exact quantiles from one selection, numpy's nanpercentile bit for bit in
float64; max |x| by a fit), and the map y = (x - centre) / scale runs as
the library's robust transform of the fitted statistics (float64, where
its map is scikit-learn's) or its z-score transform of statistics restated
with mean = centre and std = scale (the same bits in float64), so a
transform is one pass on the devices like every other scaler's. The *_file
methods are _files.ScalerFiles', through its hooks: the fit streams the
file (cls_fit: the robust fit's exact quantiles, or max |x|), the
attributes are made here as fit() makes them, the transform streams the
same restated z-score map."""
import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted

from . import _clscale, _dask, _mpi
from ._base import Estimator, keeps_float16, nan_columns, output_for, scope_of
from ._context import check_selector, context
from ._files import ScalerFiles


def _handle_zeros(scale, dtype):
    """scikit-learn's _handle_zeros_in_scale: a scale below 10 eps is 1."""
    scale = np.array(scale, dtype=np.float64)
    scale[scale < 10 * np.finfo(dtype).eps] = 1.0
    return scale


class _AffineScaler(ScalerFiles, Estimator):
    """y = (x - center) / scale per column (and matrix with scope="matrix")."""

    def _scope_of(self, X):
        return scope_of(self.scope, X)

    # ---- ScalerFiles' hooks ----

    def _check_params(self):
        check_selector(self.devices)

    def _fusable(self):
        # the library's robust map is not scikit-learn's for every column
        # (its zero range is below 10 DBL_EPSILON, scikit-learn's the dtype's)
        return False

    def _file_transform_args(self, info, inverse):
        return dict(scaler=self._transform_scaler(), scope=info["scope"], inverse=inverse)

    def _transform_stats(self):
        d = self.__dict__.get("_direct")
        return d if d is not None else self._stats()[0]

    def _transform_scaler(self):
        return _clscale.ZSCORE if self.__dict__.get("_direct") is None else _clscale.ROBUST

    def _empty_columns(self):
        cache = self.__dict__.setdefault("_cache", {})
        if "empty" not in cache:
            have = self._count > 0
            cache["empty"] = ~have if not have.all() else None
        return cache["empty"]

    def _nan_empty(self, Y):
        nan_columns(Y, self._empty_columns())

    def _info_of(self, fitted):
        """The description a fit without a scaler (_fit_moments) keeps."""
        info = dict(fitted.info)
        info.update(scaler=_clscale.NONE, has_moments=True)
        return info

    def _affine(self):
        """(center, scale, count) as groups x cols float64 arrays."""
        raise NotImplementedError

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_cache", None)  # derived: made again when needed
        # the library's statistics object (a robust one does not pickle):
        # the restated z-score map, the same bits in float64 (_stats)
        state.pop("_direct", None)
        return state

    def _stats(self):
        # cached: made once per fit; a transform changes no attribute
        cache = self.__dict__.setdefault("_cache", {})
        if "stats" not in cache:
            center, scale, count = self._affine()
            info = dict(self._info)
            info.update(scaler=_clscale.ZSCORE, has_moments=True)
            have = count > 0
            # float64: std = sqrt(m2 / n) is scale itself with n = 1
            # (sqrt(s * s) == s in binary64; sqrt(n s s / n) missed it in
            # the last bit for 6 % of columns), so the map is the library's
            # robust map of the same statistics, bit for bit
            f64 = np.dtype(self._info["dtype"]) == np.float64
            n = have.astype(np.float64) if f64 else count.astype(np.float64)
            # the columns without values are made empty by from_state
            # (cls_stats_create) whatever they hold: no masking pass here
            center = np.ascontiguousarray(center, dtype=np.float64)
            cols = {"count": have.astype(np.uint64) if f64 else count.astype(np.uint64, copy=False),
                    "missing": self._missing,
                    "min": center, "max": center, "absmax": np.abs(center), "mean": center,
                    "m2": n * scale * scale}
            cache["stats"] = _clscale.Stats.from_state(info, cols)
            cache["empty"] = ~have if not have.all() else None
        return cache["stats"], cache["empty"]

    def _run(self, X, Y, inverse):
        s, empty, scaler = self._transform_stats(), self._empty_columns(), self._transform_scaler()
        info = s.info
        if info["scope"] == _clscale.SCOPE_MATRIX and (X.shape[0] if X.ndim == 3 else 1) != info["groups"]:
            raise ValueError(f"the statistics were fitted per matrix of {info['groups']} matrices; X has "
                             f"{X.shape[0] if X.ndim == 3 else 1}")
        with context(self.devices) as ctx:
            ctx.transform(X, Y, s, scaler=scaler, scope=info["scope"], inverse=inverse)
        nan_columns(Y, empty)  # no finite value: scikit-learn's statistics are NaN, so is its output
        return Y

    @keeps_float16
    def transform(self, X, copy=None, out=None):
        """Scales X on the devices (copy=False: in place; out=: into out).
        A dask array gives a dask array, transformed chunk by chunk."""
        check_is_fitted(self)
        if _dask.is_dask(X):
            return _dask.transform(self, X, inverse=False, scope=self._info["scope"])
        X = self._validate(X, reset=False)
        return self._run(X, output_for(X, self.copy if copy is None else copy, out), inverse=False)

    @keeps_float16
    def inverse_transform(self, X, copy=None, out=None):
        """x = y * scale + center (a dask array: lazily, as transform)."""
        check_is_fitted(self)
        if _dask.is_dask(X):
            return _dask.transform(self, X, inverse=True, scope=self._info["scope"])
        X = self._validate(X, reset=False)
        return self._run(X, output_for(X, self.copy if copy is None else copy, out), inverse=True)

    @keeps_float16
    def fit_transform(self, X, y=None, out=None, comm=None):
        """fit(X) then transform(X). comm=: fit over every rank's X
        (collective), then transform this rank's X. A dask array gives a
        dask array (transform's)."""
        if out is not None and _dask.is_dask(X):
            raise ValueError("out= cannot receive a dask array's transform")
        if comm is None:
            return self.fit(X).transform(X, out=out)
        self.fit(X, comm=comm)
        X = self._validate(X, reset=False, empty_ok=True)
        if X.size == 0:
            return output_for(X, self.copy, out)
        return self.transform(X, out=out)

    def _fit_moments(self, X, scope, keep=False):
        """The library's fit without a scaler: counts, missing, absmax (the
        Stats themselves with `keep`)."""
        with context(self.devices) as ctx:
            s = ctx.fit(X, scaler=_clscale.NONE, scope=scope)
        if keep:
            return s
        self._info = {k: v for k, v in s.info.items()}
        c = s.columns(("count", "missing", "absmax"))  # what the fits read
        self._missing = c["missing"]
        return c

    def _fit_moments_comm(self, X, comm, reset, check=None):
        """The collective part of a fit over comm: this rank's X validated
        (None rows allowed, 2-D or scope batch) and its counts, missing and
        absmax merged over the ranks by _mpi.combine, which first agrees on
        every rank's outcome (scope matrix: this rank's own matrices).
        `check` (the parameters' check) runs inside that agreement. Returns
        (X, Stats)."""
        error, local, info = None, None, None
        try:
            if check is not None:
                check()
            X = self._validate(X, reset=reset, empty_ok=True)
            scope = self._scope_of(X)
            if X.size:
                local = self._fit_moments(X, scope, keep=True)
                info = local.info
            else:
                info = _mpi.empty_info(X, scope, "fits")
        except Exception as e:  # raised on every rank by the agreement
            error = e
        return X, _mpi.combine(comm, error, local, info, local is not None)

    def _shape_attr(self, a):
        return a[0] if self._info["scope"] == _clscale.SCOPE_BATCH else a


class RobustScaler(_AffineScaler):
    """Scales each feature by statistics robust to outliers, as
    scikit-learn's RobustScaler: y = (x - center_) / scale_, center_ the
    median, scale_ the `quantile_range` (percentiles) of the finite values,
    exact (numpy's nanpercentile, found on the devices by sorting networks
    and counting passes, never estimated). A range below 10 eps is 1;
    `unit_variance` divides it by the range of a standard normal's quantiles.
    NaN and +-Inf are ignored by fit and kept by transform. 3-D input:
    scope="matrix" fits each matrix (attributes (batch, cols)).

    Attributes: center_, scale_ (float64; None where disabled),
    n_features_in_, feature_names_in_.
    """

    def __init__(self, *, with_centering=True, with_scaling=True, quantile_range=(25.0, 75.0), copy=True,
                 unit_variance=False, scope="matrix", devices=None):
        self.with_centering = with_centering
        self.with_scaling = with_scaling
        self.quantile_range = quantile_range
        self.copy = copy
        self.unit_variance = unit_variance
        self.scope = scope
        self.devices = devices

    def _reset(self):
        """Forgets what an earlier fit saw."""
        for a in ("center_", "scale_", "_count", "_cache", "_direct", "_info", "_missing", "n_features_in_"):
            self.__dict__.pop(a, None)

    def _check_params(self):
        self._check_range()

    def _quantile_args(self):
        # quantile_range (0, 0) would read as the library's default (25, 75):
        # ask for (0, 100), whose lower quantile, the minimum, is both
        lo, hi = (float(v) for v in self._check_range())
        return dict(qmin=lo, qmax=hi if hi > 0 else 100.0)

    def _file_pipeline(self):
        return dict(scaler=_clscale.ROBUST, **self._quantile_args())

    def _install_file(self, fitted, dtype):
        self._cache = {}
        # the library's robust statistics, which a transform takes as they
        # are where _is_direct (kept when pickled: the restated map may
        # differ from them in the last bit)
        self._direct = fitted if self._is_direct(dtype) else None
        self._info = self._info_of(fitted)
        c = fitted.columns(("count", "missing"))
        self._missing = c["missing"]
        q = fitted.quantiles()
        if float(self.quantile_range[1]) == 0:
            q[:, 2, :] = q[:, 1, :]
        self._set_fitted(c["count"], q, dtype)

    def _check_range(self):
        check_selector(self.devices)
        qr = self.quantile_range
        ok = (isinstance(qr, (tuple, list)) and len(qr) == 2
              and all(isinstance(v, numbers.Real) for v in qr) and 0 <= qr[0] <= qr[1] <= 100)
        if not ok:
            raise ValueError(f"Invalid quantile range: {qr!r}")
        return qr

    def fit(self, X, y=None, comm=None):
        """Finds the median and quantile range of every column on the
        devices. comm= (an mpi4py communicator): a collective fit over the
        ranks' X together, exact (docs/guide/mpi.md); a rank may pass 0
        rows (2-D, or scope="batch"). A dask array is fitted chunk by
        chunk, exact too (one chunk in memory at a time)."""
        if comm is not None:
            return self._fit_comm(X, comm)
        if _dask.is_dask(X):
            return self._fit_dask(X)
        self._check_range()
        X = self._validate(X, reset=True)
        # one library fit: the counts, missing and quantiles come from one
        # selection (no statistics pass ahead of it), the quantiles those
        # of nanquantile as cls_quantiles gives them
        with context(self.devices) as ctx:
            fitted = ctx.fit(X, scaler=_clscale.ROBUST, scope=self._scope_of(X), **self._quantile_args())
        self._install_file(fitted, X.dtype)
        return self

    def _is_direct(self, dtype):
        """Whether the library's robust map of the fitted statistics is
        scikit-learn's, so a transform takes them as they are (no restated
        z-score statistics made in Python, a table as large as the fit's,
        which cost more than the fit's selection of short groups): float64
        data (the zero range is 10 eps of float64 in both), centring and
        scaling, no unit variance (scipy's norm.ppf), a range not (0, 0)."""
        return (np.dtype(dtype) == np.float64 and self.with_centering and self.with_scaling
                and not self.unit_variance and float(self.quantile_range[1]) > 0)

    def _fit_dask(self, X):
        """fit of a dask array, chunk by chunk: the counts and missing of the
        chunks' fits merged (_dask.fit_moments), the quantiles by the
        counting passes summed over the chunks (_dask.quantiles): the same
        bits as fit() of the array in memory."""
        qr = self._check_range()
        self._cache = {}
        self._direct = None
        stats = _dask.fit_moments(self, X, True)
        self._info = dict(stats.info)
        c = stats.columns(("count", "missing"))
        self._missing = c["missing"]
        scope = stats.info["scope"]
        q = _dask.quantiles(self.devices, _dask._prepare(self, X, scope),
                            [0.5, qr[0] / 100.0, qr[1] / 100.0], scope)
        return self._set_fitted(c["count"], q, np.dtype(stats.info["dtype"]))

    def _fit_comm(self, X, comm):
        """fit over every rank's X: the counts and missing of each rank's
        fit merged by _mpi.combine (which also agrees on the outcomes), then
        the quantiles' counting passes summed over the ranks after each pass
        (scope batch); per matrix each rank's own matrices."""
        self._cache = {}
        self._direct = None
        X, stats = self._fit_moments_comm(X, comm, reset=True, check=self._check_range)
        qr, dtype = self.quantile_range, X.dtype
        ranges = comm.allgather((tuple(float(v) for v in qr), bool(self.with_centering),
                                 bool(self.with_scaling), bool(self.unit_variance)))
        if any(r != ranges[0] for r in ranges):
            raise ValueError(f"the ranks fit different quantile ranges or options: {ranges}; every rank "
                             f"must fit the same estimator parameters")
        self._info = dict(stats.info)
        c = stats.columns()
        self._missing = c["missing"]
        qs = [0.5, qr[0] / 100.0, qr[1] / 100.0]
        with context(self.devices) as ctx:
            if stats.info["scope"] == _clscale.SCOPE_MATRIX:
                q, _ = _clscale.quantiles(ctx, X, qs, scope=_clscale.SCOPE_MATRIX)
            else:
                q, _ = _clscale.quantiles(ctx, X, qs, scope=_clscale.SCOPE_BATCH,
                                          combine=_mpi.count_combiner(comm))
        return self._set_fitted(c["count"], q, dtype)

    def _set_fitted(self, count, q, dtype):
        qr = self.quantile_range
        self._count = count
        med, lo, hi = q[:, 0, :], q[:, 1, :], q[:, 2, :]
        self.center_ = self._shape_attr(med) if self.with_centering else None
        if self.with_scaling:
            scale = _handle_zeros(hi - lo, dtype)
            if self.unit_variance:
                from scipy.stats import norm
                scale = scale / (norm.ppf(qr[1] / 100.0) - norm.ppf(qr[0] / 100.0))
            self.scale_ = self._shape_attr(scale)
        else:
            self.scale_ = None
        return self

    def _affine(self):
        g, n = self._count.shape
        center = np.zeros((g, n)) if self.center_ is None else np.reshape(self.center_, (g, n))
        scale = np.ones((g, n)) if self.scale_ is None else np.reshape(self.scale_, (g, n))
        return center, scale, self._count



class MaxAbsScaler(_AffineScaler):
    """Scales each feature by its maximum absolute value, as scikit-learn's
    MaxAbsScaler: y = x / max_abs_ (1 for an all-zero feature), on the
    devices. NaN and +-Inf are ignored by fit and kept by transform.
    partial_fit accumulates. 3-D input: see RobustScaler's scope.

    Attributes: max_abs_, scale_, n_samples_seen_ (rows seen),
    n_features_in_, feature_names_in_.
    """

    def __init__(self, *, copy=True, scope="matrix", devices=None):
        self.copy = copy
        self.scope = scope
        self.devices = devices

    def _reset(self):
        """Forgets what earlier fits saw."""
        for a in ("max_abs_", "_count", "n_features_in_"):
            self.__dict__.pop(a, None)

    def fit(self, X, y=None, comm=None):
        """Finds max |x| of every column on the devices. comm= (an mpi4py
        communicator): a collective fit over the ranks' X together (a rank
        may pass 0 rows: 2-D, or scope="batch"); a dask array is fitted
        chunk by chunk (docs/guide/python.md)."""
        self._reset()
        return self.partial_fit(X, comm=comm)

    def partial_fit(self, X, y=None, comm=None):
        """Adds X's rows: max_abs_ is the maximum over every batch seen.
        comm=: every rank's X together, as fit."""
        first = not hasattr(self, "max_abs_")
        if comm is not None or _dask.is_dask(X):
            if comm is not None:
                X, stats = self._fit_moments_comm(X, comm, reset=first, check=self._check_params)
            else:
                self._check_params()
                stats = _dask.fit_moments(self, X, first)
            self._info = dict(stats.info)
            c = stats.columns(("count", "missing", "absmax"))
            self._missing = c["missing"]
            dtype = np.dtype(stats.info["dtype"])
        else:
            check_selector(self.devices)
            X = self._validate(X, reset=first)
            c = self._fit_moments(X, self._scope_of(X))
            dtype = X.dtype
        absmax, count = c["absmax"], c["count"]
        if not first:
            old = np.reshape(self.max_abs_, absmax.shape)
            absmax = np.fmax(old, absmax)
            count = count + self._count
        # scikit-learn counts rows, missing values or not
        return self._set_fitted(absmax, count, int(self._info["rows"]) + (0 if first else self.n_samples_seen_),
                                dtype)

    def _set_fitted(self, absmax, count, rows, dtype):
        self._cache = {}  # filled by the first transform (a dict made now: transform changes no attribute)
        self._count = count
        self.max_abs_ = self._shape_attr(absmax)
        self.scale_ = self._shape_attr(_handle_zeros(absmax, dtype))
        self.n_samples_seen_ = rows
        return self

    def _affine(self):
        g, n = self._count.shape
        return np.zeros((g, n)), np.reshape(self.scale_, (g, n)), self._count

    def _file_pipeline(self):
        return dict(scaler=_clscale.MAXABS)

    def _install_file(self, fitted, dtype):
        """The state a fit leaves, from the library's max-abs statistics
        `fitted` (stream_fit of a file, or a fused fit_transform)."""
        self._info = self._info_of(fitted)
        c = fitted.columns()
        self._missing = c["missing"]
        self._set_fitted(c["absmax"], c["count"], int(self._info["rows"]), dtype)

    def _install_fused(self, fitted, X, Y):
        """The state a fit of the data that a fused fit_transform (the
        library's max-abs with a cleaning stage, clscale.Pipeline) scaled
        into Y leaves: the statistics `fitted` of the cleaned X."""
        self._install_file(fitted, X.dtype)
        empty = self._count == 0
        nan_columns(Y, empty if empty.any() else None)

