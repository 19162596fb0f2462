"""SimpleImputer(strategy="median") bit for bit against scikit-learn's at
every regime of the selection it shares with nanquantile (src/quantiles/
regime.h): one row, the clipping networks' 64 rows and one either side,
the order-statistics networks' 128 and one past, the sort regime, a tall
group; float32 and float64; columns all missing, constant, tied, with
+-Inf (missing for clscale: compared with scikit-learn given NaN there),
a single value, signed zeros."""
import numpy as np
import pytest
from sklearn.impute import SimpleImputer as SkImputer

import clscale

ROWS = [1, 2, 63, 64, 65, 128, 129, 300, 1000, 5000]


def hostile(rows, dtype, seed):
    r = np.random.default_rng(seed)
    x = r.normal(5, 2, (rows, 9))
    x[r.random(x.shape) < 0.1] = np.nan
    x[:, 1] = r.integers(-2, 3, rows)            # ties
    x[:, 2] = np.nan                             # all missing
    x[:, 3] = 4.25                               # constant
    x[::3, 4] = np.inf                           # +-Inf among values
    x[1::5, 4] = -np.inf
    x[:, 5] = np.nan                             # a single value
    x[rows // 2, 5] = -7.5
    x[:, 6] = np.where(r.random(rows) < 0.5, -0.0, 0.0)  # signed zeros
    x[:, 7] = r.normal(1e4, 1e-2, rows)          # far from zero
    x[::2, 8] = np.nan                           # an even count's middle pair
    return x.astype(dtype)


def check(x):
    y = clscale.SimpleImputer(strategy="median").fit_transform(x)
    assert y.dtype == x.dtype
    miss = ~np.isfinite(x)
    empty = miss.all(axis=0)
    assert np.isnan(y[:, empty]).all()          # kept missing, not dropped
    sk = np.where(miss, np.nan, x)[:, ~empty]
    want = SkImputer(strategy="median").fit_transform(sk).astype(x.dtype)
    got = y[:, ~empty]
    bits = np.uint64 if x.dtype == np.float64 else np.uint32
    # a median of signed zeros is a zero either way (numpy's sign follows its sort)
    same = (got.view(bits) == want.view(bits)) | ((got == 0) & (want == 0))
    assert same.all(), f"differ at {np.argwhere(~same)[:5]}: {got[~same][:5]}, scikit-learn {want[~same][:5]}"


@pytest.mark.parametrize("rows", ROWS)
@pytest.mark.parametrize("dtype", [pytest.param(np.float64, marks=pytest.mark.fp64), np.float32])
def test_median_imputation_bit_for_bit(rows, dtype):
    check(hostile(rows, dtype, rows))


@pytest.mark.parametrize("dtype", [pytest.param(np.float64, marks=pytest.mark.fp64), np.float32])
def test_median_imputation_tall_group(dtype):
    x = hostile(400_000, dtype, 7)[:, [0, 1, 4, 8]]
    check(x)
