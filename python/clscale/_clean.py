"""Cleaning estimators: SimpleImputer (scikit-learn's semantics) and
SigmaClip (astropy's sigma_clip along axis 0), both on every OpenCL device
the `devices` selector names (the library's cls_fit_transform), and from file
to file through the library's streamed cleaning (fit_transform_file,
_files.stream_clean)."""
import numbers

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _clscale, _dask, _mpi
from ._base import NanTags, as_data, keeps_float16, output_for
from ._context import check_selector, context
from ._files import stream_clean, via_memory

_STRATEGIES = {"mean": 1, "median": 2, "most_frequent": 3, "constant": 4}
_SCOPES = {"matrix": 0, "batch": 1}


def _scope(scope):
    if scope not in _SCOPES:
        raise ValueError(f"scope must be 'matrix' or 'batch', got {scope!r}")
    return _SCOPES[scope]


def _missing(missing_values):
    """None for NaN (always missing), else the sentinel as a float."""
    if missing_values is None or (isinstance(missing_values, float) and np.isnan(missing_values)):
        return None
    if not isinstance(missing_values, numbers.Real):
        raise ValueError(f"missing_values must be NaN or a number, got {missing_values!r}")
    return float(missing_values)


class SimpleImputer(NanTags, TransformerMixin, BaseEstimator):
    """Fills missing values with each column's mean, median, most frequent
    value (the smallest of ties) or a constant, as scikit-learn's
    SimpleImputer does, on the devices.

    Missing: NaN, +-Inf, and values equal to `missing_values` when it is a
    number. A column with no value left keeps its missing values (NaN)
    rather than being dropped, so the output keeps the input's shape; a
    `constant` fills it. 3-D input (batch x rows x cols) is imputed per
    matrix with scope="matrix", or over all its rows with scope="batch".
    fit_transform runs on the devices in one call; transform of other data
    fills with the fitted `statistics_` (on the host).

    Attributes: statistics_ (cols,) or (batch, cols), n_features_in_.
    """

    def __init__(self, *, missing_values=np.nan, strategy="mean", fill_value=None, copy=True, scope="matrix",
                 devices=None):
        self.missing_values = missing_values
        self.strategy = strategy
        self.fill_value = fill_value
        self.copy = copy
        self.scope = scope
        self.devices = devices

    def _opts(self):
        if self.strategy not in _STRATEGIES:
            raise ValueError(f"strategy must be one of {sorted(_STRATEGIES)}, got {self.strategy!r}")
        fill = 0.0 if self.fill_value is None else self.fill_value
        if self.strategy == "constant" and not (isinstance(fill, numbers.Real) and np.isfinite(fill)):
            raise ValueError(f"fill_value must be a finite number, got {self.fill_value!r}")
        return dict(scope=_scope(self.scope), impute=_STRATEGIES[self.strategy], fill_value=float(fill),
                    missing_value=_missing(self.missing_values))

    def fit(self, X, y=None, comm=None):
        """Finds each column's statistic on the devices. comm= (an mpi4py
        communicator): a collective fit over the ranks' X together (mean,
        median, constant; a rank may pass 0 rows: 2-D, or scope="batch";
        3-D per matrix: each rank its own matrices). A dask array is
        fitted chunk by chunk (mean, median, constant; one chunk in memory
        at a time); its transform stays lazy."""
        if comm is not None:
            return self._fit_comm(X, comm)
        if _dask.is_dask(X):
            return self._fit_dask(X)
        X = as_data(X, self)
        self._clean(X, np.empty_like(X))
        return self

    @keeps_float16
    def fit_transform(self, X, y=None, comm=None, **fit_params):
        """fit then transform: one call on the devices. comm=: fit over
        every rank's X (collective), then fill this rank's X; a dask array:
        fit, then a lazy transform."""
        if _dask.is_dask(X):
            return self.fit(X).transform(X)
        if comm is not None:
            self.fit(X, comm=comm)
            X = as_data(X, self, empty_ok=True)
            return output_for(X, self.copy, None) if X.size == 0 else self.transform(X)
        X = as_data(X, self)
        Y = output_for(X, self.copy, None)
        self._clean(X, Y)
        return Y

    def _scope_of(self, X):
        return _scope(self.scope) if X.ndim == 3 else _clscale.SCOPE_BATCH

    def _fit_dask(self, X):
        """fit of a dask array, chunk by chunk, as over MPI ranks: the mean
        from the chunks' moments merged (_dask.fit_moments: Chan's formulas,
        equal to the fit in memory within rounding), the median by the
        counting passes summed over the chunks (_dask.quantiles: the same
        bits), the sentinel made NaN chunk by chunk."""
        opts = self._opts()
        if self.strategy == "most_frequent":
            raise ValueError("strategy='most_frequent' is not fitted over the chunks of a dask array: use "
                             "'mean', 'median' or 'constant', or fit the array in memory (X.compute())")
        check_selector(self.devices)
        scope = self._scope_of(X)
        X = _dask._prepare(self, X, scope)
        sent = opts["missing_value"]
        if sent is not None:
            X = X.map_blocks(lambda b: np.where(b == sent, np.array(np.nan, b.dtype), b), dtype=X.dtype)
        stats = _dask.fit_moments(self, X, True)  # also checks that X holds rows
        groups, cols = stats.info["groups"], stats.info["cols"]
        if self.strategy == "mean":
            # the cleaning's own means, its moments pass merged over the
            # chunks (_dask.clean): fit()'s bits when there is one chunk
            fill = _dask.clean(self.devices, X, opts, X.dtype)[1][2]
        elif self.strategy == "median":
            fill = _dask.quantiles(self.devices, X, None, scope)  # numpy's nanmedian, as fit()
        else:
            fill = np.full((groups, cols), opts["fill_value"])
        self.statistics_ = fill[0] if X.ndim == 2 else fill
        self.n_features_in_ = cols
        return self

    def _fit_comm(self, X, comm):
        """fit over every rank's X: the counts and means of each rank's
        values merged by _mpi.combine (which also agrees on the outcomes
        and on the shapes), the median by the counting passes summed over
        the ranks (as RobustScaler's); per matrix each rank's own."""
        error, local, info, data = None, None, None, None
        try:
            opts = self._opts()
            if self.strategy == "most_frequent":
                raise ValueError("strategy='most_frequent' is not fitted over MPI ranks (comm=): use 'mean', "
                                 "'median' or 'constant', or fit the gathered rows in one process")
            X = as_data(X, self, empty_ok=True)
            scope = opts["scope"] if X.ndim == 3 else _clscale.SCOPE_BATCH
            sent = opts["missing_value"]
            # the sentinel as NaN, which the library's fit and quantiles skip
            data = X if sent is None or X.size == 0 else np.where(X == sent, np.array(np.nan, X.dtype), X)
            if X.size:
                with context(check_selector(self.devices)) as ctx:
                    local = ctx.fit(data, scaler=_clscale.NONE, scope=scope)
                info = local.info
            else:
                info = _mpi.empty_info(X, scope, "imputes")
        except Exception as e:  # raised on every rank by the agreement
            error = e
        stats = _mpi.combine(comm, error, local, info, local is not None)
        params = comm.allgather((self.strategy, repr(self.fill_value), repr(self.missing_values)))
        if any(p != params[0] for p in params):
            raise ValueError(f"the ranks impute with different strategies or values: {params}; every rank "
                             f"must fit the same estimator parameters")
        groups, cols = stats.info["groups"], stats.info["cols"]
        if self.strategy == "mean":
            # the cleaning's own means (fit()'s call), its moments pass
            # merged over the ranks: one process's bits on one rank
            hooks = dict(combine=_mpi.count_combiner(comm), combine_stats=_mpi.stats_combiner(comm)) \
                if stats.info["scope"] == _clscale.SCOPE_BATCH else {}
            opts["scope"] = stats.info["scope"]
            with context(check_selector(self.devices)) as ctx:
                fill = _clscale.clean(ctx, X, np.empty_like(X) if X.size else None, **opts, **hooks)[2]
        elif self.strategy == "median":
            batch = stats.info["scope"] == _clscale.SCOPE_BATCH
            # numpy's nanmedian ((a + b) / 2 in the dtype), as fit() in one process
            with context(check_selector(self.devices)) as ctx:
                fill = _clscale.medians(ctx, data, scope=stats.info["scope"],
                                        **({"combine": _mpi.count_combiner(comm)} if batch else {}))
        else:
            fill = np.full((groups, cols), opts["fill_value"])
        self.statistics_ = fill[0] if X.ndim == 2 else fill
        self.n_features_in_ = cols
        return self

    def fit_transform_file(self, in_path, out_path):
        """fit_transform() of the array in the .npy file `in_path`, written
        to the .npy file `out_path` (replaced only when everything
        succeeded; never the input), through the library's streamed
        cleaning: one pass when each group (a matrix, or the whole array
        with scope="batch") fits one stream buffer, else the cleaning's own
        passes over the file (a median: its counting passes too; the most
        frequent value: counting tables over the file in a fixed budget).
        statistics_ as fit() sets it."""
        opts = self._opts()
        devices = check_selector(self.devices)
        _, shape, res = stream_clean(devices, in_path, out_path, opts, opts["scope"])
        if res is None:
            via_memory(in_path, out_path, lambda X, Y: self._clean(as_data(X, self), Y))
            return self
        fill = res[3]
        self.statistics_ = fill[0] if len(shape) == 2 else fill
        self.n_features_in_ = shape[-1]
        return self

    def _clean(self, X, Y):
        with context(check_selector(self.devices)) as ctx:
            missing, _, fill, _, _, _, _, _ = _clscale.clean(ctx, X, Y, **self._opts())
        self.statistics_ = fill[0] if X.ndim == 2 else fill
        self.n_features_in_ = X.shape[-1]
        return missing, fill

    @keeps_float16
    def transform(self, X):
        """Fills X's missing values with statistics_ (on the host). A dask
        array gives a dask array, filled chunk by chunk."""
        check_is_fitted(self, "statistics_")
        if _dask.is_dask(X):
            return self._transform_dask(X)
        X = as_data(X, self)
        if X.shape[-1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[-1]} features, but SimpleImputer is expecting "
                             f"{self.n_features_in_} features as input.")
        Y = X.copy() if self.copy else X
        sent = _missing(self.missing_values)
        miss = ~np.isfinite(Y) if sent is None else (~np.isfinite(Y)) | (Y == sent)
        stats = np.asarray(self.statistics_, dtype=Y.dtype)
        if Y.ndim == 3 and stats.ndim == 2:
            stats = stats[:, None, :]
        full = np.broadcast_to(stats, Y.shape)
        Y[miss] = full[miss]
        return Y

    def _transform_dask(self, X):
        # whole rows per chunk, and every matrix when statistics_ is per matrix
        per_matrix = np.ndim(self.statistics_) == 2 and X.ndim == 3
        X = _dask._prepare(self, X, _clscale.SCOPE_MATRIX if per_matrix else _clscale.SCOPE_BATCH)
        if X.shape[-1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[-1]} features, but SimpleImputer is expecting "
                             f"{self.n_features_in_} features as input.")
        fill = self.transform
        return X.map_blocks(lambda b: fill(np.array(b, order="C")) if b.size else np.array(b),
                            dtype=X.dtype, meta=np.empty((0,) * X.ndim, X.dtype))


class SigmaClip(NanTags, TransformerMixin, BaseEstimator):
    """astropy's sigma_clip(X, axis=0) per column, on the devices: values
    beyond `sigma` spreads (`stdfunc`: "std" or "mad_std") from the centre
    (`cenfunc`: "median" or "mean") of the values kept are clipped,
    iteration after iteration, until nothing changes (maxiters=None) or
    `maxiters` iterations ran; as astropy's, the values clipped in the end
    are those outside the last bounds. Clipped values become NaN
    (mode="mask", astropy's masked values) or take the nearest bound
    (mode="clamp").

    Stateless like astropy's SigmaClip: fit does nothing; transform clips
    the data it is given. After a transform, `clipped_` holds the counts of
    clipped values per column (and group) and `iterations_` the iterations.

    comm= (an mpi4py communicator) on transform and fit_transform: a
    collective clipping of every rank's rows together (2-D, or 3-D with
    scope="batch"): each rank's values are clipped by the bounds of all the
    ranks' rows (the library's cleaning with its combine hooks: counts
    summed, moments merged after each pass), clipped_ and iterations_ are
    those of all the rows; a rank may pass 0 rows. 3-D with scope="matrix":
    each rank clips its own whole matrices.
    """

    def __init__(self, sigma=3.0, *, sigma_lower=None, sigma_upper=None, maxiters=5, cenfunc="median",
                 stdfunc="std", mode="mask", copy=True, scope="matrix", devices=None):
        self.sigma = sigma
        self.sigma_lower = sigma_lower
        self.sigma_upper = sigma_upper
        self.maxiters = maxiters
        self.cenfunc = cenfunc
        self.stdfunc = stdfunc
        self.mode = mode
        self.copy = copy
        self.scope = scope
        self.devices = devices

    def _opts(self):
        def k(v, name):
            if v is None:
                return 0.0
            if not (isinstance(v, numbers.Real) and np.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
            return float(v)
        if self.cenfunc not in ("median", "mean"):
            raise ValueError(f"cenfunc must be 'median' or 'mean', got {self.cenfunc!r}")
        if self.stdfunc not in ("std", "mad_std"):
            raise ValueError(f"stdfunc must be 'std' or 'mad_std', got {self.stdfunc!r}")
        if self.mode not in ("mask", "clamp"):
            raise ValueError(f"mode must be 'mask' or 'clamp', got {self.mode!r}")
        if self.maxiters is None:
            iters = -1
        elif isinstance(self.maxiters, numbers.Integral) and self.maxiters >= 1:
            iters = int(self.maxiters)
        else:
            raise ValueError(f"maxiters must be None or an integer >= 1, got {self.maxiters!r}")
        return dict(scope=_scope(self.scope), sigma=k(self.sigma, "sigma"),
                    sigma_lower=k(self.sigma_lower, "sigma_lower"), sigma_upper=k(self.sigma_upper, "sigma_upper"),
                    maxiters=iters, center=int(self.cenfunc == "mean"), spread=int(self.stdfunc == "mad_std"),
                    mode=int(self.mode == "clamp"))

    def fit(self, X, y=None, comm=None):
        """Checks the parameters and X (nothing is fitted). comm=: every
        rank checks its own X (0 rows allowed), collectively."""
        if comm is not None:
            X, _ = self._agree(X, comm)
        elif _dask.is_dask(X):
            self._opts()
            _dask._prepare(self, X, _clscale.SCOPE_BATCH)  # checks the dimensions
        else:
            self._opts()
            X = as_data(X, self)
        self.n_features_in_ = X.shape[-1]
        return self

    @keeps_float16
    def transform(self, X, comm=None):
        """Clips X (into a copy unless copy=False). comm=: clips this rank's
        X by the bounds of every rank's rows together (collective)."""
        if comm is not None:
            return self._transform_comm(X, comm)
        if _dask.is_dask(X):
            return self._transform_dask(X)
        X = as_data(X, self)
        Y = output_for(X, self.copy, None)
        self._clip_into(X, Y)
        return Y

    def _transform_dask(self, X):
        """A dask array clipped as one array, lazily: the cleaning's passes
        over the chunks summed now (_dask.clean: replayed, one chunk in
        memory at a time), then each chunk clipped by the bounds of all the
        rows when the result is computed. clipped_ and iterations_: all the
        rows'."""
        opts = self._opts()
        check_selector(self.devices)
        opts["scope"] = opts["scope"] if X.ndim == 3 else _clscale.SCOPE_BATCH
        X = _dask._prepare(self, X, opts["scope"])
        Y, (_, clipped, _, iters) = _dask.clean(self.devices, X, opts, X.dtype)
        self._set_clipped(X.ndim, clipped, iters)
        self.n_features_in_ = X.shape[-1]
        return Y

    def _agree(self, X, comm):
        """The collective checks of a clipping over comm: this rank's X and
        the parameters, then every rank's outcome, columns, dtype and
        parameters agreed (_mpi.agree: a failure raises on every rank).
        Returns (X, opts)."""
        error, opts, info, has_rows = None, None, None, False
        try:
            opts = self._opts()
            with context(check_selector(self.devices)):
                pass  # the devices exist (a context made now is pooled for the call)
            X = as_data(X, self, empty_ok=True)
            opts["scope"] = opts["scope"] if X.ndim == 3 else _clscale.SCOPE_BATCH
            has_rows = X.size > 0
            # what _mpi.agree compares (empty_info refuses a rank without
            # rows per matrix)
            info = _mpi.empty_info(X, opts["scope"], "clips") if not has_rows else {
                "scaler": _clscale.NONE, "scope": opts["scope"], "lo": 0.0, "hi": 0.0, "clip": False,
                "dtype": X.dtype.name, "cols": X.shape[-1]}
        except Exception as e:  # raised on every rank by the agreement
            error = e
        everyone = _mpi.agree(comm, error, (info, has_rows))
        if not any(h for _, h in everyone):
            raise ValueError(f"none of the {comm.Get_size()} ranks holds any row to clip")
        params = comm.allgather(sorted(opts.items()))
        if any(p != params[0] for p in params):
            raise ValueError(f"the ranks clip with different parameters: {params}; every rank must use the "
                             f"same estimator parameters")
        return X, opts

    def _transform_comm(self, X, comm):
        X, opts = self._agree(X, comm)
        self.n_features_in_ = X.shape[-1]
        Y = output_for(X, self.copy, None)
        if opts["scope"] == _clscale.SCOPE_MATRIX:  # each rank its own matrices
            self._clip_into(X, Y)
            return Y
        hooks = dict(combine=_mpi.count_combiner(comm), combine_stats=_mpi.stats_combiner(comm))
        with context(check_selector(self.devices)) as ctx:
            if X.size:
                _, clipped, _, iters, _, _, _, _ = _clscale.clean(ctx, X, Y, **opts, **hooks)
            else:  # no rows: this rank counts nothing and still combines
                _, clipped, _, iters, _, _, _, _ = _clscale.clean(ctx, X, None, **opts, **hooks)
        self._set_clipped(X.ndim, clipped, iters)
        return Y

    def _clip_into(self, X, Y):
        with context(check_selector(self.devices)) as ctx:
            _, clipped, _, iters, _, _, _, _ = _clscale.clean(ctx, X, Y, **self._opts())
        self._set_clipped(X.ndim, clipped, iters)

    def _set_clipped(self, ndim, clipped, iters):
        self.clipped_ = clipped[0] if ndim == 2 else clipped
        self.iterations_ = iters

    def fit_transform_file(self, in_path, out_path):
        """fit_transform() of the array in the .npy file `in_path`, written
        to the .npy file `out_path` (replaced only when everything
        succeeded; never the input), through the library's streamed
        cleaning: one pass when each group (a matrix, or the whole array
        with scope="batch") fits one stream buffer, else per iteration the
        medians' counting passes (cenfunc or stdfunc median-based) and a
        moments pass over the file, then the writing pass. clipped_ and
        iterations_ as transform() sets them."""
        opts = self._opts()
        devices = check_selector(self.devices)
        _, shape, res = stream_clean(devices, in_path, out_path, opts, opts["scope"])
        if res is None:  # one-row matrices: see _files.stream_clean
            via_memory(in_path, out_path, lambda X, Y: self._clip_into(as_data(X, self), Y))
        else:
            self._set_clipped(len(shape), res[2], res[4])
        self.n_features_in_ = shape[-1]
        return self

    @keeps_float16
    def fit_transform(self, X, y=None, comm=None, **fit_params):
        """transform(X) (comm=: collective, as transform's)."""
        if comm is not None:
            return self._transform_comm(X, comm)
        return self.fit(X).transform(X)
