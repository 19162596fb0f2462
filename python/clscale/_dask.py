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
(_sums): one chunk in memory at a time. SigmaClip's clipping (clean())
replays the cleaning's counting and moments passes the same way, then
clips each chunk lazily.

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


def _replayed(block, run, sums, stop):
    """run(chunk, count_hook, stats_hook) on the computed chunk `block`,
    its hooks' first `stop` calls given the sums known (`sums`), its call
    `stop` stopped (the hook raises _Pass). Returns (result, None) when the
    call ran to its end, else (None, [this chunk's counts or column bytes
    of call `stop`, or None])."""
    if not isinstance(block, np.ndarray):  # a delayed chunk, computed now
        import dask
        (block,) = dask.compute(block)
    # dask.compute of a computed chunk (the transform's map_blocks) would
    # hold it in a reference cycle until the next garbage collection: as
    # many chunks alive at once as blocks computed until then
    chunk = np.ascontiguousarray(block)
    calls, got = [0], []

    def hook(error, buf):
        if error is not None:
            raise _clscale.ClscaleError(error)
        i = calls[0]
        calls[0] += 1
        if i < stop:
            if buf is not None:
                buf[...] = sums[i]
            return
        got.append(None if buf is None else buf.copy())
        raise _Pass

    try:
        return run(chunk, hook, hook), None
    except _Pass:
        return None, got


def _sums(blocks, run):
    """The sums over the chunks of every call of the hooks of
    run(chunk, count_hook, stats_hook) (a library call with a combine
    hook), and the result of a call that ran to its end with them.

    A chunk's counts (or moments) at call k depend only on the sums of
    calls 0..k-1, so round k runs each chunk's call again, gives it the
    sums already known and stops it at call k with its own counts, which
    are summed over the chunks (uint64 counts added; the bytes of column
    statistics merged by _clscale.merge_columns, the MPI operation) into
    call k's. Once a call runs to its end, every call's sums are known and
    its result is that of all the rows. One chunk is in memory at a time:
    rounds x chunks calls instead of the ranks' one each."""
    sums = []
    while True:
        total = None
        for b in blocks:
            res, got = _replayed(b, run, sums, len(sums))
            if got is None:  # every call summed: the call ran to its end
                return sums, res
            (mine,) = got
            if mine is None or total is None:
                total = mine
            elif mine.dtype == np.uint64:
                total += mine
            else:
                _clscale.merge_columns(mine, total)
        sums.append(total)


def quantiles(devices, X, qs, scope):
    """Exact quantiles `qs` (fractions) of the prepared dask array X (whole
    rows per chunk; with scope matrix every matrix in each chunk), as
    _clscale.quantiles of the whole array gives them: groups x len(qs) x
    cols float64 (qs None: _clscale.medians', groups x cols).

    The library's counting passes over the chunks, as over MPI ranks: after
    each pass the combine hook must hold every chunk's counts summed
    (_sums: the passes replayed, one chunk in memory at a time; 4 passes
    per wave of columns in float32, 8 in float64)."""
    blocks = _chunks_with_rows(X)
    if not blocks:
        raise ValueError(f"Found array with 0 sample(s) (shape {X.shape}) while a minimum of 1 is required.")

    def run(chunk, count, _):
        with context(devices) as ctx:
            if qs is None:
                return _clscale.medians(ctx, chunk, scope=scope, combine=count)
            return _clscale.quantiles(ctx, chunk, qs, scope=scope, combine=count)[0]

    return _sums(blocks, run)[1]


def clean(devices, X, opts, dtype):
    """The library's cleaning (_clscale.clean with `opts`: SigmaClip's) of
    the prepared dask array X as one call over all its rows: the sums of
    its counting and moments passes over the chunks found now (_sums),
    then a lazy dask array whose every chunk is cleaned by its call with
    those sums, as a rank among ranks (a chunk and its output in memory at
    a time). Returns (that array, the call's
    (missing, clipped, fill, iterations) over all the rows)."""
    blocks = _chunks_with_rows(X)
    if not blocks:
        raise ValueError(f"Found array with 0 sample(s) (shape {X.shape}) while a minimum of 1 is required.")

    def run(chunk, count, stats, out=None):
        if out is None:  # the library writes an output when it combines
            out = np.empty_like(chunk)
        with context(devices) as ctx:
            return _clscale.clean(ctx, chunk, out, **opts, combine=count, combine_stats=stats)

    sums, res = _sums(blocks, run)

    def block(b):
        if b.size == 0:
            return np.array(b)
        b = np.ascontiguousarray(b)
        y = np.empty_like(b)
        _replayed(b, lambda c, h, s: run(c, h, s, y), sums, len(sums))
        return y

    return X.map_blocks(block, dtype=dtype, meta=np.empty((0,) * X.ndim, dtype)), res[:4]


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
