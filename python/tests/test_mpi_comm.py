"""fit(X, comm=...) over MPI ranks (mpi4py) equals one process's fit of the
whole array: every rank holds the same bits, within 1e-12 relative of the
single-process statistics in float64, for uneven splits and ranks with no
rows; a failure on one rank raises on every rank, naming it.

Collective: run under mpirun (the meson tests python-mpi-n1..n3, suite
mpi: `mpirun -n N python3 -m pytest test_mpi_comm.py` with
CLSCALE_TEST_MPI=1); every rank runs every test in the same order.
Skipped in the plain pytest run."""
import os

import numpy as np
import pytest

import clscale
from conftest import assert_close, make_data

pytestmark = [pytest.mark.fp64,
              pytest.mark.skipif(os.environ.get("CLSCALE_TEST_MPI") != "1",
                                 reason="collective: runs under mpirun (meson test --suite mpi)")]

if os.environ.get("CLSCALE_TEST_MPI") == "1":
    from mpi4py import MPI
    COMM = MPI.COMM_WORLD
    RANK, SIZE = COMM.Get_rank(), COMM.Get_size()

SCALERS = [clscale.MinMaxScaler, clscale.StandardScaler, clscale.DecimalScaler]


def _cuts(rows, how):
    """Row boundaries of SIZE parts: "even", "uneven" (rank 0 has no rows
    when there are several ranks, the rest uneven), "last-empty"."""
    if how == "even":
        return np.linspace(0, rows, SIZE + 1).astype(int)
    if how == "uneven":
        w = np.arange(SIZE, dtype=float) ** 2  # 0, 1, 4, 9: rank 0 empty
        w = w if w.sum() else np.ones(1)
        return np.concatenate([[0], np.round(np.cumsum(w) / w.sum() * rows)]).astype(int)
    c = np.linspace(0, rows, SIZE).astype(int)  # SIZE - 1 parts, the last rank none
    return np.concatenate([c, [rows]]) if SIZE > 1 else np.array([0, rows])


def _mine(x, how, axis=0):
    c = _cuts(x.shape[axis], how)
    return np.take(x, np.arange(c[RANK], c[RANK + 1]), axis=axis)


def _same_everywhere(stats):
    """Every rank's statistics have the same bits."""
    mine = b"".join(v.tobytes() for v in stats.columns().values())
    assert all(b == mine for b in COMM.allgather(mine)), "ranks hold different statistics"


def _assert_stats_equal(got, want, rtol=1e-12):
    assert got.info == want.info, f"{got.info} != {want.info}"
    a, b = got.columns(), want.columns()
    for k in ("count", "missing", "min", "max", "absmax"):  # exact in any order
        assert np.array_equal(a[k], b[k], equal_nan=True), k
    for k in ("mean", "m2"):
        assert_close(a[k], b[k], rtol, k)


@pytest.mark.parametrize("how", ["even", "uneven", "last-empty"])
@pytest.mark.parametrize("cls", SCALERS, ids=lambda c: c.__name__)
def test_fit_equals_one_process(cls, how):
    x = make_data((203, 9), seed=71, offset=1e4, spread=3.0, all_nan_col=True)
    local = _mine(x, how)
    est = cls().fit(local, comm=COMM)
    whole = cls().fit(x)
    _assert_stats_equal(est._fitted, whole._fitted)
    _same_everywhere(est._fitted)
    if local.shape[0]:
        assert_close(est.transform(local), whole.transform(x)[_cuts(203, how)[RANK]:][:local.shape[0]],
                     1e-12, "transform")


@pytest.mark.parametrize("cls", SCALERS, ids=lambda c: c.__name__)
def test_float32_and_fit_transform(cls):
    x = make_data((150, 5), np.float32, seed=72, offset=100.0)
    local = _mine(x, "uneven")
    est = cls()
    y = est.fit_transform(local, comm=COMM)
    whole = cls().fit(x)
    # float32 on the devices: moments of a slice are accumulated in float32
    # arithmetic there, so one process and the ranks agree to ~1e-7
    _assert_stats_equal(est._fitted, whole._fitted, rtol=1e-5)
    assert y.shape == local.shape and y.dtype == np.float32
    if local.shape[0]:
        c = _cuts(150, "uneven")
        assert_close(y, whole.transform(x)[c[RANK]:c[RANK + 1]], 1e-5, "fit_transform")


def test_partial_fit_over_ranks_and_chunks():
    x = make_data((300, 4), seed=73, offset=-50.0)
    est = clscale.StandardScaler()
    for part in np.array_split(x, [37, 38, 200]):
        est.partial_fit(_mine(part, "uneven"), comm=COMM)
    whole = clscale.StandardScaler().fit(x)
    _assert_stats_equal(est._fitted, whole._fitted)
    assert_close(est.var_, whole.var_, 1e-12, "var_")
    _same_everywhere(est._fitted)


def test_3d_batch_scope_and_matrix_scope():
    x = make_data((2 * SIZE + 1, 17, 3), seed=74)
    mats = _mine(x, "even")
    if mats.shape[0] == 0:  # matrix scope: a rank must hold a matrix
        mats = x[:1]
        mine = np.arange(1)
    else:
        c = _cuts(x.shape[0], "even")
        mine = np.arange(c[RANK], c[RANK + 1])
    # scope batch: statistics over every rank's rows of every matrix
    rows = _mine(x, "uneven", axis=1)
    est = clscale.MinMaxScaler(scope="batch").fit(rows, comm=COMM)
    _assert_stats_equal(est._fitted, clscale.MinMaxScaler(scope="batch").fit(x)._fitted)
    # scope matrix: each rank fits its own whole matrices
    est = clscale.StandardScaler(scope="matrix").fit(mats, comm=COMM)
    whole = clscale.StandardScaler(scope="matrix").fit(x)
    assert_close(est.mean_, whole.mean_[mine], 1e-12, "mean_")
    assert_close(est.var_, whole.var_[mine], 1e-12, "var_")


def test_a_failing_rank_raises_everywhere():
    last = SIZE - 1
    x = make_data((40, 3), seed=75)
    bad = x[:, :2] if RANK == last else x  # that rank has a column less
    if SIZE > 1:
        with pytest.raises(ValueError, match=f"rank {last} of {SIZE} fits .*2 columns"):
            clscale.MinMaxScaler().fit(bad, comm=COMM)
    bad = x[0] if RANK == last else x  # 1-D: rejected on that rank
    with pytest.raises(ValueError, match=f"rank {last} of {SIZE}: "):
        clscale.MinMaxScaler().fit(bad, comm=COMM)
    # a device failure (nothing matches the selector) is a ClscaleError
    dev = "no-such-device" if RANK == last else None
    with pytest.raises(clscale.ClscaleError, match=f"rank {last} of {SIZE}: "):
        clscale.StandardScaler(devices=dev).fit(x, comm=COMM)
    if SIZE > 1:
        rng = (0, 2) if RANK == last else (0, 1)
        with pytest.raises(ValueError, match=f"rank {last} of {SIZE} fits minmax"):
            clscale.MinMaxScaler(feature_range=rng).fit(x, comm=COMM)
    with pytest.raises(ValueError, match="none of the"):
        clscale.MinMaxScaler().fit(x[:0], comm=COMM)
    # the communicator still works: a good fit after the failures
    est = clscale.MinMaxScaler().fit(_mine(x, "uneven"), comm=COMM)
    assert_close(est.data_min_, np.nanmin(x, axis=0), 0.0, "data_min_")


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("how", ["even", "uneven", "last-empty"])
def test_robust_scaler_exact_over_ranks(how, dtype):
    """RobustScaler(comm=): the counting passes summed over the ranks give
    one process's quantiles bit for bit, and scikit-learn's RobustScaler on
    the gathered rows (nanpercentile: equal in float64, to float32's
    rounding in float32)."""
    import warnings
    from sklearn.preprocessing import RobustScaler as SkRobust
    x = make_data((181, 5), dtype, seed=76, all_nan_col=True)
    x[::7, 0] = np.round(x[::7, 0])  # ties
    local = _mine(x, how)
    est = clscale.RobustScaler(quantile_range=(10.0, 90.0)).fit(local, comm=COMM)
    one = clscale.RobustScaler(quantile_range=(10.0, 90.0)).fit(x)
    gathered = np.concatenate(COMM.allgather(local))
    assert np.array_equal(gathered, x, equal_nan=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the all-missing column
        sk = SkRobust(quantile_range=(10.0, 90.0)).fit(gathered)
    assert est.center_.tobytes() == one.center_.tobytes(), "center_ differs from one process's"
    assert est.scale_.tobytes() == one.scale_.tobytes(), "scale_ differs from one process's"
    tol = 0.0 if dtype == np.float64 else 1e-6
    assert_close(est.center_, sk.center_, tol, "center_ vs scikit-learn")
    assert_close(est.scale_[:-1], sk.scale_[:-1], tol, "scale_ vs scikit-learn")
    assert all(c == est.center_.tobytes() for c in COMM.allgather(est.center_.tobytes()))
    y = clscale.RobustScaler(quantile_range=(10.0, 90.0)).fit_transform(local, comm=COMM)
    c = _cuts(181, how)
    assert y.tobytes() == one.transform(x)[c[RANK]:c[RANK + 1]].tobytes()


def test_robust_scaler_3d_scopes_and_disagreement():
    x = make_data((4, 23, 3), seed=77)
    local = _mine(x, "uneven", axis=1)  # batch scope: rows of every matrix split
    est = clscale.RobustScaler(scope="batch").fit(local, comm=COMM)
    one = clscale.RobustScaler(scope="batch").fit(x)
    assert est.center_.tobytes() == one.center_.tobytes()
    assert est.scale_.tobytes() == one.scale_.tobytes()
    mats = _mine(x, "even", axis=0)  # whole matrices per rank (at most 3 ranks: none empty)
    per = clscale.RobustScaler(scope="matrix").fit(mats, comm=COMM)
    c = _cuts(4, "even")
    whole = clscale.RobustScaler(scope="matrix").fit(x)
    assert per.center_.tobytes() == whole.center_[c[RANK]:c[RANK + 1]].tobytes()
    if SIZE > 1:
        qr = (20.0, 80.0) if RANK == SIZE - 1 else (25.0, 75.0)
        with pytest.raises(ValueError, match="different quantile ranges"):
            clscale.RobustScaler(quantile_range=qr).fit(x[:, 0], comm=COMM)
    dev = "no-such-device" if RANK == SIZE - 1 else None
    with pytest.raises(clscale.ClscaleError, match=f"rank {SIZE - 1} of {SIZE}: "):
        clscale.RobustScaler(devices=dev).fit(x[:, 0], comm=COMM)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("how", ["even", "uneven", "last-empty"])
def test_max_abs_scaler_over_ranks(how, dtype):
    """MaxAbsScaler(comm=): the maxima and counts merged over the ranks are
    one process's bit for bit on every rank (a maximum does not depend on
    the order), and fit_transform scales this rank's rows with them."""
    x = make_data((181, 5), dtype, seed=78, all_nan_col=True)
    x[3, 2] = -1e6  # the largest |x| negative
    local = _mine(x, how)
    est = clscale.MaxAbsScaler().fit(local, comm=COMM)
    one = clscale.MaxAbsScaler().fit(x)
    assert est.max_abs_.tobytes() == one.max_abs_.tobytes(), "max_abs_ differs from one process's"
    assert est.scale_.tobytes() == one.scale_.tobytes()
    assert est.n_samples_seen_ == one.n_samples_seen_ == x.shape[0]
    assert all(m == est.max_abs_.tobytes() for m in COMM.allgather(est.max_abs_.tobytes()))
    y = clscale.MaxAbsScaler().fit_transform(local, comm=COMM)
    c = _cuts(181, how)
    assert y.shape == local.shape and y.dtype == dtype
    assert y.tobytes() == one.transform(x)[c[RANK]:c[RANK + 1]].tobytes()
    # partial_fit over ranks and pieces: the maxima of every row seen
    est = clscale.MaxAbsScaler()
    for part in np.array_split(x, [40, 41]):
        est.partial_fit(_mine(part, how), comm=COMM)
    assert est.max_abs_.tobytes() == one.max_abs_.tobytes()
    assert est.n_samples_seen_ == x.shape[0]


def test_max_abs_scaler_3d_scopes_and_a_failing_rank():
    x = make_data((4, 23, 3), seed=79)
    local = _mine(x, "uneven", axis=1)  # batch scope: rows of every matrix split
    est = clscale.MaxAbsScaler(scope="batch").fit(local, comm=COMM)
    assert est.max_abs_.tobytes() == clscale.MaxAbsScaler(scope="batch").fit(x).max_abs_.tobytes()
    mats = _mine(x, "even", axis=0)  # whole matrices per rank (at most 3 ranks: none empty)
    per = clscale.MaxAbsScaler(scope="matrix").fit(mats, comm=COMM)
    c = _cuts(4, "even")
    whole = clscale.MaxAbsScaler(scope="matrix").fit(x)
    assert per.max_abs_.tobytes() == whole.max_abs_[c[RANK]:c[RANK + 1]].tobytes()
    last = SIZE - 1
    if SIZE > 1:
        bad = x[0, :, :2] if RANK == last else x[0]  # that rank has a column less
        with pytest.raises(ValueError, match=f"rank {last} of {SIZE} fits .*2 columns"):
            clscale.MaxAbsScaler().fit(bad, comm=COMM)
    dev = "no-such-device" if RANK == last else None
    with pytest.raises(clscale.ClscaleError, match=f"rank {last} of {SIZE}: "):
        clscale.MaxAbsScaler(devices=dev).fit(x[0], comm=COMM)
    with pytest.raises(ValueError, match="none of the"):
        clscale.MaxAbsScaler().fit(x[0, :0], comm=COMM)


@pytest.mark.parametrize("strategy", ["mean", "median", "constant"])
@pytest.mark.parametrize("how", ["even", "uneven", "last-empty"])
def test_simple_imputer_over_ranks(how, strategy):
    """SimpleImputer(comm=): the statistics of every rank's rows together,
    the same bits on every rank, equal to one process's fit (mean to 1e-12
    relative, median and constant exactly); fit_transform fills this rank's
    rows with them. A numeric missing_values is skipped as NaN is."""
    x = make_data((181, 5), seed=86, nan=0.1, all_nan_col=True)
    x[::5, 0] = -999.0
    local = _mine(x, how)
    kw = dict(strategy=strategy, missing_values=-999.0, fill_value=7.5)
    est = clscale.SimpleImputer(**kw).fit(local, comm=COMM)
    one = clscale.SimpleImputer(**kw).fit(x)
    assert_close(est.statistics_, one.statistics_, 1e-12 if strategy == "mean" else 0.0, "statistics_")
    got = est.statistics_.tobytes()
    assert all(g == got for g in COMM.allgather(got)), "ranks hold different statistics"
    y = clscale.SimpleImputer(**kw).fit_transform(local, comm=COMM)
    c = _cuts(181, how)
    assert_close(y, one.transform(x)[c[RANK]:c[RANK + 1]], 1e-12, "fit_transform")


@pytest.mark.parametrize("how", ["uneven", "last-empty"])
def test_simple_imputer_median_float32_over_ranks(how):
    """float32 medians over the ranks are numpy's nanmedian, (a + b) / 2
    rounded to float32, as one process's fit (not the quantile at 0.5,
    which interpolates in float64)."""
    x = np.round(make_data((180, 5), seed=90, nan=0.1, all_nan_col=True), 1).astype(np.float32)
    est = clscale.SimpleImputer(strategy="median").fit(_mine(x, how), comm=COMM)
    one = clscale.SimpleImputer(strategy="median").fit(x)
    assert est.statistics_.tobytes() == one.statistics_.tobytes(), (est.statistics_, one.statistics_)


def test_simple_imputer_3d_scopes_and_refusals():
    x = make_data((4, 23, 3), seed=87, nan=0.2)
    local = _mine(x, "uneven", axis=1)
    est = clscale.SimpleImputer(strategy="median", scope="batch").fit(local, comm=COMM)
    assert_close(est.statistics_, clscale.SimpleImputer(strategy="median", scope="batch").fit(x).statistics_,
                 0.0, "batch")
    mats = _mine(x, "even", axis=0)  # whole matrices per rank (at most 3 ranks: none empty)
    per = clscale.SimpleImputer(scope="matrix").fit(mats, comm=COMM)
    c = _cuts(4, "even")
    assert_close(per.statistics_, clscale.SimpleImputer(scope="matrix").fit(x).statistics_[c[RANK]:c[RANK + 1]],
                 1e-12, "matrix")
    with pytest.raises(ValueError, match=f"rank 0 of {SIZE}: strategy='most_frequent'"):
        clscale.SimpleImputer(strategy="most_frequent").fit(x[0], comm=COMM)
    if SIZE > 1:
        strategy = "median" if RANK == SIZE - 1 else "mean"
        with pytest.raises(ValueError, match="different strategies"):
            clscale.SimpleImputer(strategy=strategy).fit(x[0], comm=COMM)
