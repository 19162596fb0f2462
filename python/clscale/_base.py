"""What every clscale estimator shares: input validation, the output array,
and the scaler base class that fits, merges, transforms and saves through
the library.

A scaler is a subclass of `Scaler` that names the library's scaler
(`_code`) and its fitted attributes (`_fitted_attrs`), and says: the range
and clip it fits with (`_range`, `_clip`), the attributes its statistics
give (`_attributes`), and, where scikit-learn's formulas differ from the
library's for some columns (constant ones), the statistics that make the
library apply scikit-learn's map (`_apply_stats`, `_refit_count`).
Fitting, merging (partial_fit), transforming both ways, the fused
fit_transform, pickling, save/load and the stats file's registry are here,
once. Nothing on the path of a call touches the per-column statistics in
Python unless a column needs it (Stats.summary() counts them in C).
"""
import functools
import inspect
import sys

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from . import _clscale, _dask, _mpi, _output
from ._context import check_selector, context
from ._files import ScalerFiles

_DTYPES = [np.float64, np.float32]
# scikit-learn renamed force_all_finite to ensure_all_finite in 1.6
_FINITE_KW = ("ensure_all_finite" if "ensure_all_finite" in inspect.signature(check_array).parameters
              else "force_all_finite")
SCOPES = {"matrix": _clscale.SCOPE_MATRIX, "batch": _clscale.SCOPE_BATCH}


def as_data(X, estimator=None, empty_ok=False):
    """X as the library reads it, copied only when it must be.

    A C-contiguous float32/float64 ndarray of 2 or 3 dimensions passes as
    it is (no copy). float16 and big-endian float32 arrays become native
    float32. Anything else follows scikit-learn's check_array: lists and
    other array-likes become arrays, integer and other dtypes (and
    big-endian float64) become native float64, Fortran-ordered and strided
    arrays are copied to C order, once.
    Sparse, complex and empty input raise. NaN and +-Inf are kept: they are
    missing values. `empty_ok` lets through data without rows (one rank
    of a fit over MPI ranks): 2-D (0, cols) or 3-D (batch, 0, cols)."""
    if _is_half(X) or (isinstance(X, np.ndarray) and X.dtype.kind == "f" and X.dtype.itemsize == 4
                       and not X.dtype.isnative):
        # float16 (kept float16 by keeps_float16) and big-endian float32
        # (FITS) as native float32, converted once
        X = X.astype(np.float32, order="C")
    refuse_sparse(X, estimator)
    X = check_array(X, accept_sparse=False, dtype=_DTYPES, order="C", copy=False,
                    allow_nd=True, estimator=estimator, ensure_min_samples=0 if empty_ok else 1,
                    **{_FINITE_KW: False})
    if X.ndim > 3:
        raise ValueError(f"Expected 2-D (rows x cols) or 3-D (batch x rows x cols) data, "
                         f"got {X.ndim}-D data of shape {X.shape}.")
    no_rows = X.shape[-2] == 0 and X.shape[-1] > 0 and (X.ndim == 2 or X.shape[0] > 0)
    if 0 in X.shape and not (empty_ok and no_rows):
        raise ValueError(f"Found array with an empty dimension (shape {X.shape}).")
    return X


def refuse_sparse(X, estimator=None):
    """A scipy sparse matrix or array is not taken (the devices read dense
    columns): a TypeError, as scikit-learn's check_array raises, that
    names the two ways on. scipy is not imported for it."""
    sparse = sys.modules.get("scipy.sparse")
    if sparse is None or not sparse.issparse(X):
        return
    name = type(estimator).__name__ if estimator is not None else None
    peer = f", or keep it sparse with {_SPARSE_PEERS[name]}" if name in _SPARSE_PEERS else ""
    raise TypeError(f"clscale{'.' + name if name else ''} takes dense arrays only, got a sparse "
                    f"{type(X).__name__}: convert it with X.toarray(){peer}")


# the estimators whose scikit-learn peer takes sparse input
_SPARSE_PEERS = {"StandardScaler": "sklearn.preprocessing.StandardScaler(with_mean=False)",
                 "MaxAbsScaler": "sklearn.preprocessing.MaxAbsScaler",
                 "RobustScaler": "sklearn.preprocessing.RobustScaler(with_centering=False)",
                 "SimpleImputer": "sklearn.impute.SimpleImputer"}


def refuse_sample_weight(estimator, method, fit_params):
    """The keywords a fit method took beyond its own (**fit_params):
    scikit-learn's sample_weight None is taken, weights are refused with a
    TypeError (the class Python gives an unknown keyword) that names the
    peer; any other keyword is Python's own TypeError."""
    for key, value in fit_params.items():
        if key != "sample_weight":
            raise TypeError(f"{type(estimator).__name__}.{method}() got an unexpected keyword argument {key!r}")
        if value is not None:
            name = type(estimator).__name__
            raise TypeError(f"clscale.{name} fits unweighted statistics and does not take sample_weight: leave "
                            f"it out, or use sklearn.preprocessing.{name} for weighted ones")


def _is_half(X):
    """Whether X is a float16 ndarray (either byte order)."""
    return isinstance(X, np.ndarray) and X.dtype.kind == "f" and X.dtype.itemsize == 2


def keeps_float16(method):
    """A transforming method (X first) that gives float16 data back as
    float16, as scikit-learn does: the library scales it as float32
    (as_data converts it), the result is rounded to float16 at the end
    (not when written into a given `out`)."""
    @functools.wraps(method)
    def wrapper(self, X, *args, **kwargs):
        Y = method(self, X, *args, **kwargs)
        if (_is_half(X) and kwargs.get("out") is None and isinstance(Y, np.ndarray)
                and Y.dtype == np.float32):
            Y = Y.astype(np.float16)
        return Y
    return wrapper


def output_for(X, copy, out):
    """The array a transform of X writes: `out` when given (checked first,
    so that a bad `out` leaves everything untouched), X itself when not
    `copy`, else a new array like X."""
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise ValueError(f"out must be a numpy.ndarray, not {type(out).__name__}")
        if out.shape != X.shape or out.dtype != X.dtype:
            raise ValueError(f"out has shape {out.shape} and dtype {out.dtype}; the result has shape "
                             f"{X.shape} and dtype {X.dtype}")
        if not out.flags.c_contiguous:
            raise ValueError("out must be C-contiguous")
        if not out.flags.writeable:
            raise ValueError("out is read-only")
        return out
    if not copy:
        if not X.flags.writeable:
            raise ValueError("X is read-only: transform it with copy=True, or give out=")
        return X
    return _output.empty_like(X)


def moments_to_redo(stats):
    """groups x cols mask of the float32 columns whose moments the library
    could not take in float32 (Stats.summary()'s m2_redo test), or None."""
    if not stats.info["has_moments"] or stats.summary()["m2_redo"] == 0:
        return None
    c = stats.columns()
    with np.errstate(invalid="ignore"):
        return (c["count"] > 0) & (
            (~np.isfinite(c["m2"]) & np.isfinite(c["min"]) & np.isfinite(c["max"]))
            | ((c["max"] > c["min"]) & (c["m2"] < c["count"] * 2.0 ** -100)))


def repair_moments(data, stats, applied=None):
    """`stats` with float64 moments where the device's float32 ones are
    out of float32's range, else `stats` itself.

    A float32 column of values past ~1e19 has a sum of squares past the
    largest float: the library's fit gives it an infinite m2; one whose
    deviations are below ~1e-15 has squares below the smallest normal
    float, and an m2 below count 2^-100 of few bits or 0. Their mean and m2
    are taken again here in float64 from `data` (the values the statistics
    are of, grouped as the statistics are; only those columns are read),
    as scikit-learn takes float32 moments in float64. `applied`: the
    params (shift, multiplier, offset; Stats.params()) that a fused call
    applied to `data`, whose values are taken back through them (the
    library's z-score keeps such columns invertible: infinite m2 leaves
    them as they are, a std of 0 only centres them). A float64 m2 that is
    a float32 value is moved by one double ulp, so that the library's
    host params take it as float64 moments (src/scalers/zscore.c). The
    test is Stats.summary()'s m2_redo (python/clscale/_ext/stats.c)."""
    bad = moments_to_redo(stats)
    if bad is None:
        return stats
    info, c = stats.info, stats.columns()
    data3 = _by_group(data, info["groups"])
    for g in np.nonzero(bad.any(axis=1))[0]:
        cols = np.nonzero(bad[g])[0]
        x = data3[g][:, cols].astype(np.float64)
        if applied is not None:
            s_, m_, o_ = (p[g, cols] for p in applied)
            x = (x - o_) / m_ + s_
        x[~np.isfinite(x)] = np.nan
        mean = np.nanmean(x, axis=0)
        m2 = np.nansum((x - mean) ** 2, axis=0)
        with np.errstate(over="ignore"):
            m2 = np.where(m2.astype(np.float32) == m2, np.nextafter(m2, np.inf), m2)
        c["mean"][g, cols] = mean
        c["m2"][g, cols] = m2
    return _clscale.Stats.from_state(info, c)


def restate(stats, **changes):
    """`stats` with some of its description changed (a new object)."""
    info = dict(stats.info)
    info.update(changes)
    return _clscale.Stats.from_state(info, stats.columns())


class NanTags:
    """scikit-learn's estimator tags of every clscale transformer, for
    every scikit-learn version in one place: NaN is accepted (ignored by
    fit, kept or filled by transform, as scikit-learn's scalers and
    imputers do), and float32 comes back float32. scikit-learn < 1.6 reads
    the `_more_tags` dicts along the MRO; 1.6 and later read the Tags
    object of `__sklearn_tags__` (and 1.7 no longer reads `_more_tags`).
    Placed before BaseEstimator in the bases, so that super() reaches
    scikit-learn's own tags."""

    _preserves_dtype = (np.float64, np.float32)

    def _more_tags(self):
        return {"allow_nan": True, "preserves_dtype": list(self._preserves_dtype)}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        if tags.transformer_tags is not None:
            tags.transformer_tags.preserves_dtype = [np.dtype(t).name for t in self._preserves_dtype]
        return tags


try:  # scikit-learn >= 1.6: the public helper
    from sklearn.utils.validation import validate_data as _sk_validate_data
except ImportError:  # 1.2 - 1.5: the estimator method of those versions
    _sk_validate_data = None


def check_feature_names(estimator, X, n_features, reset):
    """scikit-learn's rules for feature names and their count, for every
    scikit-learn version in one place (with NanTags): fit records a
    DataFrame's column names (feature_names_in_) and n_features_in_,
    transform compares them, with scikit-learn's own warnings and errors.
    Given an empty 2-D probe of X's columns (a DataFrame's first 0 rows, or
    an empty array of n_features columns for arrays of any dimension), so
    that scikit-learn neither converts the data nor reads a 3-D batch's
    rows as its features."""
    probe = X.head(0) if hasattr(X, "columns") and hasattr(X, "head") else np.empty((0, n_features))
    if _sk_validate_data is not None:
        _sk_validate_data(estimator, probe, reset=reset, skip_check_array=True)
    else:
        estimator._check_feature_names(probe, reset=reset)
        estimator._check_n_features(probe, reset=reset)


class Estimator(NanTags, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Base of the clscale transformers: validation and tags."""

    def get_feature_names_out(self, input_features=None):
        """Output feature names: the input's (one output per input)."""
        check_is_fitted(self, "n_features_in_")
        return super().get_feature_names_out(input_features)

    def _validate(self, X, reset, empty_ok=False):
        data = as_data(X, self, empty_ok=empty_ok)
        check_feature_names(self, X, data.shape[-1], reset)
        return data


class _FittedAttribute:
    """A scikit-learn fitted attribute (data_min_, mean_, ...), made from
    the fitted statistics when first read: a fit of seed-A's shape has 1.8
    million columns, and making every attribute at fit time would cost a
    tenth of the fit. Unfitted, reading it raises AttributeError (hasattr
    is False, as scikit-learn expects)."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        if "_fitted" not in obj.__dict__:
            raise AttributeError(f"{type(obj).__name__} is not fitted: no attribute {self.name}")
        attrs = obj._cached("attributes", lambda: obj._attributes(obj._fitted))
        return attrs[self.name]


class Scaler(ScalerFiles, Estimator):
    """Base of the scalers: statistics fitted by the library, kept in a
    Stats, shown as scikit-learn's attributes.

    State after a fit: `_fitted` (the Stats the library fitted, merged by
    partial_fit) and `_cache` (what is derived from it when first needed:
    the attributes, the statistics a transform applies). A transform
    changes no attribute of the estimator (scikit-learn's check_dict_unchanged);
    it may fill `_cache`."""

    _code = None        # the library's scaler (clscale._clscale.MINMAX, ...)
    _registry = {}      # library scaler -> class, for load()
    _fitted_attrs = ()  # the names _attributes returns, made class attributes below
    # scikit-learn's statistics of a column with no finite value are NaN, so
    # its transform writes NaN; the library leaves such a column as it is
    _nan_for_empty = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls._code is not None:
            Scaler._registry[cls._code] = cls
        for name in cls._fitted_attrs:
            attr = _FittedAttribute()
            attr.__set_name__(cls, name)
            setattr(cls, name, attr)

    # ---- what a subclass says ----

    def _range(self):
        """(lo, hi) the statistics are fitted with (min-max only)."""
        return 0.0, 0.0

    def _clip(self):
        return False

    def _check_params(self):
        pass

    def _fusable(self):
        """Whether the library's fused fit_transform computes this
        estimator's transform (up to the columns _refit_count names)."""
        return True

    def _attributes(self, fitted):
        """{name: value} of the scikit-learn attributes (_fitted_attrs)."""
        raise NotImplementedError

    def _apply_stats(self, fitted):
        """The statistics whose library map is scikit-learn's (`fitted`
        itself when they agree on every column)."""
        return fitted

    def _refit_count(self, summary):
        """How many columns a fused fit_transform maps otherwise than
        scikit-learn (these are redone)."""
        return 0

    def _file_stats(self):
        """The statistics save() writes (raises when the file's pipeline
        cannot express this estimator)."""
        return self._fitted

    @classmethod
    def _params_from_info(cls, info):
        """Constructor parameters recorded in a statistics file."""
        return {}

    # ---- state ----

    def _cached(self, key, make):
        cache = self.__dict__.setdefault("_cache", {})
        if key not in cache:
            cache[key] = make()
        return cache[key]

    def _transform_stats(self):
        return self._cached("stats", lambda: self._apply_stats(self._fitted))

    def _empty_columns(self):
        """groups x cols mask of columns with no finite value, or None."""
        def make():
            if not self._nan_for_empty or self._fitted.summary()["empty"] == 0:
                return None
            # the counts alone: a million-column fit's other fields are 48 MB
            return self._fitted.columns("count")["count"] == 0
        return self._cached("empty", make)

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_cache", None)  # derived: made again when needed
        return state

    # ---- fitting ----

    def _scope_of(self, X):
        return scope_of(self.scope, X)

    def _reset(self):
        for a in ("_fitted", "_cache", "n_features_in_", "feature_names_in_"):
            if a in self.__dict__:
                delattr(self, a)

    def _install(self, fitted):
        self._fitted = fitted
        self._cache = {}

    def fit(self, X, y=None, comm=None):
        """Fits the statistics on X (NaN and +-Inf ignored) on the devices.
        comm= (an mpi4py communicator): a collective fit over the ranks'
        X together (docs/guide/mpi.md); a rank may pass 0 rows. A dask
        array is fitted chunk by chunk (docs/guide/python.md)."""
        self._reset()
        return self.partial_fit(X, y, comm=comm)

    def partial_fit(self, X, y=None, comm=None):
        """Adds X's rows to the statistics (Chan's merge, as if fitted on all
        the rows seen). 3-D data with scope="matrix" needs the same number of
        matrices every time. comm=: every rank's X together, as fit."""
        first = "_fitted" not in self.__dict__
        if comm is None and _dask.is_dask(X):
            new = _dask.fit_stats(self, X, first)
        elif comm is None:
            new = self._fit_local(X, first)
        else:
            new = self._fit_comm(X, first, comm)
        if not first:
            old = self._fitted.info
            same = {k: old[k] for k in ("lo", "hi", "clip", "dtype")}
            lo, hi = self._range()
            merged = self._fitted.merged(restate(new, **same))
            new = restate(merged, lo=lo, hi=hi, clip=self._clip())
        self._install(new)
        return self

    def _check_params_all(self):
        self._check_params()
        check_selector(self.devices)

    def _fit_local(self, X, first, empty_ok=False):
        """This process's statistics of X (not yet merged with earlier
        ones); with `empty_ok`, None for X without rows."""
        self._check_params_all()
        X = self._validate(X, reset=first, empty_ok=empty_ok)
        scope = self._scope_of(X)
        if X.size == 0:
            return None, self._info_without_rows(X, scope)
        lo, hi = self._range()
        with context(self.devices) as ctx:
            new = ctx.fit(X, scaler=self._code, scope=scope, lo=lo, hi=hi, clip=self._clip())
        new = repair_moments(X, new)
        self._check_mergeable(new.info, first)
        return (new, new.info) if empty_ok else new

    def _check_mergeable(self, got, first):
        if first:
            return
        old = self._fitted.info
        if (got["scope"], got["groups"]) != (old["scope"], old["groups"]):
            raise ValueError(
                f"partial_fit: X gives {got['groups']} statistics group(s) ({_scope_name(got)}) "
                f"but {old['groups']} were fitted ({_scope_name(old)}); 3-D data fitted per matrix "
                f"needs the same number of matrices every time")

    def _info_without_rows(self, X, scope):
        """The description a fit of X would give, for X without rows."""
        if scope == _clscale.SCOPE_MATRIX:
            raise ValueError(f"X has shape {X.shape}: with scope='matrix' every rank fits whole "
                             f"matrices and needs at least one row of each")
        lo, hi = self._range()
        return {"scaler": self._code, "scope": scope, "lo": lo, "hi": hi, "clip": self._clip(),
                "dtype": X.dtype.name, "groups": 1, "cols": X.shape[-1], "rows": 0,
                "has_moments": self._code == _clscale.ZSCORE}

    def _fit_comm(self, X, first, comm):
        """The statistics of every rank's X (collective over comm)."""
        error, new, info = None, None, None
        try:
            new, info = self._fit_local(X, first, empty_ok=True)
        except Exception as e:  # raised on every rank by the agreement
            error = e
        return _mpi.combine(comm, error, new, info, new is not None)

    @keeps_float16
    def fit_transform(self, X, y=None, out=None, comm=None):
        """fit(X) then transform(X), in one pass over X where the library
        can (stats and scaling fused on the devices). comm=: fit over every
        rank's X (collective), then transform this rank's X."""
        if comm is not None or _dask.is_dask(X):
            if out is not None and _dask.is_dask(X):
                raise ValueError("out= cannot receive a dask array's transform")
            self.fit(X, comm=comm)
            if _dask.is_dask(X):
                return self.transform(X)
            X = self._validate(X, reset=False, empty_ok=True)
            if X.size == 0:
                return output_for(X, self.copy, out)
            return self._transform_checked(X, self.copy, out, inverse=False)
        if not self._fusable():
            X = self.fit(X)._validate(X, reset=False)
            return self._transform_checked(X, self.copy, out, inverse=False)
        self._reset()
        self._check_params()
        check_selector(self.devices)
        X = self._validate(X, reset=True)
        Y = output_for(X, self.copy, out)
        lo, hi = self._range()
        with context(self.devices) as ctx:
            applied = ctx.fit_transform(X, Y, scaler=self._code, scope=self._scope_of(X),
                                        lo=lo, hi=hi, clip=self._clip())
        # float32 moments out of range: taken again from X, or from Y
        # through the params applied where Y is X
        if Y is not X:
            fitted = repair_moments(X, applied)
        elif moments_to_redo(applied) is not None:
            fitted = repair_moments(Y, applied, applied=applied.params())
        else:
            fitted = applied
        self._install(fitted)
        if fitted is not applied or self._refit_count(fitted.summary()):
            self._refit_columns(X, Y, applied)
        self._nan_empty(Y)
        return Y

    def _refit_columns(self, X, Y, fitted, x_intact=True):
        """After a fused fit_transform, redoes the columns where
        scikit-learn's map differs from the library's (near-constant
        columns): a second transform when X is intact (and is the data
        that was scaled: not so after a fused imputation, x_intact=False),
        else the composed affine map on those columns alone."""
        if Y is not X and x_intact:
            self._run(X, Y, inverse=False)
            return
        s1, m1, o1 = fitted.params()
        s2, m2, o2 = self._transform_stats().params()
        # constant columns (m1 == 0) hold shift1 everywhere: they keep their
        # output when the new map sends shift1 to the same value
        same_const = (m1 == 0) & ((s1 - s2) * m2 + o2 == o1)
        redo = ((s1 != s2) | (m1 != m2) | (o1 != o2)) & ~same_const
        if not redo.any():
            return
        lo, hi = self._range()
        Y3 = _by_group(Y, redo.shape[0])
        for g, cols in ((g, np.nonzero(redo[g])[0]) for g in range(redo.shape[0])):
            if cols.size == 0:
                continue
            y = Y3[g][:, cols].astype(np.float64)
            a1 = m1[g, cols]
            x = np.where(a1 != 0, (y - o1[g, cols]) / np.where(a1 != 0, a1, 1.0) + s1[g, cols], s1[g, cols])
            z = (x - s2[g, cols]) * m2[g, cols] + o2[g, cols]
            if self._clip():
                z = np.clip(z, lo, hi)
            Y3[g][:, cols] = z

    # ---- transforming ----

    def _run(self, X, Y, inverse):
        s = self._transform_stats()
        info = s.info
        if info["scope"] == _clscale.SCOPE_MATRIX:
            batch = X.shape[0] if X.ndim == 3 else 1
            if batch != info["groups"]:
                raise ValueError(
                    f"the statistics were fitted per matrix of {info['groups']} matrices; X has "
                    f"{batch} (fit with scope='batch' to share the statistics across matrices)")
        with context(self.devices) as ctx:
            ctx.transform(X, Y, s, scaler=self._code, scope=info["scope"], lo=info["lo"],
                          hi=info["hi"], clip=self._clip() and not inverse, inverse=inverse)
        self._nan_empty(Y)

    def _nan_empty(self, Y):
        """NaN in the columns with no finite value, as scikit-learn writes
        (its statistics there are NaN); the library leaves their +-Inf."""
        nan_columns(Y, self._empty_columns())

    def _transform_checked(self, X, copy, out, inverse):
        Y = output_for(X, copy, out)
        self._run(X, Y, inverse=inverse)
        return Y

    @keeps_float16
    def transform(self, X, copy=None, out=None):
        """Scales X with the fitted statistics on the devices. NaN and +-Inf
        pass through. copy=False writes into X (a C-contiguous float array;
        other input is converted first, so the result is a new array), out=
        writes into `out`."""
        check_is_fitted(self)
        if _dask.is_dask(X):
            return _dask.transform(self, X, inverse=False)
        X = self._validate(X, reset=False)
        return self._transform_checked(X, self.copy if copy is None else copy, out, inverse=False)

    @keeps_float16
    def inverse_transform(self, X, copy=None, out=None):
        """Undoes transform (no clipping)."""
        check_is_fitted(self)
        if _dask.is_dask(X):
            return _dask.transform(self, X, inverse=True)
        X = self._validate(X, reset=False)
        return self._transform_checked(X, self.copy if copy is None else copy, out, inverse=True)

    # ---- files ----

    def save(self, path):
        """Writes the fitted statistics and the pipeline as the statistics
        file of `clscale normalize --stats-out` (read by `clscale apply` and
        clscale.load)."""
        check_is_fitted(self)
        self._file_stats().save(path)

    @classmethod
    def _from_stats(cls, stats, devices=None):
        info = stats.info
        params = cls._params_from_info(info)
        params["scope"] = "batch" if info["scope"] == _clscale.SCOPE_BATCH else "matrix"
        est = cls(devices=devices, **params)
        est.n_features_in_ = info["cols"]
        est._install(stats)
        return est


def _by_group(Y, groups):
    """A view of Y as groups x rows x cols (one group: all rows)."""
    return Y.reshape(groups, -1, Y.shape[-1])


def scope_of(scope, X):
    """Statistics groups for X: per matrix of 3-D data with
    scope="matrix"; otherwise (2-D data, scope="batch") one group."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be 'matrix' or 'batch', got {scope!r}")
    return SCOPES[scope] if X.ndim == 3 else _clscale.SCOPE_BATCH


def nan_columns(Y, empty):
    """NaN in Y's columns that `empty` (groups x cols, or None) marks."""
    if empty is None:
        return
    Y3 = _by_group(Y, empty.shape[0])
    for g in range(empty.shape[0]):
        if empty[g].any():
            Y3[g][:, empty[g]] = np.nan


def _scope_name(info):
    return "per matrix" if info["scope"] == _clscale.SCOPE_MATRIX else "one group"


def group_shape(a, info):
    """A (groups x cols) array as an attribute: (cols,) for one group of
    scope batch (2-D data), (groups, cols) per matrix."""
    return a[0] if info["scope"] == _clscale.SCOPE_BATCH else a


def load(path, devices=None):
    """The fitted estimator a statistics file holds (from `save` or
    `clscale normalize --stats-out`): a MinMaxScaler, StandardScaler or
    DecimalScaler with the file's range, clip and scope."""
    stats = _clscale.load_stats(path)
    code = stats.info["scaler"]
    cls = Scaler._registry.get(code)
    if cls is None and code == _clscale.NONE:
        raise ValueError(f"{path}: the statistics were fitted without a scaler; no estimator applies them")
    if cls is None:
        name = {v: k for k, v in _clscale.SCALERS.items()}.get(code, code)
        raise ValueError(f"{path}: statistics of the {name} scaler: clscale.load makes a MinMaxScaler, "
                         f"StandardScaler or DecimalScaler; apply these with the tool (clscale apply --stats)")
    return cls._from_stats(stats, devices=devices)
