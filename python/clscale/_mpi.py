"""Fits across the ranks of an mpi4py communicator (`fit(X, comm=comm)`).

Each rank fits its own rows on its own devices; the ranks then agree on
their outcomes (one small allgather: every rank's error, shape and
pipeline), so that a failure on one rank raises on every rank, naming it,
and no rank is left waiting in a collective; then, for statistics over all
rows (2-D data, or 3-D with scope="batch"), one Allreduce of the
groups x cols table of the library's column statistics (80 bytes a column)
with an operation that merges by Chan's formulas in the library
(_clscale.merge_columns, the same operation as libclscale_mpi's). Every
rank ends with the same bits: the operation orders its two operands by
their bytes, so a (+) b and b (+) a agree.

3-D data with scope="matrix" is fitted per matrix: each rank owns whole
matrices and fits them alone; only the outcomes are agreed (as
cls_mpi_fit in CLS_SCOPE_MATRIX).

mpi4py is imported only when a communicator is given.
"""
import numpy as np

from . import _clscale

# cls_column_stats (include/clscale.h): two uint64_t, eight doubles, native
# byte order, no padding; the last three (exact quantiles) do not merge and
# travel as NaN
COLUMN = np.dtype([("count", "=u8"), ("missing", "=u8"), ("min", "=f8"), ("max", "=f8"),
                   ("mean", "=f8"), ("m2", "=f8"), ("absmax", "=f8"), ("median", "=f8"),
                   ("q_lo", "=f8"), ("q_hi", "=f8")])
assert COLUMN.itemsize == 80
_MERGED = ("count", "missing", "min", "max", "mean", "m2", "absmax")

_mpi_objects = {}  # "type" -> the committed MPI datatype, "op" -> the merge


def table_of(stats):
    """The statistics' columns as one array of COLUMN, groups x cols flat."""
    info, c = stats.info, stats.columns()
    t = np.empty(info["groups"] * info["cols"], COLUMN)
    for k in COLUMN.names:
        t[k] = c[k].ravel() if k in c else np.nan
    return t


def empty_table(n):
    """n empty columns, as cls_stats_create makes them without columns."""
    t = np.zeros(n, COLUMN)
    for k in COLUMN.names[2:]:
        t[k] = np.nan
    return t


def stats_of(info, table):
    """Stats from a description and a COLUMN table (checked by the library)."""
    g, n = info["groups"], info["cols"]
    return _clscale.Stats.from_state(info, {k: np.ascontiguousarray(table[k]).reshape(g, n)
                                            for k in _MERGED})


def _merge(inbuf, inoutbuf, datatype):
    _clscale.merge_columns(inbuf, inoutbuf)


def _objects(MPI):
    if not _mpi_objects:
        t = MPI.Datatype.Create_struct([2, 8], [0, 16], [MPI.UINT64_T, MPI.DOUBLE])
        col = t.Create_resized(0, COLUMN.itemsize)
        t.Free()
        col.Commit()
        _mpi_objects["type"] = col
        _mpi_objects["op"] = MPI.Op.Create(_merge, commute=True)
    return _mpi_objects["type"], _mpi_objects["op"]


def allreduce_table(comm, table):
    """table (a COLUMN array, the same length on every rank) merged over
    every rank, in place."""
    from mpi4py import MPI
    col, op = _objects(MPI)
    if table.size:
        comm.Allreduce(MPI.IN_PLACE, [table, table.size, col], op)
    return table


class RankError(Exception):
    """What a rank's local part raised, kept until every rank has agreed."""


def _key(info):
    """What every rank must agree on (has_moments follows the scaler)."""
    return (info["scaler"], info["scope"], info["lo"], info["hi"], bool(info["clip"]), info["dtype"],
            info["cols"])


def _describe(key):
    names = {v: k for k, v in _clscale.SCALERS.items()}  # the library's table
    scaler, scope, lo, hi, clip, dtype, cols = key
    return (f"{names.get(scaler, scaler)}, scope {'batch' if scope == _clscale.SCOPE_BATCH else 'matrix'}, "
            f"range ({lo:g}, {hi:g}), clip {clip}, {dtype}, {cols} columns")


def agree(comm, error, local):
    """Collective: every rank's outcome. `error` is the exception this rank
    raised (or None); `local` its (info, has_data) otherwise. Raises on
    every rank when any rank failed (the lowest failing rank's message,
    "rank R of N: ...", ValueError when that rank's error was one, else
    ClscaleError) or when the ranks' pipelines, dtypes or columns differ.
    Returns every rank's `local`."""
    size = comm.Get_size()
    mine = (None if error is None else (isinstance(error, ValueError), str(error)), local)
    everyone = comm.allgather(mine)
    for r, (err, _) in enumerate(everyone):
        if err is not None:
            is_value, msg = err
            exc = ValueError if is_value else _clscale.ClscaleError
            raise exc(f"rank {r} of {size}: {msg}") from error
    keys = [(r, _key(info)) for r, (_, (info, _)) in enumerate(everyone)]
    r0, k0 = keys[0]
    for r, k in keys[1:]:
        if k != k0:
            raise ValueError(f"rank {r} of {size} fits {_describe(k)} but rank {r0} fits {_describe(k0)}: "
                             f"every rank must fit the same estimator parameters, dtype and columns")
    return [loc for _, loc in everyone]


def empty_info(X, scope, what):
    """The statistics' description of a rank that holds no rows of X (a
    fit over the batch: the other ranks' rows give the statistics); with
    scope matrix every rank needs whole matrices, so that is an error
    (`what`: "imputes", "fits")."""
    if scope == _clscale.SCOPE_MATRIX:
        raise ValueError(f"X has shape {X.shape}: with scope='matrix' every rank {what} whole "
                         f"matrices and needs at least one row of each")
    return {"scaler": _clscale.NONE, "scope": scope, "lo": 0.0, "hi": 0.0, "clip": False,
            "dtype": X.dtype.name, "groups": 1, "cols": X.shape[-1], "rows": 0, "has_moments": True}


def combine(comm, error, local_stats, info, has_data):
    """The collective part of a fit over `comm`: the agreement, then (scope
    batch) the allreduce. `local_stats` is this rank's fit (None without
    rows), `info` its description (rows 0 without rows). Returns the Stats
    every rank holds from now on: all ranks' rows (scope batch), this
    rank's matrices (scope matrix)."""
    everyone = agree(comm, error, (info, has_data))
    size = comm.Get_size()
    if not any(h for _, h in everyone):
        raise ValueError(f"none of the {size} ranks holds any row to fit")
    if info["scope"] == _clscale.SCOPE_MATRIX:
        return local_stats
    table = table_of(local_stats) if has_data else empty_table(info["groups"] * info["cols"])
    allreduce_table(comm, table)
    first = next(i for i, h in everyone if h)  # the description of a rank that fitted
    total = dict(first)
    total["rows"] = sum(i["rows"] for i, _ in everyone)
    return stats_of(total, table)


def count_combiner(comm):
    """The hook of _clscale.quantiles(combine=) over `comm`: after each
    counting pass, every rank's outcome (one allgather of a short message
    or None: a failure raises on every rank, naming the lowest failing
    rank), then the pass's uint64 counts summed in place (one Allreduce),
    so every rank narrows to the same bucket and ends with the same exact
    quantiles. Also records the seconds and bytes of those collectives."""
    from mpi4py import MPI
    size = comm.Get_size()

    def combine(error, counts):
        t = MPI.Wtime()
        errors = comm.allgather(error)
        for r, e in enumerate(errors):
            if e is not None:
                raise _clscale.ClscaleError(f"rank {r} of {size}: {e}")
        if counts is not None and counts.size:
            comm.Allreduce(MPI.IN_PLACE, counts, op=MPI.SUM)
            combine.bytes += counts.nbytes
        combine.seconds += MPI.Wtime() - t
        combine.passes += 1

    combine.bytes, combine.seconds, combine.passes = 0, 0.0, 0
    return combine



def stats_combiner(comm):
    """The cleaning's second hook (_clscale.clean(combine_stats=)) over
    `comm`: after each moments pass, every rank's outcome (as
    count_combiner's), then the pass's column statistics (the bytes of
    COLUMN entries) merged over every rank in place by the same Allreduce
    as a fit's (allreduce_table): every rank holds the same bits."""
    size = comm.Get_size()

    def combine(error, cols):
        errors = comm.allgather(error)
        for r, e in enumerate(errors):
            if e is not None:
                raise _clscale.ClscaleError(f"rank {r} of {size}: {e}")
        if cols is not None and cols.size:
            allreduce_table(comm, cols.view(COLUMN))

    return combine
