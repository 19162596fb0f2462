"""SimpleImputer and SigmaClip against scikit-learn's SimpleImputer and
astropy's sigma_clip(axis=0), on data with missing values, ties, outliers,
a sentinel, 3-D input, and their argument checks."""
import warnings

import numpy as np
import pytest
from sklearn.impute import SimpleImputer as SkImputer

import clscale

astropy_stats = pytest.importorskip("astropy.stats")


def data(rows=200, cols=6, seed=0, dtype=np.float64):
    r = np.random.default_rng(seed)
    x = r.normal(5, 2, (rows, cols))
    x[:, 1] = r.integers(-2, 3, rows)            # ties
    x[r.random(x.shape) < 0.1] = np.nan
    x[3, 0] = 80.0                               # outliers
    x[9, 2] = -60.0
    return x.astype(dtype)


@pytest.mark.fp64
@pytest.mark.parametrize("strategy", ["mean", "median", "most_frequent", "constant"])
def test_imputer_matches_scikit_learn(strategy):
    x = data()
    want = SkImputer(strategy=strategy, fill_value=-1.0).fit(x)
    got = clscale.SimpleImputer(strategy=strategy, fill_value=-1.0)
    y = got.fit_transform(x)
    np.testing.assert_allclose(y, want.transform(x), rtol=1e-12)
    # (newer scikit-learn, 1.9, keeps a constant's statistics_ as objects)
    np.testing.assert_allclose(got.statistics_, np.asarray(want.statistics_, np.float64), rtol=1e-12)
    # transform of other data uses the fitted statistics
    z = data(seed=1)
    np.testing.assert_allclose(got.transform(z), want.transform(z), rtol=1e-12)


@pytest.mark.fp64
def test_imputer_sentinel_and_3d():
    x = np.nan_to_num(data(), nan=-9999.0)
    want = SkImputer(missing_values=-9999.0, strategy="median").fit_transform(x)
    y = clscale.SimpleImputer(missing_values=-9999.0, strategy="median").fit_transform(x)
    np.testing.assert_array_equal(y, want)
    x3 = np.stack([data(seed=2), data(seed=3)])
    y3 = clscale.SimpleImputer(strategy="most_frequent").fit_transform(x3)
    for m in range(2):
        np.testing.assert_array_equal(y3[m], SkImputer(strategy="most_frequent").fit_transform(x3[m]))


def test_imputer_float32_and_all_missing_column():
    x = data(dtype=np.float32)
    x[:, 4] = np.nan
    y = clscale.SimpleImputer(strategy="median").fit_transform(x)
    assert y.dtype == np.float32
    assert np.isnan(y[:, 4]).all()              # kept missing, not dropped
    keep = [0, 1, 2, 3, 5]
    want = SkImputer(strategy="median").fit_transform(x[:, keep].astype(np.float64))
    np.testing.assert_allclose(y[:, keep], want, rtol=1e-6)


@pytest.mark.fp64
@pytest.mark.parametrize("cenfunc,stdfunc,maxiters", [("median", "std", 5), ("mean", "std", None),
                                                      ("median", "mad_std", None), ("median", "std", 1)])
def test_sigma_clip_matches_astropy(cenfunc, stdfunc, maxiters):
    x = data(rows=500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = astropy_stats.sigma_clip(x, sigma=2.5, axis=0, maxiters=maxiters, cenfunc=cenfunc, stdfunc=stdfunc)
    sc = clscale.SigmaClip(2.5, maxiters=maxiters, cenfunc=cenfunc, stdfunc=stdfunc)
    y = sc.fit_transform(x)
    np.testing.assert_array_equal(np.isnan(y), np.ma.getmaskarray(want))
    np.testing.assert_array_equal(y[~np.isnan(y)], x[~np.isnan(y)])
    np.testing.assert_array_equal(sc.clipped_, np.ma.getmaskarray(want).sum(0) - np.isnan(x).sum(0))


@pytest.mark.fp64
@pytest.mark.parametrize("rows", [63, 64, 65, 128, 129, 1000])
@pytest.mark.parametrize("cenfunc,stdfunc,maxiters", [("median", "std", 5), ("mean", "std", None),
                                                      ("median", "mad_std", None)])
def test_sigma_clip_at_each_regime_boundary(rows, cenfunc, stdfunc, maxiters):
    # 19 columns: blocks of eight neighbours (clip_sort.cl's vector path,
    # sorted by a network up to 128 rows) and the columns left over;
    # signed zeros, +-Inf, a constant and an all-NaN column
    x = data(rows=rows, cols=19, seed=rows)
    x[::5, 3] = 0.0
    x[1::5, 3] = -0.0
    x[2, 4] = np.inf
    x[7, 5] = -np.inf
    x[:, 6] = 1.5
    x[:, 7] = np.nan
    kw = dict(sigma=2.5, axis=0, maxiters=maxiters, cenfunc=cenfunc, stdfunc=stdfunc, return_bounds=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, wlo, whi = astropy_stats.sigma_clip(x, **kw)
        got, lo, hi = clscale.sigma_clip(x, **kw)
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
    np.testing.assert_array_equal(got.data, want.data)
    np.testing.assert_allclose(lo, wlo, rtol=1e-12, atol=0)
    np.testing.assert_allclose(hi, whi, rtol=1e-12, atol=0)


def test_sigma_clip_clamp_float32():
    x = data(rows=300, dtype=np.float32)
    y = clscale.SigmaClip(3, mode="clamp", maxiters=None).fit_transform(x)
    assert np.array_equal(np.isnan(y), np.isnan(x))   # nothing masked: clamped
    assert y[3, 0] < 80 and y[9, 2] > -60


@pytest.mark.parametrize("est", [lambda: clscale.SimpleImputer(strategy="mode"),
                                 lambda: clscale.SimpleImputer(strategy="constant", fill_value=np.nan),
                                 lambda: clscale.SigmaClip(0), lambda: clscale.SigmaClip(3, maxiters=0),
                                 lambda: clscale.SigmaClip(3, cenfunc="mode"),
                                 lambda: clscale.SimpleImputer(scope="rows")])
def test_bad_arguments_raise(est):
    with pytest.raises(ValueError):
        est().fit_transform(data(rows=20, dtype=np.float32))
