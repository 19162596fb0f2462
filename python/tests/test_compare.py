"""Every estimator against scikit-learn (or numpy, where scikit-learn has
no such transformer), run in float64 on the same values: random data with
missing values, constant and all-missing columns, float32 at large offsets,
shapes of one row or one column, new data outside the fitted range, and the
inverse. Runs on PoCL and, float32 only, on rusticl."""
import warnings

import numpy as np
import pytest
import sklearn.preprocessing as skp

import clscale
from conftest import DTYPES, assert_close, make_data, tol

# (rows, cols), offset, spread: odd sizes, one row, one column, float32 at
# an offset 1e4 times the spread
CASES = [((257, 7), 0.0, 10.0), ((1, 5), 2.0, 1.0), ((300, 1), -3.0, 2.0), ((1000, 6), 1e4, 1.0)]
CASE_IDS = ["257x7", "1x5", "300x1", "1000x6-offset"]


def sk_ref(cls, x, **kw):
    """scikit-learn's estimator fitted on x in float64 (warnings of all-NaN
    columns silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return cls(**kw).fit(x.astype(np.float64))


def sk_call(f, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(x.astype(np.float64))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,offset,spread", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("kw", [{}, {"feature_range": (-1, 3)}, {"clip": True}], ids=["default", "range", "clip"])
def test_minmax_matches_sklearn(dtype, shape, offset, spread, kw):
    x = make_data(shape, dtype, seed=1, offset=offset, spread=spread, all_nan_col=True)
    new = make_data(shape, dtype, seed=2, offset=offset, spread=2 * spread)  # beyond the fitted range
    ref = sk_ref(skp.MinMaxScaler, x, **kw)
    est = clscale.MinMaxScaler(**kw)
    y = est.fit_transform(x)
    assert y.dtype == dtype and y.shape == x.shape
    t = tol(dtype)
    assert_close(y, sk_call(ref.transform, x), t, "fit_transform")
    assert_close(est.transform(new), sk_call(ref.transform, new), t, "transform of new data")
    for a in ("data_min_", "data_max_", "data_range_", "scale_", "min_"):
        assert getattr(est, a).dtype == dtype
        assert_close(getattr(est, a), getattr(ref, a), 1e-6 if dtype == np.float32 else 1e-12, a)
    assert est.n_samples_seen_ == ref.n_samples_seen_
    back = est.inverse_transform(y)
    if not kw.get("clip"):
        assert_close(back, x, tol(dtype), "inverse")
    assert_close(back, sk_call(ref.inverse_transform, y), tol(dtype), "inverse vs sklearn")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,offset,spread", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("kw", [{}, {"with_mean": False}, {"with_std": False}], ids=["default", "no-mean", "no-std"])
def test_standard_matches_sklearn(dtype, shape, offset, spread, kw):
    x = make_data(shape, dtype, seed=3, offset=offset, spread=spread, all_nan_col=True)
    new = make_data(shape, dtype, seed=4, offset=offset, spread=2 * spread)
    ref = sk_ref(skp.StandardScaler, x, **kw)
    est = clscale.StandardScaler(**kw)
    y = est.fit_transform(x)
    assert y.dtype == dtype
    t = tol(dtype)
    assert_close(y, sk_call(ref.transform, x), t, "fit_transform")
    assert_close(est.transform(new), sk_call(ref.transform, new), t, "transform of new data")
    for a in ("mean_", "var_", "scale_"):
        want = getattr(ref, a)
        if want is None:
            assert getattr(est, a) is None, a
        else:
            # float32 data: moments accumulate in float32 on the devices
            assert_close(getattr(est, a), want, 1e-9 if dtype == np.float64 else 1e-5, a)
    assert np.array_equal(np.asarray(est.n_samples_seen_), np.asarray(ref.n_samples_seen_))
    back = est.inverse_transform(y)
    assert_close(back, x, tol(dtype), "inverse")


def decimal_ref(x):
    """Decimal scaling in float64: j the smallest integer with max|x| / 10^j < 1."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-missing columns
        a = np.nanmax(np.where(np.isfinite(x), np.abs(x), np.nan), axis=0)
    a = np.where(np.isnan(a), 0.0, a)
    j = np.where(a > 0, np.floor(np.log10(np.where(a > 0, a, 1.0))) + 1, 0).astype(np.int64)
    j = np.where((a > 0) & (a / 10.0 ** j >= 1), j + 1, j)
    j = np.where((a > 0) & (a / 10.0 ** (j - 1) < 1), j - 1, j)
    return j, x / 10.0 ** j


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,offset,spread", CASES, ids=CASE_IDS)
def test_decimal_matches_numpy(dtype, shape, offset, spread):
    x = make_data(shape, dtype, seed=5, offset=offset, spread=spread, all_nan_col=True)
    j, want = decimal_ref(x.astype(np.float64))
    est = clscale.DecimalScaler()
    y = est.fit_transform(x)
    assert np.array_equal(est.exponent_, j)
    assert_close(est.scale_, 10.0 ** j, 1e-15, "scale_")
    assert_close(y, want, tol(dtype), "fit_transform")
    assert_close(est.inverse_transform(y), x, 1e-6 if dtype == np.float32 else 1e-12, "inverse")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fshape", [(), (6,), (40, 6), (1, 40, 1), (3, 40, 6), (3, 1, 1)],
                         ids=["scalar", "cols", "rows-cols", "1-rows-1", "full", "batch"])
def test_discount_broadcasts_like_numpy(dtype, fshape):
    x = make_data((3, 40, 6), dtype, seed=6)
    f = np.random.default_rng(7).uniform(0.5, 2.0, size=fshape)
    est = clscale.Discount(f)
    y = est.fit_transform(x)
    want = x.astype(np.float64) * f.astype(dtype).astype(np.float64)
    assert_close(y, want, tol(dtype), "discount")
    assert_close(est.inverse_transform(y), x, 1e-6 if dtype == np.float32 else 1e-12, "inverse")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cls,skcls", [(clscale.MinMaxScaler, skp.MinMaxScaler),
                                       (clscale.StandardScaler, skp.StandardScaler)], ids=["minmax", "standard"])
def test_3d_scopes_match_sklearn_per_matrix_and_over_all(dtype, cls, skcls):
    x = make_data((4, 33, 5), dtype, seed=8, offset=1.0)
    per = cls(scope="matrix").fit(x)
    y = per.transform(x)
    for b in range(x.shape[0]):
        ref = sk_ref(skcls, x[b])
        assert_close(y[b], sk_call(ref.transform, x[b]), tol(dtype), f"matrix {b}")
    attr = "data_min_" if cls is clscale.MinMaxScaler else "mean_"
    assert getattr(per, attr).shape == (4, 5)
    whole = cls(scope="batch").fit(x)
    ref = sk_ref(skcls, x.reshape(-1, 5))
    assert_close(whole.transform(x).reshape(-1, 5), sk_call(ref.transform, x.reshape(-1, 5)), tol(dtype), "batch")
    assert getattr(whole, attr).shape == (5,)
    # statistics of 2-D data apply to every matrix of 3-D data
    flat = cls().fit(x.reshape(-1, 5))
    assert_close(flat.transform(x), whole.transform(x), 0.0, "2-D fit on 3-D data")


@pytest.mark.parametrize("dtype", DTYPES)
def test_infinities_are_missing_values(dtype):
    # scikit-learn refuses +-Inf; clscale treats them as NaN: ignored by the
    # fit, passed through by the transform
    x = make_data((100, 4), dtype, seed=9, nan=0.0)
    x[3, 0], x[7, 2] = np.inf, -np.inf
    as_nan = np.where(np.isfinite(x), x, np.nan)
    for cls, skcls in [(clscale.MinMaxScaler, skp.MinMaxScaler), (clscale.StandardScaler, skp.StandardScaler)]:
        y = cls().fit_transform(x)
        assert y[3, 0] == np.inf and y[7, 2] == -np.inf
        ref = sk_ref(skcls, as_nan)
        want = sk_call(ref.transform, as_nan)
        ok = np.isfinite(x)
        assert_close(y[ok], want[ok], tol(dtype), cls.__name__)


@pytest.mark.fp64
@pytest.mark.parametrize("copy", [True, False], ids=["out-of-place", "in-place"])
@pytest.mark.parametrize("cls,skcls", [(clscale.MinMaxScaler, skp.MinMaxScaler),
                                       (clscale.StandardScaler, skp.StandardScaler)], ids=["minmax", "standard"])
def test_near_constant_columns_follow_sklearn(copy, cls, skcls):
    # columns constant up to rounding: scikit-learn divides by 1 there, the
    # library by the tiny range or std; the fused fit_transform redoes them
    x = make_data((3, 50, 5), seed=10, nan=0.02)
    x[1, :, 3] = 1.0 + (np.arange(50) % 2) * 2.0 ** -52  # range 1 ulp: below 10 eps
    x[2, :, 0] = 1e4 + (np.arange(50) % 2) * 1.8e-12  # 1 ulp at 1e4: near-constant variance
    ref = [sk_ref(skcls, x[b]) for b in range(3)]
    want = np.stack([sk_call(ref[b].transform, x[b]) for b in range(3)])
    est = cls(copy=copy)
    given = x.copy()
    y = est.fit_transform(given)
    assert (y is given) == (not copy)
    assert_close(y, want, 1e-9, "fit_transform")
    assert_close(est.transform(x, copy=True), want, 1e-9, "transform")
    assert_close(est.inverse_transform(want, copy=True), x, 1e-12, "inverse")
