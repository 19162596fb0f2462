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

Exact quantiles (RobustScaler, SimpleImputer's median) take the library's
counting passes over the chunks as cls_quantiles takes them over MPI
ranks: the chunks stand where the ranks stand, and the combine hook sums
their counts after each pass. The ranks run at once; chunks held all at
once would hold the whole array, so the passes are replayed instead
(quantiles()): one chunk in memory at a time.

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


class _Pass(Exception):
    """Ends a replayed call once its chunk's counts of the pass wanted are in."""


def _chunks_with_rows(X):
    """The delayed chunks of X (whole rows, prepared) that hold values."""
    blocks = X.to_delayed().ravel()
    sizes = [int(np.prod(s)) for s in _shapes(X)]
    return [b for b, n in zip(blocks, sizes) if n]


def _shapes(X):
    import itertools
    return [tuple(c) for c in itertools.product(*X.chunks)]


def quantiles(devices, X, qs, scope):
    """Exact quantiles `qs` (fractions) of the prepared dask array X (whole
    rows per chunk; with scope matrix every matrix in each chunk), as
    _clscale.quantiles of the whole array gives them: groups x len(qs) x
    cols float64 (qs None: _clscale.medians', groups x cols).

    The library's counting passes over the chunks, as over MPI ranks: after
    each pass the combine hook must hold every chunk's counts summed. A
    chunk's counts of pass k depend only on the sums of passes 0..k-1, so
    round k runs each chunk's call again, gives it the sums already known
    for passes 0..k-1 and stops it at pass k (the hook raises _Pass) with
    its own counts, which are summed over the chunks into pass k's. Once
    a call runs to its end, every pass's sums are known and its result is
    the quantiles of all the rows (the library derives them from the
    summed counts alone). One chunk is in memory at a time, plus the
    counts: rounds x chunks calls instead of the ranks' one each (4
    passes per wave of columns in float32, 8 in float64)."""
    import dask

    blocks = _chunks_with_rows(X)
    if not blocks:
        raise ValueError(f"Found array with 0 sample(s) (shape {X.shape}) while a minimum of 1 is required.")
    sums = []  # every pass's counts summed over the chunks, in the calls' order

    def run(block, stop):
        (chunk,) = dask.compute(block)
        chunk = np.ascontiguousarray(chunk)

        def combine(error, counts):
            if error is not None:
                raise _clscale.ClscaleError(error)
            i = combine.calls
            combine.calls += 1
            if i < stop:
                if counts is not None:
                    counts[...] = sums[i]
                return
            combine.counts = None if counts is None else counts.copy()
            raise _Pass

        combine.calls, combine.counts = 0, None
        with context(devices) as ctx:
            try:
                if qs is None:
                    q = _clscale.medians(ctx, chunk, scope=scope, combine=combine)
                else:
                    q, _ = _clscale.quantiles(ctx, chunk, qs, scope=scope, combine=combine)
            except _Pass:
                return None, combine.counts
        return q, None

    while True:
        k = len(sums)
        total = None
        for i, b in enumerate(blocks):
            q, counts = run(b, k)
            if q is not None:  # every pass summed: the call ran to its end
                return q
            if counts is None:
                total = None
            elif total is None:
                total = counts
            else:
                total += counts
        sums.append(total)


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
