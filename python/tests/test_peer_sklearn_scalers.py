"""scikit-learn's own cases for MinMaxScaler, StandardScaler and
RobustScaler (learnt from scikit-learn's preprocessing/tests/test_data.py,
written anew; dense data only, as clscale takes), run on clscale and on
scikit-learn side by side: outputs, inverses and fitted attributes within
rounding of scikit-learn's, the same errors. iris, zero-variance and
near-constant features, one row and one column, integers, NaN counted per
feature, partial fits in chunks of 1 to more than the rows, values near
1e-100 and 1e100."""
import warnings

import numpy as np
import pytest
import sklearn.preprocessing as skp
from sklearn.base import clone
from sklearn.datasets import load_iris

import clscale

pytestmark = pytest.mark.fp64  # float64 data, as scikit-learn's cases

IRIS = load_iris().data  # shipped with scikit-learn, nothing downloaded
ZERO_VAR = np.array([[0.0, 1.0, +0.5], [0.0, 1.0, -0.1], [0.0, 1.0, +1.1]])
ZERO_VAR_NEW = np.array([[+0.0, 2.0, 0.5], [-1.0, 1.0, 0.0], [+0.0, 1.0, 1.5]])

PAIRS = [pytest.param((clscale.MinMaxScaler(), skp.MinMaxScaler()), id="minmax"),
         pytest.param((clscale.MinMaxScaler(feature_range=(1, 2)), skp.MinMaxScaler(feature_range=(1, 2))),
                      id="minmax-1-2"),
         pytest.param((clscale.MinMaxScaler(feature_range=(-0.5, 0.6)), skp.MinMaxScaler(feature_range=(-0.5, 0.6))),
                      id="minmax-neg"),
         pytest.param((clscale.StandardScaler(), skp.StandardScaler()), id="standard"),
         pytest.param((clscale.StandardScaler(with_mean=False), skp.StandardScaler(with_mean=False)),
                      id="standard-nomean"),
         pytest.param((clscale.RobustScaler(), skp.RobustScaler()), id="robust"),
         pytest.param((clscale.RobustScaler(quantile_range=(10, 90)), skp.RobustScaler(quantile_range=(10, 90))),
                      id="robust-10-90"),
         pytest.param((clscale.RobustScaler(unit_variance=True), skp.RobustScaler(unit_variance=True)),
                      id="robust-unit")]

ATTRS = ("data_min_", "data_max_", "data_range_", "scale_", "min_", "mean_", "var_", "center_", "n_samples_seen_")


def close(got, want, tol=1e-12):
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


def same_fit(ours, theirs, tol=1e-12):
    for a in ATTRS:
        if hasattr(theirs, a):
            w = getattr(theirs, a)
            g = getattr(ours, a)
            if w is None:
                assert g is None, a
            else:
                close(g, w, tol)


def both(pair, x, new=None):
    """Fit each on x; transform x (and new), and back."""
    ours, theirs = clone(pair[0]), clone(pair[1])
    out = []
    for est in (ours, theirs):
        y = est.fit(x).transform(x)
        out.append((y, est.inverse_transform(y), None if new is None else est.transform(new)))
    same_fit(ours, theirs)
    return out


@pytest.mark.parametrize("pair", PAIRS)
def test_iris(pair):
    (y, back, _), (wy, wback, _) = both(pair, IRIS)
    close(y, wy)
    close(back, wback)
    close(back, IRIS)


@pytest.mark.parametrize("pair", PAIRS)
def test_zero_variance_features_and_new_data(pair):
    (y, back, new), (wy, wback, wnew) = both(pair, ZERO_VAR, ZERO_VAR_NEW)
    close(y, wy)
    close(back, wback)
    close(new, wnew)


@pytest.mark.parametrize("pair", PAIRS)
def test_one_row_one_column_and_a_constant(pair):
    x = np.random.default_rng(0).normal(size=(9, 4))
    for data in (x[:1], x[:, :1], np.ones((5, 1)), x[:1].tolist()):
        (y, back, _), (wy, wback, _) = both(pair, data)
        close(y, wy)
        close(back, wback)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("constant", [0, 1.0, 100.0])
@pytest.mark.parametrize("pair", PAIRS)
def test_constant_features_are_not_scaled(pair, dtype, constant):
    x = np.full((100, 1), constant, dtype=dtype)
    (y, _, _), (wy, _, _) = both(pair, x)
    assert y.dtype == wy.dtype
    close(y, wy)


@pytest.mark.parametrize("n_samples", [10, 100, 10_000])
@pytest.mark.parametrize("average", [1e-10, 1, 1e10])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_near_constant_features_are_held_constant(n_samples, average, dtype):
    # scikit-learn takes a feature whose variance is within float64's
    # rounding of its mean as constant (scale_ 1): clscale must too
    scales = np.array([10.0 ** i for i in range(-30, 20)], dtype=dtype)
    x = np.empty((n_samples, scales.size), dtype=dtype)
    x[: n_samples // 2] = average + scales
    x[n_samples // 2:] = average - scales
    ours = clscale.StandardScaler(with_mean=False).fit(x)
    theirs = skp.StandardScaler(with_mean=False).fit(x)
    held = theirs.scale_ == 1.0
    np.testing.assert_array_equal(ours.scale_[held], 1.0)
    close(ours.scale_, theirs.scale_, 1e-6)
    close(ours.var_, theirs.var_, 1e-6)


@pytest.mark.parametrize("value,n", [(np.log(1e-5), 8), (np.log(1e-5), 10), (1e-100, 10), (1e100, 10)])
def test_constant_columns_of_awkward_values_become_zeros(value, n):
    # scikit-learn's scale() (its test's reference) corrects the mean where
    # StandardScaler does not: for 1e100 its StandardScaler gives -1.9e84
    x = np.full((n, 1), value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # scikit-learn warns on two of them
        want = skp.scale(x)
    got = clscale.StandardScaler().fit_transform(x)
    close(got, want)
    close(got, np.zeros((n, 1)))


def test_identity_without_mean_and_std():
    x = np.array([[0, 1, 3], [5, 6, 0], [8, 0, 10]], dtype=np.float64)
    ours = clscale.StandardScaler(with_mean=False, with_std=False)
    theirs = skp.StandardScaler(with_mean=False, with_std=False)
    close(ours.fit_transform(x), theirs.fit_transform(x))
    close(ours.fit_transform(x), x)
    same_fit(ours, theirs)


@pytest.mark.parametrize("pair", PAIRS)
def test_integers(pair):
    x = np.random.default_rng(1).integers(-20, 20, (30, 5))
    (y, back, _), (wy, wback, _) = both(pair, x)
    assert y.dtype == wy.dtype == np.float64
    close(y, wy)


@pytest.mark.parametrize("with_mean", [True, False])
@pytest.mark.parametrize("with_std", [True, False])
def test_samples_seen_count_nan_per_feature(with_mean, with_std):
    x = np.array([[0, 1, 3], [np.nan, 6, 10], [5, 4, np.nan], [8, 0, np.nan]], dtype=np.float64)
    ours = clscale.StandardScaler(with_mean=with_mean, with_std=with_std).fit(x)
    np.testing.assert_array_equal(ours.n_samples_seen_, [3, 4, 2])
    theirs = skp.StandardScaler(with_mean=with_mean, with_std=with_std).fit(x)
    same_fit(ours, theirs)
    close(ours.transform(x), theirs.transform(x))


@pytest.mark.parametrize("pair", PAIRS)
def test_nan_ignored_by_fit_and_kept_by_transform(pair):
    x = np.random.default_rng(2).normal(3.0, 2.0, (41, 5))
    x[::4, 1] = np.nan
    x[:, 3] = np.nan
    (y, back, _), (wy, wback, _) = both(pair, x)
    close(y, wy)
    close(back, wback)


@pytest.mark.parametrize("cls", [pytest.param((clscale.MinMaxScaler, skp.MinMaxScaler), id="minmax"),
                                 pytest.param((clscale.StandardScaler, skp.StandardScaler), id="standard")])
def test_partial_fit_in_chunks(cls):
    x = np.random.default_rng(3).normal(5.0, 3.0, (61, 4))
    n = x.shape[0]
    for chunk in (1, 2, 50, n, n + 42):
        ours, theirs = cls[0](), cls[1]()
        for s in range(0, n, chunk):
            ours.partial_fit(x[s:s + chunk])
            theirs.partial_fit(x[s:s + chunk])
            assert np.all(ours.n_samples_seen_ == theirs.n_samples_seen_)
        same_fit(ours, theirs, 1e-10)
        same_fit(ours, cls[0]().fit(x), 1e-10)


@pytest.mark.parametrize("feature_range", [(0, 1), (-1, 1)])
def test_minmax_clip(feature_range):
    lo, hi = IRIS.min(axis=0), IRIS.max(axis=0)
    test = np.r_[lo[:2] - 10, hi[2:] + 10][None, :]
    got = clscale.MinMaxScaler(feature_range=feature_range, clip=True).fit(IRIS).transform(test)
    want = skp.MinMaxScaler(feature_range=feature_range, clip=True).fit(IRIS).transform(test)
    close(got, want)
    close(got, [[feature_range[0]] * 2 + [feature_range[1]] * 2])


def test_robust_unit_variance_with_outliers():
    rng = np.random.default_rng(42)
    x = rng.standard_normal((200_000, 1))
    with_outliers = np.vstack([x, np.full((100, 1), 100.0), np.full((100, 1), -100.0)])
    ours = clscale.RobustScaler(quantile_range=(1, 99), unit_variance=True).fit(with_outliers)
    theirs = skp.RobustScaler(quantile_range=(1, 99), unit_variance=True).fit(with_outliers)
    same_fit(ours, theirs)
    assert ours.center_ == pytest.approx(0, abs=1e-2) and ours.scale_ == pytest.approx(1, abs=2e-2)


def test_refused_as_scikit_learn_refuses():
    for bad in [(-1, 90), (-2, -3), (10, 101), (100.5, 101), (90, 50)]:
        with pytest.raises(ValueError):
            skp.RobustScaler(quantile_range=bad).fit(IRIS)
        with pytest.raises(ValueError):
            clscale.RobustScaler(quantile_range=bad).fit(IRIS)
    with pytest.raises(ValueError):
        clscale.MinMaxScaler(feature_range=(2, 1)).fit(IRIS)
    fitted = clscale.StandardScaler().fit(IRIS)
    with pytest.raises(ValueError, match="2D|2-D|dimension"):
        fitted.inverse_transform(IRIS[:, 0])
