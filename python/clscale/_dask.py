"""Dask arrays: fit as a tree reduction of per-chunk statistics merged by
the library, transform chunk by chunk (map_blocks), lazily.

fit(X) fits every chunk on the devices (as the in-memory fit does, with
the chunk's rows) and merges the chunks' statistics pairwise, in the order
of the chunks, with Stats.merged (cls_stats_merge: Chan's formulas), as one
dask graph computed with the scheduler the caller configured. Chunks are
first joined along the columns (a chunk must hold whole rows), and for 3-D
data with scope="matrix" along the matrices too (a chunk holds rows of
every matrix); chunks without rows are left out. transform and
inverse_transform return dask arrays over the same chunks.

dask is imported only when a dask array is given.
"""
import numpy as np

from . import _clscale
from ._context import context


def is_dask(X):
    """Whether X is a dask array (without importing dask)."""
    t = type(X)
    return t.__name__ == "Array" and t.__module__.split(".")[0] == "dask"


def _prepare(est, X, scope):
    """X with whole rows per chunk (and every matrix, scope matrix), in a
    float dtype the library reads."""
    if X.ndim not in (2, 3):
        raise ValueError(f"Expected 2-D (rows x cols) or 3-D (batch x rows x cols) data, "
                         f"got {X.ndim}-D data of shape {X.shape}.")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    axes = {X.ndim - 1: -1}
    if X.ndim == 3 and scope == _clscale.SCOPE_MATRIX:
        axes[0] = -1
    return X.rechunk(axes)


def _scope(est, X):
    return est._scope_of(X) if X.ndim == 3 else _clscale.SCOPE_BATCH


def _block_stats(block, code, scope, lo, hi, clip, devices):
    if block.size == 0:
        return None
    block = np.ascontiguousarray(block)
    with context(devices) as ctx:
        stats = ctx.fit(block, scaler=code, scope=scope, lo=lo, hi=hi, clip=clip)
    from ._base import repair_moments  # _base imports this module
    return repair_moments(block, stats)


def _merge(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a.merged(b)


def fit_stats(est, X, first):
    """The statistics of the dask array X (computed now), not yet merged
    with an earlier fit's."""
    est._check_params_all()
    lo, hi = est._range()
    stats = _fit_tree(est, X, first, est._code, lo, hi, est._clip())
    est._check_mergeable(stats.info, first)
    return stats


def fit_moments(est, X, first):
    """The library's fit without a scaler (counts, missing, min, max,
    absmax) of the dask array X, computed now: MaxAbsScaler's statistics."""
    return _fit_tree(est, X, first, _clscale.NONE, 0.0, 0.0, False)


def _fit_tree(est, X, first, code, lo, hi, clip):
    """Every chunk fitted with scaler `code`, the chunks' statistics
    merged as a binary tree in the chunks' order (one dask graph)."""
    import dask

    scope = _scope(est, X)
    X = _prepare(est, X, scope)
    cols = X.shape[-1]
    if first:
        est.n_features_in_ = cols
    elif cols != est.n_features_in_:
        raise ValueError(f"X has {cols} features, but {type(est).__name__} is expecting "
                         f"{est.n_features_in_} features as input.")
    fit = dask.delayed(_block_stats, pure=True)
    merge = dask.delayed(_merge, pure=True)
    level = [fit(b, code, scope, lo, hi, clip, est.devices) for b in X.to_delayed().ravel()]
    while len(level) > 1:  # a binary tree, neighbours merged in the chunks' order
        level = [merge(level[i], level[i + 1]) if i + 1 < len(level) else level[i]
                 for i in range(0, len(level), 2)]
    (stats,) = dask.compute(level[0])
    if stats is None:
        raise ValueError(f"Found array with 0 sample(s) (shape {X.shape}) while a minimum of 1 is required.")
    return stats


def transform(est, X, inverse, scope=None):
    """est's transform (or inverse) of the dask array X, lazily; `scope`:
    the fitted statistics' (default: those of est._fitted)."""
    if scope is None:
        scope = est._fitted.info["scope"]
    X = _prepare(est, X, scope)
    if X.shape[-1] != est.n_features_in_:
        raise ValueError(f"X has {X.shape[-1]} features, but {type(est).__name__} is expecting "
                         f"{est.n_features_in_} features as input.")
    fn = est.inverse_transform if inverse else est.transform

    def block(b):
        if b.size == 0:
            return np.empty(b.shape, X.dtype)
        return fn(np.ascontiguousarray(b), copy=True)

    return X.map_blocks(block, dtype=X.dtype, meta=np.empty((0,) * X.ndim, X.dtype))
