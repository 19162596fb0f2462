"""Every estimator with a lazy dask array, chunked along the rows in one
chunk, many chunks of an odd size, or uneven chunks (one of one row, one
empty, the columns split too): the fit computes the chunks one at a time
(never the whole array), transform, fit_transform and inverse_transform
return dask arrays, and the results are the in-memory call's, bit for bit
but for means and variances over several chunks (every_estimator.py says
why and how close)."""
import weakref

import numpy as np
import pytest

import clscale
from conftest import DTYPES, make_data
from every_estimator import COLS, ESTIMATORS, ROWS, assert_same, data

da = pytest.importorskip("dask.array", reason="dask is not installed (python3-dask)")
dask = pytest.importorskip("dask", reason="dask is not installed (python3-dask)")

CHUNKS = {"one": ((ROWS,), (COLS,)),
          "many": ((23,) * (ROWS // 23) + (ROWS % 23,), (COLS,)),
          "uneven": ((100, 1, 0, 150, 60), (3, 4))}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("chunks", list(CHUNKS), ids=list(CHUNKS))
@pytest.mark.parametrize("name", list(ESTIMATORS), ids=list(ESTIMATORS))
def test_dask_equals_in_memory_and_stays_lazy(name, chunks, dtype):
    make, attrs, moments, inverse = ESTIMATORS[name]
    x = data(dtype)
    X = da.from_array(x, chunks=CHUNKS[chunks])
    parts = len(CHUNKS[chunks][0])
    whole = make()
    want = whole.fit_transform(x)
    est = make()
    if name != "SigmaClip":
        assert est.fit(X) is est
        assert est.n_features_in_ == COLS
        for a in attrs:
            assert_same(getattr(est, a), getattr(whole, a), a, moments, parts, dtype)
        y = est.transform(X)
        assert isinstance(y, da.Array) and y.dtype == x.dtype and y.shape == x.shape
        assert_same(y.compute(), whole.transform(x), "transform", moments, parts, dtype)
    f = make().fit_transform(X)
    assert isinstance(f, da.Array) and f.dtype == x.dtype and f.shape == x.shape
    assert_same(f.compute(), want, "fit_transform", moments, parts, dtype)
    if inverse:
        i = est.inverse_transform(y)
        assert isinstance(i, da.Array)
        assert_same(i.compute(), whole.inverse_transform(whole.transform(x)), "inverse_transform", moments, parts, dtype)


@pytest.mark.fp64
@pytest.mark.parametrize("name", list(ESTIMATORS), ids=list(ESTIMATORS))
def test_dask_fit_holds_one_chunk_at_a_time(name):
    """Chunks made on demand: with the synchronous scheduler no two are
    alive at once during a fit (or SigmaClip's fit_transform and the
    computing of its result), so the array is never materialised."""
    make = ESTIMATORS[name][0]
    rows, cols, step = 400, 5, 57
    alive, most = [], [0]

    def block(block_info=None):
        (lo, hi), _ = block_info[None]["array-location"]
        chunk = make_data((hi - lo, cols), seed=1000 + lo, nan=0.1)
        alive[:] = [r for r in alive if r() is not None]
        alive.append(weakref.ref(chunk))
        most[0] = max(most[0], len(alive))
        return chunk

    sizes = (step,) * (rows // step) + (rows % step,)
    X = da.map_blocks(block, chunks=(sizes, (cols,)), dtype=np.float64)
    x = X.compute(scheduler="synchronous")
    alive.clear()
    most[0] = 0
    with dask.config.set(scheduler="synchronous"):
        est = make()
        y = est.fit_transform(X)
        assert isinstance(y, da.Array)
        for b in y.to_delayed().ravel():  # the result too, a chunk at a time
            b.compute()
    assert most[0] == 1, f"{most[0]} chunks alive at once"
    assert_same(y.compute(), make().fit_transform(x), "fit_transform", ESTIMATORS[name][2], 2, np.float64)
