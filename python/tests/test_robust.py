"""RobustScaler and MaxAbsScaler against scikit-learn's, in float64 on the
same values: missing values, constant and all-missing columns, ties,
heavy tails, one row, float32 at a large offset, 3-D per matrix, the
inverse, partial_fit, and bad parameters."""
import warnings

import numpy as np
import pytest
import sklearn.preprocessing as skp

import clscale
from conftest import DTYPES, assert_close, make_data, tol

CASES = [((257, 7), 0.0, 10.0), ((1, 5), 2.0, 1.0), ((300, 1), -3.0, 2.0), ((1000, 6), 1e4, 1.0)]
CASE_IDS = ["257x7", "1x5", "300x1", "1000x6-offset"]


def hostile(shape, dtype, seed, offset, spread):
    x = make_data(shape, dtype, seed=seed, offset=offset, spread=spread, all_nan_col=True)
    if shape[-1] > 2 and shape[0] > 4:
        x[..., 2] = np.round(x[..., 2])           # ties
        x[::5, 0] = offset + 1e3 * spread         # heavy tail
    return x


def sk(cls, x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return cls(**kw).fit(x.astype(np.float64))


def sk_t(f, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(x.astype(np.float64))


ROBUST_KW = [{}, {"quantile_range": (10.0, 90.0)}, {"with_centering": False}, {"with_scaling": False},
             {"unit_variance": True}]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,offset,spread", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("kw", ROBUST_KW, ids=["default", "range", "nocenter", "noscale", "unitvar"])
def test_robust_matches_sklearn(dtype, shape, offset, spread, kw):
    x = hostile(shape, dtype, 3, offset, spread)
    new = hostile(shape, dtype, 4, offset, 2 * spread)
    ref = sk(skp.RobustScaler, x, **kw)
    est = clscale.RobustScaler(**kw).fit(x)
    for a in ("center_", "scale_"):
        want, got = getattr(ref, a), getattr(est, a)
        if want is None or (a == "center_" and not kw.get("with_centering", True)):
            assert got is None
            continue
        # float32 quantiles interpolate between float32 neighbours (numpy's float32 percentile)
        assert_close(got, want, 1e-12 if dtype == np.float64 else 1e-6, a)
    t = tol(dtype)
    y = est.transform(x)
    assert y.dtype == dtype
    assert_close(y, sk_t(ref.transform, x), t, "transform")
    assert_close(est.transform(new), sk_t(ref.transform, new), t, "transform of new data")
    back = est.inverse_transform(y)
    keep = ~np.isnan(y)
    assert_close(np.where(keep, back, np.nan), np.where(keep, x, np.nan), max(1e-9, t) * 10, "inverse")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,offset,spread", CASES, ids=CASE_IDS)
def test_maxabs_matches_sklearn(dtype, shape, offset, spread):
    x = hostile(shape, dtype, 5, offset, spread)
    x[..., 0] = np.where(np.isnan(x[..., 0]), np.nan, 0.0) if shape[-1] > 3 else x[..., 0]  # an all-zero column
    ref = sk(skp.MaxAbsScaler, x)
    est = clscale.MaxAbsScaler().fit(x)
    assert_close(est.max_abs_, ref.max_abs_, 1e-12 if dtype == np.float64 else 1e-6, "max_abs_")
    assert_close(est.scale_, ref.scale_, 1e-12 if dtype == np.float64 else 1e-6, "scale_")
    assert est.n_samples_seen_ == ref.n_samples_seen_
    y = est.transform(x)
    assert_close(y, sk_t(ref.transform, x), tol(dtype), "transform")
    keep = ~np.isnan(y)
    assert_close(np.where(keep, est.inverse_transform(y), np.nan), np.where(keep, x, np.nan),
                 tol(dtype) * max(1.0, abs(offset)), "inverse")


@pytest.mark.parametrize("dtype", DTYPES)
def test_maxabs_partial_fit_matches_one_fit(dtype):
    x = hostile((600, 5), dtype, 6, 0.0, 3.0)
    est = clscale.MaxAbsScaler()
    for part in np.array_split(x, 4):
        est.partial_fit(part)
    ref = sk(skp.MaxAbsScaler, x)
    assert_close(est.max_abs_, ref.max_abs_, 1e-12 if dtype == np.float64 else 1e-6, "max_abs_")
    assert_close(est.transform(x), sk_t(ref.transform, x), tol(dtype), "transform")


@pytest.mark.parametrize("cls", [clscale.RobustScaler, clscale.MaxAbsScaler], ids=["robust", "maxabs"])
def test_per_matrix_equals_each_matrix_alone(cls):
    x = hostile((4, 90, 6), np.float32, 7, 1.0, 4.0)
    y = cls(scope="matrix").fit_transform(x)
    for b in range(x.shape[0]):
        assert_close(y[b], cls().fit_transform(x[b]), 1e-6, f"matrix {b}")
    yb = cls(scope="batch").fit_transform(x)
    assert_close(yb.reshape(-1, 6), cls().fit_transform(x.reshape(-1, 6)), 1e-6, "batch")


def test_bad_parameters_raise_before_work():
    x = hostile((50, 4), np.float64, 8, 0.0, 1.0)
    for qr in [(75, 25), (-1, 50), (10, 101), (1,), "25,75"]:
        with pytest.raises(ValueError, match="quantile range"):
            clscale.RobustScaler(quantile_range=qr).fit(x)
    with pytest.raises(ValueError, match="scope"):
        clscale.MaxAbsScaler(scope="rows").fit(x)
    est = clscale.RobustScaler().fit(x)
    with pytest.raises(ValueError, match="features"):
        est.transform(x[:, :3])


@pytest.mark.parametrize("rows", [1, 2, 64, 65, 128, 129, 300])
def test_robust_fit_by_one_selection_at_regime_boundaries(rows):
    """The fit is one library call (the counts and quantiles of one
    selection): center_ and scale_ are numpy's nanpercentile of the finite
    values bit for bit, at the networks' and sort regime's boundaries, on
    hostile columns (ties, +-Inf, constant, all NaN, one finite value);
    the float64 transform with the fitted robust statistics gives the same
    bits as the restated z-score map a pickled estimator takes."""
    import pickle
    x = hostile((rows, 40), np.float64, 11, 5.0, 3.0)
    x[:, 8] = np.nan
    x[rows // 2, 8] = -2.5                      # one finite value
    if rows > 2:
        x[1, 3], x[2, 3] = np.inf, -np.inf
    est = clscale.RobustScaler().fit(x)
    fin = np.where(np.isfinite(x), x, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        med, lo, hi = (np.nanpercentile(fin, q, axis=0) for q in (50, 25, 75))
    np.testing.assert_array_equal(est.center_, med)
    scale = hi - lo
    scale[scale < 10 * np.finfo(np.float64).eps] = 1.0
    np.testing.assert_array_equal(est.scale_, scale)
    y = est.transform(x)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.transform(x), y)
    np.testing.assert_array_equal(again.inverse_transform(y), est.inverse_transform(y))
