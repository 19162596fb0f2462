"""StandardScaler on float32 data past ~1e19, whose sum of squares is past
the largest float32 (the variance overflowed to inf on the devices, and
the column came back unscaled with scale_ 1, silently), or of magnitude
below ~1e-15, whose squares are below the smallest normal float32 (the
variance underflowed to 0: scale_ 1, silently), and
fit_transform(X) against fit(X).transform(X), which scikit-learn's
test_fit_transform asks to be equal."""
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.impute import SimpleImputer as SkImputer
from sklearn.pipeline import make_pipeline as sk_make_pipeline
from sklearn.preprocessing import StandardScaler as SkStandardScaler

import clscale

from conftest import DTYPES


def huge(shape=(200, 4), seed=0):
    """float32 columns of magnitude 1e19 (one from 0 to 1e19, one of
    ordinary values), a few missing."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1e19, size=shape)
    x[..., 1] = rng.uniform(0, 1e19, size=shape[:-1])
    x[..., 2] = rng.normal(3, 2, size=shape[:-1])
    x[..., 3] = rng.normal(-2e19, 5e18, size=shape[:-1])
    x[rng.random(shape) < 0.03] = np.nan
    return x.astype(np.float32)


def check_like_sklearn(est, sk, x, y):
    assert_allclose(est.var_, sk.var_, rtol=1e-5)
    assert_allclose(est.scale_, sk.scale_, rtol=1e-5)
    assert np.all(np.abs(est.mean_ - sk.mean_) <= 1e-5 * sk.scale_)
    assert y.dtype == np.float32
    assert_allclose(y, sk.transform(x), atol=1e-5, equal_nan=True)


def test_fit_transform_matches_sklearn():
    x = huge()
    sk = SkStandardScaler().fit(x)
    assert np.all(np.isfinite(sk.var_)) and sk.scale_[0] > 1e18
    est = clscale.StandardScaler()
    y = est.fit_transform(x)
    check_like_sklearn(est, sk, x, y)
    assert np.nanmax(np.abs(y[:, [0, 1, 3]])) < 10  # scaled, not left as it was


def test_fit_then_transform_matches_sklearn():
    x = huge()
    sk = SkStandardScaler().fit(x)
    est = clscale.StandardScaler().fit(x)
    check_like_sklearn(est, sk, x, est.transform(x))
    assert_allclose(est.inverse_transform(est.transform(x)), x, rtol=1e-5, atol=1e-5 * 1e19, equal_nan=True)


def test_in_place_matches_sklearn():
    x = huge()
    sk = SkStandardScaler().fit(x)
    y = x.copy()
    est = clscale.StandardScaler(copy=False)
    assert est.fit_transform(y) is y
    check_like_sklearn(est, sk, x, y)


def test_partial_fit_matches_sklearn():
    x = huge(seed=1)
    sk = SkStandardScaler().fit(x)
    est = clscale.StandardScaler().partial_fit(x[:90]).partial_fit(x[90:])
    check_like_sklearn(est, sk, x, est.transform(x))


def test_per_matrix_matches_sklearn():
    x = huge(shape=(3, 150, 4), seed=2)
    est = clscale.StandardScaler(scope="matrix")
    y = est.fit_transform(x)
    for b in range(3):
        sk = SkStandardScaler().fit(x[b])
        assert_allclose(est.var_[b], sk.var_, rtol=1e-5)
        assert_allclose(y[b], sk.transform(x[b]), atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("make", ["huge", "tiny"])
def test_fused_pipeline_matches_sklearn(make):
    x = huge(seed=3) if make == "huge" else tiny(seed=3)
    ours = clscale.make_pipeline(clscale.SimpleImputer(), clscale.StandardScaler())
    y = ours.fit_transform(x)  # fused, then redone step by step for those columns
    ref = sk_make_pipeline(SkImputer(), SkStandardScaler()).fit(x)
    assert_allclose(ours[-1].var_, ref[-1].var_, rtol=1e-5)
    assert_allclose(y, ref.transform(x), atol=1e-5)
    y = x.copy()  # in place: the values taken back from the output
    ours = clscale.make_pipeline(clscale.SimpleImputer(copy=False), clscale.StandardScaler(copy=False))
    ours.fit_transform(y)
    if make == "huge":
        assert_allclose(ours[-1].var_, ref[-1].var_, rtol=1e-5)
        assert_allclose(y, ref.transform(x), atol=1e-5)


def tiny(shape=(200, 3), seed=6):
    """float32 columns of magnitude 1e-25 and 1e-17 (squares below the
    smallest normal float32), one of ordinary values."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, size=shape) * np.array([1e-25, 1e-17, 1.0]) + np.array([3e-25, 0, 5])
    x[rng.random(shape) < 0.03] = np.nan
    return x.astype(np.float32)


@pytest.mark.parametrize("how", ["fit_transform", "fit+transform", "in place"])
def test_tiny_values_match_sklearn(how):
    x = tiny()
    sk = SkStandardScaler().fit(x)
    est = clscale.StandardScaler(copy=how != "in place")
    if how == "fit+transform":
        y = est.fit(x).transform(x)
    else:
        y = x.copy()
        y = est.fit_transform(y)
    assert_allclose(est.var_, sk.var_, rtol=1e-5)
    assert_allclose(est.scale_, sk.scale_, rtol=1e-5)
    assert_allclose(y, sk.transform(x), atol=1e-5, equal_nan=True)
    assert np.nanmax(np.abs(y[:, :2])) > 0.5  # scaled, not left at 1e-25


# ---- fit_transform(X) is fit(X).transform(X), bit for bit ----

@pytest.mark.fp64
def test_fit_transform_equals_fit_transform_sklearn_test():
    # scikit-learn's test_fit_transform
    x = np.random.RandomState(0).random_sample((5, 4))
    assert_array_equal(clscale.StandardScaler().fit(x).transform(x), clscale.StandardScaler().fit_transform(x))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 4), (100, 7), (512, 300), (3, 200, 33)])
def test_fit_transform_equals_fit_then_transform(dtype, shape):
    rng = np.random.default_rng(4)
    x = (rng.normal(100, 3, size=shape)).astype(dtype)
    x[rng.random(shape) < 0.05] = np.nan
    x[..., 1] = 7.5  # constant: scikit-learn's scale_ 1
    assert_array_equal(clscale.StandardScaler().fit(x).transform(x), clscale.StandardScaler().fit_transform(x))


@pytest.mark.parametrize("make", ["huge", "tiny"])
def test_dask_chunks_match_sklearn(make):
    da = pytest.importorskip("dask.array")
    x = huge(seed=7) if make == "huge" else tiny(seed=7)
    sk = SkStandardScaler().fit(x)
    est = clscale.StandardScaler().fit(da.from_array(x, chunks=(50, 4)))
    assert_allclose(est.var_, sk.var_, rtol=1e-5)
    assert_allclose(est.transform(x), sk.transform(x), atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("make", ["huge", "tiny"])
def test_files_match_sklearn(tmp_path, make):
    x = huge(seed=8) if make == "huge" else tiny(seed=8)
    sk = SkStandardScaler().fit(x)
    src, dst = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(src, x)
    est = clscale.StandardScaler().fit_file(src)
    assert_allclose(est.var_, sk.var_, rtol=1e-5)
    est = clscale.StandardScaler().fit_transform_file(src, dst)
    assert_allclose(est.var_, sk.var_, rtol=1e-5)
    assert_allclose(np.load(dst), sk.transform(x), atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("make", ["huge", "tiny"])
def test_fused_pipeline_file_matches_sklearn(tmp_path, make):
    x = huge(seed=9) if make == "huge" else tiny(seed=9)
    src, dst = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(src, x)
    ours = clscale.make_pipeline(clscale.SimpleImputer(), clscale.StandardScaler()).fit_transform_file(src, dst)
    ref = sk_make_pipeline(SkImputer(), SkStandardScaler()).fit(x)
    assert_allclose(ours[-1].var_, ref[-1].var_, rtol=1e-5)
    assert_allclose(np.load(dst), ref.transform(x), atol=1e-5)
