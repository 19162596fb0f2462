"""float16 and big-endian input to the estimators: float16 data (either
byte order) is scaled as float32 and comes back float16, as scikit-learn
keeps native float16 (it came back float64); big-endian float32 (FITS) is scaled as native float32, and
big-endian float64 as float64, with the results of native data."""
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import impute, preprocessing

import clscale

PAIRS = [(clscale.StandardScaler, preprocessing.StandardScaler),
         (clscale.MinMaxScaler, preprocessing.MinMaxScaler),
         (clscale.MaxAbsScaler, preprocessing.MaxAbsScaler),
         (clscale.RobustScaler, preprocessing.RobustScaler),
         (clscale.SimpleImputer, impute.SimpleImputer)]


def data(dtype, shape=(300, 5), seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(20, 4, size=shape)
    x[rng.random(shape) < 0.05] = np.nan
    return x.astype(dtype)


@pytest.mark.parametrize("ours, theirs", PAIRS, ids=[p[0].__name__ for p in PAIRS])
@pytest.mark.parametrize("dtype", ["<f2", ">f2"])
def test_float16_kept_like_sklearn(ours, theirs, dtype):
    x = data(dtype)
    ref = theirs().fit(x.astype(np.float16))  # scikit-learn keeps native float16 only
    est = ours()
    y = est.fit_transform(x)
    assert y.dtype == np.float16
    want = ref.transform(x.astype(np.float16))
    assert want.dtype == np.float16
    assert_allclose(y.astype(np.float64), want.astype(np.float64), rtol=2e-3, atol=2e-3, equal_nan=True)
    y2 = est.transform(x)
    assert y2.dtype == np.float16
    assert_array_equal(y2, y)
    if hasattr(ref, "inverse_transform") and not isinstance(est, clscale.SimpleImputer):
        back = est.inverse_transform(y)
        assert back.dtype == np.float16
        assert_allclose(back.astype(np.float64), x.astype(np.float64), rtol=2e-3, equal_nan=True)


def test_sklearn_float16_overflow():
    # scikit-learn's test_scaler_float16_overflow
    rng = np.random.RandomState(0)
    x = rng.uniform(5, 10, [200000, 1]).astype(np.float16)
    with np.errstate(over="raise"):
        scaler = clscale.StandardScaler().fit(x)
        y = scaler.transform(x)
    assert y.dtype == np.float16
    assert np.all(np.isfinite(y))
    ref = preprocessing.StandardScaler().fit_transform(x.astype(np.float64))
    np.testing.assert_array_almost_equal(y, ref, decimal=2)


@pytest.mark.parametrize("ours, theirs", PAIRS, ids=[p[0].__name__ for p in PAIRS])
@pytest.mark.parametrize("native", [np.float32, pytest.param(np.float64, marks=pytest.mark.fp64)])
def test_big_endian_as_native(ours, theirs, native):
    x = data(native, seed=1)
    big = x.astype(np.dtype(native).newbyteorder(">"))
    y = ours().fit_transform(big)
    assert y.dtype == native and y.dtype.isnative
    assert_array_equal(y, ours().fit_transform(x))
