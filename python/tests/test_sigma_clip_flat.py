"""sigma_clip(axis=None, masked=False) and sigma_clipped_stats(axis=None)
against astropy's: the flattened case keeps the values within the bounds
of every iteration (astropy's _sigmaclip_noaxis), where the library's one
call keeps those within the last bounds (astropy's fast path, with an axis)
and took back values clipped earlier; and a clipping that empties the kept
set gives NaN statistics, as astropy's."""
import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import clscale

from conftest import DTYPES, silenced

astropy_stats = pytest.importorskip("astropy.stats")

MEAN_MAD = dict(sigma=2, maxiters=None, cenfunc="mean", stdfunc="mad_std")


@pytest.mark.parametrize("dtype", DTYPES)
def test_issue_example(dtype):
    x = np.array([2, 4, 5, 9, 0, 70], dtype=dtype)
    ref = astropy_stats.sigma_clip(x, axis=None, masked=False, **MEAN_MAD)
    got = clscale.sigma_clip(x, axis=None, masked=False, **MEAN_MAD)
    assert_array_equal(ref, [5, 9])
    assert_array_equal(got, ref)
    assert got.dtype == ref.dtype
    assert_allclose(clscale.sigma_clipped_stats(x, axis=None, **MEAN_MAD), (7.0, 7.0, 2.0), rtol=1e-6)
    # with an axis astropy keeps the values within the last bounds: 2 and 4 come back
    assert_array_equal(clscale.sigma_clip(x, axis=0, masked=False, **MEAN_MAD),
                       astropy_stats.sigma_clip(x, axis=0, masked=False, **MEAN_MAD))


@pytest.mark.parametrize("dtype", DTYPES)
def test_everything_clipped_gives_nan(dtype):
    x = np.array([1, 1, 1, 1, 5, 9], dtype=dtype)  # mad_std 0 about the median, mean 3
    kw = dict(MEAN_MAD, sigma=1)
    ref, rlo, rhi = silenced(astropy_stats.sigma_clip, x, axis=None, masked=False, return_bounds=True, **kw)
    got, lo, hi = silenced(clscale.sigma_clip, x, axis=None, masked=False, return_bounds=True, **kw)
    assert ref.size == 0 and got.size == 0 and got.dtype == ref.dtype
    assert np.isnan(rlo) and np.isnan(lo) and np.isnan(rhi) and np.isnan(hi)
    ref = silenced(astropy_stats.sigma_clipped_stats, x, axis=None, **kw)
    with pytest.warns(RuntimeWarning):
        got = clscale.sigma_clipped_stats(x, axis=None, **kw)
    assert all(np.isnan(v) for v in ref)
    assert all(np.isnan(v) for v in got)
    assert [np.asarray(v).dtype for v in got] == [np.asarray(v).dtype for v in ref]


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_against_astropy(dtype):
    rng = np.random.default_rng(5)
    for trial in range(40):
        x = rng.standard_normal((int(rng.integers(3, 8)), int(rng.integers(1, 6))))
        x[rng.random(x.shape) < 0.2] *= rng.uniform(3, 30)
        if trial % 3 == 0:
            x = np.round(x)
        x = x.astype(dtype)
        for cen, std in itertools.product(["mean", "median"], ["std", "mad_std"]):
            kw = dict(sigma=float(rng.choice([1.5, 2.5])), maxiters=[None, 1, 3][trial % 3], cenfunc=cen,
                      stdfunc=std)
            ref, rlo, rhi = silenced(astropy_stats.sigma_clip, x, axis=None, masked=False, return_bounds=True,
                                  **kw)
            got, lo, hi = silenced(clscale.sigma_clip, x, axis=None, masked=False, return_bounds=True, **kw)
            assert_array_equal(got, ref, err_msg=f"{kw} {x.tolist()}")
            assert got.dtype == ref.dtype
            assert_allclose([lo, hi], [rlo, rhi], rtol=1e-5, equal_nan=True)
            mref = silenced(astropy_stats.sigma_clip, x, axis=None, **kw)
            mgot = silenced(clscale.sigma_clip, x, axis=None, **kw)
            assert_array_equal(mgot.mask, mref.mask, err_msg=f"{kw} {x.tolist()}")
            assert_allclose(silenced(clscale.sigma_clipped_stats, x, axis=None, **kw),
                            silenced(astropy_stats.sigma_clipped_stats, x, axis=None, **kw), rtol=1e-5, atol=1e-6,
                            equal_nan=True, err_msg=f"{kw} {x.tolist()}")


@pytest.mark.fp64
def test_masked_and_integer_input():
    x = np.ma.MaskedArray([[2, 4, 5], [9, 0, 70], [3, 3, 500]], mask=[[0, 0, 0], [0, 0, 0], [0, 0, 1]])
    ref = astropy_stats.sigma_clip(x, axis=None, masked=False, **MEAN_MAD)
    got = clscale.sigma_clip(x, axis=None, masked=False, **MEAN_MAD)
    assert_array_equal(got, ref)
    assert got.dtype == ref.dtype  # the data's integers
    assert_allclose(clscale.sigma_clipped_stats(x, axis=None, **MEAN_MAD),
                    astropy_stats.sigma_clipped_stats(x, axis=None, **MEAN_MAD), rtol=1e-12)
