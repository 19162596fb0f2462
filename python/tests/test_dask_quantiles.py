"""Dask arrays fitted chunk by chunk where the fit needs exact quantiles
(RobustScaler, SimpleImputer's median): the library's counting passes
summed over the chunks equal the fit of the array in memory bit for bit,
with one chunk in memory at a time."""
import weakref

import numpy as np
import pytest

import clscale
from conftest import DTYPES, assert_close, make_data

da = pytest.importorskip("dask.array", reason="dask is not installed (python3-dask)")
dask = pytest.importorskip("dask", reason="dask is not installed (python3-dask)")

# odd row chunks (one of one row, one empty) and chunks split across the columns
ODD = ((100, 1, 0, 150, 60), (3, 4))


def _data(dtype, seed):
    """311 x 7: NaN and +-Inf, a constant column, ties, an all-missing column."""
    x = make_data((311, 7), np.float64, seed=seed, all_nan_col=True)
    x[:, 2] = np.round(x[:, 2])  # ties
    x[7, 0], x[8, 0] = np.inf, -np.inf
    return x.astype(dtype)


def _same(got, want, what):
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), f"{what}: {got} != {want}"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("qr", [(25.0, 75.0), (0.0, 100.0), (10.0, 90.0)])
def test_robust_scaler_fit_equals_in_memory(dtype, qr):
    x = _data(dtype, seed=91)
    X = da.from_array(x, chunks=ODD)
    est = clscale.RobustScaler(quantile_range=qr).fit(X)
    whole = clscale.RobustScaler(quantile_range=qr).fit(x)
    _same(est.center_, whole.center_, "center_")
    _same(est.scale_, whole.scale_, "scale_")
    assert est.n_features_in_ == 7
    y = est.transform(X)
    assert isinstance(y, da.Array)
    assert np.array_equal(y.compute(), whole.transform(x), equal_nan=True)
    f = clscale.RobustScaler(quantile_range=qr).fit_transform(X)
    assert isinstance(f, da.Array)
    assert np.array_equal(f.compute(), whole.transform(x), equal_nan=True)


@pytest.mark.fp64
@pytest.mark.parametrize("scope", ["matrix", "batch"])
def test_robust_scaler_3d_scopes(scope):
    x = make_data((3, 70, 5), seed=92, all_nan_col=True)
    X = da.from_array(x, chunks=(1, (30, 1, 39), (2, 3)))
    est = clscale.RobustScaler(scope=scope, unit_variance=True).fit(X)
    whole = clscale.RobustScaler(scope=scope, unit_variance=True).fit(x)
    _same(est.center_, whole.center_, "center_")
    _same(est.scale_, whole.scale_, "scale_")
    assert np.array_equal(est.transform(X).compute(), whole.transform(x), equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("strategy", ["mean", "median", "constant"])
def test_simple_imputer_fit_equals_in_memory(dtype, strategy):
    x = _data(dtype, seed=93)
    X = da.from_array(x, chunks=ODD)
    est = clscale.SimpleImputer(strategy=strategy, fill_value=-2.5).fit(X)
    whole = clscale.SimpleImputer(strategy=strategy, fill_value=-2.5).fit(x)
    if strategy == "mean":  # the chunks' moments merged by Chan's formulas
        assert_close(est.statistics_, whole.statistics_, 1e-12 if dtype == np.float64 else 1e-5, "statistics_")
    else:
        _same(est.statistics_, whole.statistics_, "statistics_")
    assert est.n_features_in_ == 7
    f = clscale.SimpleImputer(strategy=strategy, fill_value=-2.5).fit_transform(X)
    assert isinstance(f, da.Array)
    assert_close(f.compute(), whole.transform(x), 1e-12 if dtype == np.float64 else 1e-5, "fit_transform")


@pytest.mark.fp64
def test_simple_imputer_sentinel_and_3d():
    x = np.round(make_data((4, 40, 3), seed=94, nan=0.1))
    x[x == 2.0] = -1.0  # the sentinel, among ties
    X = da.from_array(x, chunks=(2, (13, 27), 2))
    for scope in ("matrix", "batch"):
        kw = dict(strategy="median", missing_values=-1.0, scope=scope)
        est = clscale.SimpleImputer(**kw).fit(X)
        whole = clscale.SimpleImputer(**kw).fit(x)
        _same(est.statistics_, whole.statistics_, scope)
    with pytest.raises(ValueError, match="most_frequent.*compute"):
        clscale.SimpleImputer(strategy="most_frequent").fit(X)
    with pytest.raises(ValueError, match="0 sample"):
        clscale.SimpleImputer(strategy="median").fit(da.from_array(x[0, :0]))
    with pytest.raises(ValueError, match="0 sample"):
        clscale.RobustScaler().fit(da.from_array(x[0, :0]))


@pytest.mark.fp64
def test_fit_holds_one_chunk_at_a_time():
    """Chunks made on demand (never the whole array): with the
    synchronous scheduler no two are alive at once during a fit."""
    rows, cols, step = 400, 6, 50
    alive, most = [], [0]

    def make(block_info=None):
        lo = block_info[None]["array-location"][0][0]
        chunk = make_data((step, cols), seed=1000 + lo, nan=0.1)
        alive[:] = [r for r in alive if r() is not None]
        alive.append(weakref.ref(chunk))
        most[0] = max(most[0], len(alive))
        return chunk

    X = da.map_blocks(make, chunks=((step,) * (rows // step), (cols,)), dtype=np.float64)
    x = X.compute(scheduler="synchronous")
    most[0] = 0
    with dask.config.set(scheduler="synchronous"):
        est = clscale.RobustScaler().fit(X)
        imp = clscale.SimpleImputer(strategy="median").fit(X)
    assert most[0] == 1, f"{most[0]} chunks alive at once"
    whole = clscale.RobustScaler().fit(x)
    _same(est.center_, whole.center_, "center_")
    _same(est.scale_, whole.scale_, "scale_")
    _same(imp.statistics_, clscale.SimpleImputer(strategy="median").fit(x).statistics_, "statistics_")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(), dict(cenfunc="mean", maxiters=None), dict(stdfunc="mad_std", sigma=2.5)],
                         ids=["median-std", "mean-converge", "mad"])
def test_sigma_clip_dask_clips_as_one_array(dtype, kw):
    """SigmaClip of a dask array: lazy, each chunk clipped by the bounds of
    all the rows (the cleaning's passes summed over the chunks), the same
    values kept as the in-memory clipping."""
    x = _data(dtype, seed=97)
    x[::37, 0] = 1e3
    X = da.from_array(x, chunks=ODD)
    est = clscale.SigmaClip(**kw)
    y = est.fit_transform(X)
    assert isinstance(y, da.Array) and y.dtype == x.dtype
    one = clscale.SigmaClip(**kw)
    want = one.fit_transform(x)
    assert np.array_equal(y.compute(), want, equal_nan=True)
    assert np.array_equal(est.clipped_, one.clipped_) and est.iterations_ == one.iterations_


@pytest.mark.fp64
def test_sigma_clip_dask_3d_scopes():
    x = make_data((3, 40, 4), seed=98, nan=0.1)
    x[:, ::9, 1] = 300.0
    X = da.from_array(x, chunks=(1, (15, 25), 4))
    for scope in ("matrix", "batch"):
        y = clscale.SigmaClip(scope=scope).fit_transform(X)
        assert np.array_equal(y.compute(), clscale.SigmaClip(scope=scope).fit_transform(x), equal_nan=True)
