"""partial_fit: statistics merged over chunks (Chan's formulas in the
library) equal one fit on all the rows, and scikit-learn's partial_fit."""
import numpy as np
import pytest
import sklearn.preprocessing as skp

import clscale
from conftest import DTYPES, assert_close, make_data, tol


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cls,skcls,attrs", [
    (clscale.MinMaxScaler, skp.MinMaxScaler, ("data_min_", "data_max_", "scale_", "min_")),
    (clscale.StandardScaler, skp.StandardScaler, ("mean_", "var_", "scale_")),
], ids=["minmax", "standard"])
def test_chunks_equal_one_fit_and_sklearn(dtype, cls, skcls, attrs):
    x = make_data((500, 6), dtype, seed=31, offset=1e3, spread=1.0)
    est, ref = cls(), skcls()
    for chunk in np.array_split(x, [1, 90, 91, 400]):  # odd sizes, one of one row
        est.partial_fit(chunk)
        ref.partial_fit(chunk.astype(np.float64))
    whole = cls().fit(x)
    for a in attrs:
        assert_close(getattr(est, a), getattr(whole, a), 1e-12 if dtype == np.float64 else 1e-6, a)
        assert_close(getattr(est, a), getattr(ref, a), 1e-9 if dtype == np.float64 else 1e-5, a + " vs sklearn")
    assert np.array_equal(np.asarray(est.n_samples_seen_), np.asarray(ref.n_samples_seen_))
    assert_close(est.transform(x), ref.transform(x.astype(np.float64)), tol(dtype), "transform")


@pytest.mark.fp64
def test_partial_fit_per_matrix_and_mixed_dtypes():
    a = make_data((3, 20, 4), seed=32)
    b = make_data((3, 30, 4), np.float32, seed=33)
    est = clscale.StandardScaler(scope="matrix").partial_fit(a).partial_fit(b)
    both = np.concatenate([a, b.astype(np.float64)], axis=1)
    whole = clscale.StandardScaler(scope="matrix").fit(both)
    assert_close(est.mean_, whole.mean_, 1e-6, "mean_")
    assert_close(est.var_, whole.var_, 1e-6, "var_")
    with pytest.raises(ValueError, match="same number of matrices"):
        est.partial_fit(make_data((2, 20, 4), seed=34))
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(make_data((3, 20, 5), seed=34))


@pytest.mark.fp64
def test_partial_fit_follows_a_new_feature_range_like_sklearn():
    x = make_data((100, 3), seed=35)
    est, ref = clscale.MinMaxScaler(), skp.MinMaxScaler()
    est.partial_fit(x[:50])
    ref.partial_fit(x[:50])
    est.set_params(feature_range=(-2, 2))
    ref.set_params(feature_range=(-2, 2))
    est.partial_fit(x[50:])
    ref.partial_fit(x[50:])
    assert_close(est.transform(x), ref.transform(x), 1e-12, "transform")


@pytest.mark.fp64
def test_fit_starts_over():
    est = clscale.MinMaxScaler().fit(make_data((10, 3), seed=36, offset=100))
    x = make_data((10, 3), seed=37)
    est.fit(x)
    assert_close(est.data_min_, np.nanmin(x, axis=0), 0.0, "data_min_")
    assert est.n_samples_seen_ == 10
