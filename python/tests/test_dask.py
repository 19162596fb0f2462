"""Dask arrays: fit is a tree of per-chunk fits merged by the library and
equals the in-memory fit (1e-12 relative in float64); transform and
inverse_transform are lazy map_blocks equal to the in-memory results."""
import numpy as np
import pytest

import clscale
from conftest import DTYPES, assert_close, make_data, tol

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

SCALERS = [clscale.MinMaxScaler, clscale.StandardScaler, clscale.DecimalScaler]


def _assert_stats_equal(got, want, rtol):
    assert got.info == want.info, f"{got.info} != {want.info}"
    a, b = got.columns(), want.columns()
    for k in ("count", "missing", "min", "max", "absmax"):
        assert np.array_equal(a[k], b[k], equal_nan=True), k
    for k in ("mean", "m2"):
        assert_close(a[k], b[k], rtol, k)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cls", SCALERS, ids=lambda c: c.__name__)
def test_fit_transform_equal_in_memory(cls, dtype):
    x = make_data((311, 7), dtype, seed=81, offset=1e3, spread=2.0, all_nan_col=True)
    # uneven row chunks (one of one row) and chunks split across the columns
    X = da.from_array(x, chunks=((100, 1, 150, 60), (3, 4)))
    est = cls().fit(X)
    whole = cls().fit(x)
    _assert_stats_equal(est._fitted, whole._fitted, 1e-12 if dtype == np.float64 else 1e-5)
    y = est.transform(X)
    assert isinstance(y, da.Array) and y.dtype == x.dtype
    assert_close(y.compute(), whole.transform(x), tol(dtype), "transform")
    assert_close(est.inverse_transform(y).compute(), x, tol(dtype) * 1e3, "inverse_transform")
    assert_close(cls().fit_transform(X).compute(), whole.transform(x), tol(dtype), "fit_transform")


@pytest.mark.fp64
def test_3d_scopes_partial_fit_and_integers():
    x = make_data((4, 50, 3), seed=82)
    X = da.from_array(x, chunks=(1, 20, 2))
    for scope in ("matrix", "batch"):
        est = clscale.StandardScaler(scope=scope).fit(X)
        whole = clscale.StandardScaler(scope=scope).fit(x)
        _assert_stats_equal(est._fitted, whole._fitted, 1e-12)
        assert_close(est.transform(X).compute(), whole.transform(x), 1e-10, scope)
    # partial_fit over dask pieces merges as over numpy ones
    est = clscale.MinMaxScaler(scope="batch")
    est.partial_fit(X[:2]).partial_fit(x[2:])
    assert_close(est.data_max_, np.nanmax(x.reshape(-1, 3), axis=0), 0.0, "data_max_")
    # integer data is fitted as float64, as numpy input is
    i = da.from_array(np.arange(1, 61).reshape(20, 3), chunks=(7, 3))
    assert_close(clscale.MinMaxScaler().fit(i).data_max_, [58, 59, 60], 0.0, "integers")


@pytest.mark.fp64
def test_chunks_without_rows_and_errors():
    x = make_data((30, 4), seed=83)
    X = da.concatenate([da.from_array(x[:0]), da.from_array(x, chunks=(11, 4)), da.from_array(x[:0])])
    assert_close(clscale.MinMaxScaler().fit(X).data_min_, np.nanmin(x, axis=0), 0.0, "data_min_")
    with pytest.raises(ValueError, match="0 sample"):
        clscale.MinMaxScaler().fit(da.from_array(x[:0]))
    est = clscale.MinMaxScaler().fit(X)
    with pytest.raises(ValueError, match="features"):
        est.transform(da.from_array(x[:, :3]))
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(da.from_array(x[:, :3]))
    with pytest.raises(ValueError, match="2-D"):
        est.fit(da.from_array(x[0]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_abs_scaler_fits_chunks_and_stays_lazy(dtype):
    """MaxAbsScaler: a tree of per-chunk fits (the maxima exact in any
    order) and lazy transforms, equal to the in-memory estimator's."""
    x = make_data((311, 7), dtype, seed=83, all_nan_col=True)
    x[5, 3] = -1e5
    X = da.from_array(x, chunks=((100, 1, 150, 60), (3, 4)))
    est = clscale.MaxAbsScaler().fit(X)
    whole = clscale.MaxAbsScaler().fit(x)
    assert est.max_abs_.tobytes() == whole.max_abs_.tobytes()
    assert est.scale_.tobytes() == whole.scale_.tobytes()
    assert est.n_samples_seen_ == whole.n_samples_seen_ == 311
    y = est.transform(X)
    assert isinstance(y, da.Array) and y.dtype == x.dtype
    assert np.array_equal(y.compute(), whole.transform(x), equal_nan=True)
    back = est.inverse_transform(y)
    assert isinstance(back, da.Array)
    assert_close(back.compute(), x, tol(dtype))
    f = clscale.MaxAbsScaler().fit_transform(X)
    assert isinstance(f, da.Array)
    assert np.array_equal(f.compute(), whole.transform(x), equal_nan=True)
    # partial_fit over dask and numpy pieces: the maxima of every row seen
    est = clscale.MaxAbsScaler().partial_fit(X[:200]).partial_fit(x[200:])
    assert est.max_abs_.tobytes() == whole.max_abs_.tobytes()
    with pytest.raises(ValueError, match="out="):
        clscale.MaxAbsScaler().fit_transform(X, out=np.empty_like(x))


@pytest.mark.fp64
def test_max_abs_scaler_3d_scopes():
    x = make_data((4, 50, 3), seed=84)
    X = da.from_array(x, chunks=(1, 20, 2))
    for scope in ("matrix", "batch"):
        est = clscale.MaxAbsScaler(scope=scope).fit(X)
        whole = clscale.MaxAbsScaler(scope=scope).fit(x)
        assert est.max_abs_.tobytes() == whole.max_abs_.tobytes(), scope
        assert np.array_equal(est.transform(X).compute(), whole.transform(x), equal_nan=True)


@pytest.mark.fp64
def test_robust_scaler_transform_stays_lazy():
    """RobustScaler's transform of a dask array is a dask array over the
    same chunks (its fit, chunk by chunk: test_dask_quantiles.py)."""
    x = make_data((200, 4), seed=85)
    X = da.from_array(x, chunks=(64, 4))
    est = clscale.RobustScaler().fit(x)
    y = est.transform(X)
    assert isinstance(y, da.Array) and y.chunks == X.chunks
    assert np.array_equal(y.compute(), est.transform(x), equal_nan=True)
    assert isinstance(est.inverse_transform(y), da.Array)
    f = clscale.RobustScaler().fit_transform(X)
    assert isinstance(f, da.Array)
    assert np.array_equal(f.compute(), est.transform(x), equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_simple_imputer_transform_stays_lazy(dtype):
    """SimpleImputer's transform and fit_transform of a dask array are dask
    arrays, filled chunk by chunk as the in-memory transform fills with the
    same statistics (its fit, chunk by chunk: test_dask_quantiles.py)."""
    x = make_data((311, 7), dtype, seed=88, nan=0.2, all_nan_col=True)
    X = da.from_array(x, chunks=((100, 1, 150, 60), (3, 4)))
    for strategy in ("mean", "median", "constant"):
        est = clscale.SimpleImputer(strategy=strategy, fill_value=2.0).fit(x)
        y = est.transform(X)
        assert isinstance(y, da.Array) and y.dtype == x.dtype
        assert np.array_equal(y.compute(), est.transform(x), equal_nan=True), strategy
        f = clscale.SimpleImputer(strategy=strategy, fill_value=2.0).fit_transform(X)
        assert isinstance(f, da.Array)
        chunked = clscale.SimpleImputer(strategy=strategy, fill_value=2.0).fit(X)
        assert np.array_equal(f.compute(), chunked.transform(x), equal_nan=True), strategy
    assert np.array_equal(X.compute(), x, equal_nan=True)  # the chunks are not written


@pytest.mark.fp64
def test_simple_imputer_3d_per_matrix_lazy():
    x = make_data((4, 50, 3), seed=89, nan=0.2)
    X = da.from_array(x, chunks=(1, 20, 2))
    est = clscale.SimpleImputer(scope="matrix").fit(x)
    y = est.transform(X)
    assert isinstance(y, da.Array)
    assert np.array_equal(y.compute(), est.transform(x), equal_nan=True)
