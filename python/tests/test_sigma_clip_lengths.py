"""sigma_clip along columns of every length the clipping kernels tell
apart, against astropy's: the sorting networks' last length (64) and one
past, clip_sort.cl's vector network (128) and one past, its sort of whole
columns (a few hundred kept values), its buckets by high bits sorted only
where read (513 to 16383 kept values: S_LAZY_MIN, S_WIDE_MIN) and its
buckets by value past them (s_lin), sorted only where read too. Masks equal astropy's value for value, bounds within rounding (the
kernels sum the kept values in another order than numpy), for centre
median and mean, spread std and mad_std, maxiters 5 and None. The columns
hold what makes a partition by high bits go wrong: values on both sides of
a power of two and of zero, far outliers, ties, signed zeros, +-Inf, a
constant, an all-NaN and a single-value column."""
import numpy as np
import pytest

import clscale
from conftest import DTYPES, silenced

astropy_stats = pytest.importorskip("astropy.stats")

LENGTHS = [63, 64, 65, 128, 129, 300, 520, 600, 1000, 5000, 16383, 16384, 16385]
OPTIONS = [dict(cenfunc="median", stdfunc="std", maxiters=None),
           dict(cenfunc="median", stdfunc="std", maxiters=5),
           dict(cenfunc="mean", stdfunc="std", maxiters=None),
           dict(cenfunc="median", stdfunc="mad_std", maxiters=None),
           dict(cenfunc="mean", stdfunc="mad_std", maxiters=5)]


def columns(rows, dtype, seed):
    rng = np.random.default_rng(seed)
    x = 10 + 2 * rng.standard_normal((rows, 14))
    x[rng.random(x.shape) < 0.01] = np.nan
    x[rng.random(x.shape) < 0.003] *= 50           # far outliers: the high bits vary
    x[:, 1] = 5.0                                  # constant
    x[:, 2] = np.round(x[:, 2])                    # ties
    x[: rows // 3, 3] = -0.0                       # signed zeros among values
    x[rows // 3: rows // 2, 3] = 0.0
    x[:, 4] = np.nan                               # nothing kept
    x[::3, 5] = np.inf                             # +-Inf are missing
    x[1::7, 5] = -np.inf
    x[:, 6] = 2 + 0.5 * (x[:, 6] - 10)             # across a power of two
    x[:, 7] = x[:, 7] - 10                         # across zero: the sign bit varies
    x[:, 8] = np.round(x[:, 8] * 4) / 4 - 10       # ties across zero
    x[:, 9] = np.nan
    x[rows // 2, 9] = 3.0                          # a single value
    # a large offset (float32: 1e4, where its spacing is still far below
    # the spread; at 1e8 the values are a few multiples of 8 apart and
    # astropy's float32 means round differently from any other order)
    x[:, 10] = (1e8 if dtype == np.float64 else 1e4) + x[:, 10]
    x[:, 11] = np.exp(x[:, 11] - 10)               # a long right tail
    x[: rows // 2, 12] = 1.0                       # half one value
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows", LENGTHS)
def test_masks_and_bounds_as_astropys_at_every_length(rows, dtype):
    x = columns(rows, dtype, rows)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for kw in OPTIONS:
        got, glo, ghi = silenced(clscale.sigma_clip, x, axis=0, return_bounds=True, **kw)
        want, wlo, whi = silenced(astropy_stats.sigma_clip, x, axis=0, return_bounds=True, **kw)
        np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want), err_msg=str(kw))
        np.testing.assert_array_equal(got.data, want.data)
        np.testing.assert_allclose(glo, wlo, rtol=tol, atol=tol, equal_nan=True, err_msg=str(kw))
        np.testing.assert_allclose(ghi, whi, rtol=tol, atol=tol, equal_nan=True, err_msg=str(kw))
