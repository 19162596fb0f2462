"""astropy's own cases for sigma_clip and sigma_clipped_stats (learnt from
astropy's stats/tests/test_sigma_clipping.py, written anew), run on
clscale and on astropy side by side: masks and kept values equal, bounds
within rounding of astropy's, the same types, shapes, copies and views.
Callables, grow, invalid values, empty, fully masked and 5-D data, every
byte order and width astropy's suite tries. (astropy's
AstropyUserWarning on invalid values: test_astropy_warning.py.)"""
import numpy as np
import pytest

import clscale
from conftest import silenced

astropy_stats = pytest.importorskip("astropy.stats")

pytestmark = pytest.mark.fp64  # float64 data, as astropy's cases


def both(*args, **kw):
    return (silenced(clscale.sigma_clip, *args, **kw), silenced(astropy_stats.sigma_clip, *args, **kw))


def same_mask(got, want):
    assert isinstance(got, np.ma.MaskedArray) and got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
    np.testing.assert_array_equal(got.data, want.data)


def normal(n, seed=12345):
    return np.random.default_rng(seed).standard_normal(n)


def test_arguments_change_the_clipping_as_astropys():
    x = normal(10000)
    plain, _ = both(x, sigma=1, maxiters=2)
    assert plain.mask.any() and not plain.mask.all()
    for kw in (dict(stdfunc=np.var), dict(cenfunc=np.mean), dict()):
        got, want = both(x, sigma=1, maxiters=2, **kw)
        same_mask(got, want)
        if kw:
            assert (got.mask != plain.mask).any()
    same_mask(*both(x, sigma=3, maxiters=None))


def test_copy_or_view():
    x = normal(1000, 1)
    for copy in (True, False):
        got = clscale.sigma_clip(x, sigma=3, maxiters=None, copy=copy)
        assert np.shares_memory(got.data, x) is not copy
    ints = np.array([-2, 5, -5, -6, 20, 14, 1])
    for axis in (None, 0):
        for copy in (True, False):
            got, want = both(ints, sigma=1.5, maxiters=3, axis=axis, masked=True, copy=copy)
            same_mask(got, want)
            assert np.shares_memory(got.data, ints) == np.shares_memory(want.data, ints) == (not copy)


def test_along_each_axis():
    rng = np.random.default_rng(2)
    data = np.arange(5) + rng.normal(0.0, 0.05, (5, 5)) + np.diag(np.ones(5))
    for axis in (0, 1, -1):
        got, want = both(data, axis=axis, sigma=2.3)
        same_mask(got, want)
        assert got.count() == want.count()
    same_mask(*both(np.ones((3, 4)), axis=-1))


def test_flattened_unmasked_drops_the_clipped():
    data = np.arange(10.0)
    data[0] = 100
    got, want = both(data, masked=False, axis=None)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, data[1:])


def test_against_scipy_sigmaclip():
    stats = pytest.importorskip("scipy.stats")
    x = normal(10000, 3)
    got, want = both(x, sigma=3, maxiters=None, cenfunc=np.mean)
    same_mask(got, want)
    np.testing.assert_array_equal(got[~got.mask].data, stats.sigmaclip(x, 3, 3)[0])


def test_mask_is_never_a_scalar():
    got = clscale.sigma_clip(np.arange(5), sigma=100.0, maxiters=1)
    assert got.mask.shape == (5,)


def test_mean_by_name_and_by_callable():
    rng = np.random.default_rng(4)
    data = rng.normal(0.0, 0.05, (10, 10))
    data[2, 2] = 1.0e5
    for axis in (None, 0):
        by_name = clscale.sigma_clip(data, sigma=1, maxiters=2, cenfunc="mean", axis=axis)
        by_fn = clscale.sigma_clip(data, sigma=1, maxiters=2, cenfunc=np.nanmean, axis=axis)
        np.testing.assert_array_equal(by_name.mask, by_fn.mask)
        same_mask(by_name, silenced(astropy_stats.sigma_clip, data, sigma=1, maxiters=2, cenfunc="mean", axis=axis))


def test_unknown_function_names():
    for kw in (dict(cenfunc="invalid"), dict(stdfunc="invalid")):
        with pytest.raises(ValueError):
            clscale.sigma_clip(np.arange(5.0), **kw)


def test_invalid_values_are_clipped():
    data = np.ones((5, 5))
    data[2, 2] = 1000
    data[3, 4] = np.nan
    data[1, 1] = np.inf
    for kw in (dict(), dict(axis=0), dict(axis=0, copy=False)):
        got, want = both(data.copy(), **kw)
        same_mask(got, want)
        same_mask(silenced(clscale.sigma_clip, np.ma.MaskedArray(data.copy()), **kw), want)
    data[0, :] = np.nan
    (_, glo, ghi), (_, wlo, whi) = both(data, axis=1, masked=False, return_bounds=True)
    assert np.isnan(glo[0]) and np.isnan(ghi[0])
    np.testing.assert_allclose(glo, wlo, equal_nan=True)


def test_fully_masked_empty_and_empty_masked():
    full = np.ma.MaskedArray([[1.0, 0.0], [0.0, 1.0]], mask=True)
    got = clscale.sigma_clip(full)
    assert np.ma.allequal(got, full) and got.mask.all()
    unmasked = clscale.sigma_clip(full, masked=False)
    assert not isinstance(unmasked, np.ma.MaskedArray) and np.isnan(unmasked).all()
    for data in (full, np.ma.MaskedArray([], mask=[]), np.array([])):
        got, lo, hi = clscale.sigma_clip(data, return_bounds=True)
        assert isinstance(got, np.ma.MaskedArray) and got.shape == data.shape
        assert np.isnan(lo) and np.isnan(hi)


def test_a_tuple_of_axes_of_a_cube():
    data = np.sin(0.78 * np.arange(27)).reshape(3, 3, 3)
    for kw in (dict(cenfunc=np.mean), dict(cenfunc="mean")):
        got, want = both(data, sigma=1.5, maxiters=1, axis=(0, -1), **kw)
        same_mask(got, want)


@pytest.mark.parametrize("axis,bounds_shape", [(0, (4, 5, 6, 7)), (1, (3, 5, 6, 7)), (-1, (3, 4, 5, 6)),
                                               ((1, 3), (3, 5, 7)), ((3, 1), (3, 5, 7)), ((1, 2, 4), (3, 6))],
                         ids=str)
def test_shapes_in_five_dimensions(axis, bounds_shape):
    x = np.random.default_rng(12345).random((3, 4, 5, 6, 7))
    (got, lo, hi), (want, wlo, _) = both(x, axis=axis, return_bounds=True)
    same_mask(got, want)
    assert lo.shape == hi.shape == bounds_shape == wlo.shape
    np.testing.assert_allclose(lo, wlo, rtol=1e-12)


@pytest.mark.parametrize("dtype", [">f2", "<f2", ">f4", "<f4", ">f8", "<f8", "<i4", ">i8"])
def test_byte_orders_and_widths(dtype):
    x = np.random.default_rng(12345).integers(-5, 5, 1000).astype(float)
    x[30] = 100
    ref = clscale.sigma_clip(x, copy=True, masked=False)
    got, want = both(x.astype(dtype), copy=True, masked=False)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, ref)


def test_grow_in_one_two_and_three_dimensions():
    data = np.round(np.random.default_rng(6).standard_normal(100), 2)
    got, want = both(data, sigma=2, maxiters=3, grow=1)
    same_mask(got, want)
    assert got.mask.sum() > 3 * np.count_nonzero(np.abs(data) > 2.5)  # grown
    cube = data.reshape(4, 5, 5)
    same_mask(*both(cube, sigma=2.1, maxiters=1, grow=1.5, axis=(1, 2)))
    cube = cube.copy()
    cube[1, 2, 2] = 100.0  # a sphere of radius 2 around it
    got, want = both(cube, sigma=3.0, maxiters=1, grow=2.0)
    same_mask(got, want)
    assert got.mask[1].sum() >= 13 and got.mask[0, 2, 2] and got.mask[3, 2, 2]


def test_clipped_stats_of_lists_masks_and_mask_values():
    for data, kw in (([0, 1], dict(mask=np.array([True, False]))), ([0, 1], dict(mask_value=0.0)),
                     ([0, 2], dict())):
        got = clscale.sigma_clipped_stats(data, **kw)
        want = astropy_stats.sigma_clipped_stats(data, **kw)
        assert got == want
        assert isinstance(got[1], float)
        assert clscale.sigma_clipped_stats(data, axis=0, **kw) == got
    row = np.arange(10)
    data = np.ma.MaskedArray([row, row, 10 * row])
    got = clscale.sigma_clipped_stats(data, axis=0, sigma=1)
    for g, w in zip(got, astropy_stats.sigma_clipped_stats(data, axis=0, sigma=1)):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got[0], row)


def test_clipped_stats_ddof():
    x = normal(10000)
    x[10] = 1.0e5
    for ddof in (0, 1):
        got = clscale.sigma_clipped_stats(x, std_ddof=ddof)
        want = astropy_stats.sigma_clipped_stats(x, std_ddof=ddof)
        assert got[1] == want[1]
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_clipped_stats_of_a_quantity_and_all_masked():
    u = pytest.importorskip("astropy.units")
    data = np.array([1, 1]) * u.kpc
    assert clscale.sigma_clipped_stats(data) == astropy_stats.sigma_clipped_stats(data)
    for arr, kw in ((np.ma.MaskedArray(np.arange(10), mask=True), dict()),
                    (np.ma.MaskedArray(np.zeros(10), mask=False), dict(mask_value=0.0)),
                    (np.ma.MaskedArray(np.arange(10), mask=False), dict(mask=np.arange(10) < 20))):
        assert clscale.sigma_clipped_stats(arr, **kw) == (np.ma.masked,) * 3


def test_stats_of_no_values_along_the_axis_are_nan_per_slice():
    for shape, axis in (((0, 3), 0), ((0, 3), None), ((4, 0), 1), ((2, 0, 3), 1)):
        x = np.ones(shape)
        got = silenced(clscale.sigma_clipped_stats, x, axis=axis)
        want = silenced(astropy_stats.sigma_clipped_stats, x, axis=axis)
        for g, w in zip(got, want):
            assert np.shape(g) == np.shape(w) and np.all(np.isnan(g)), (shape, axis, got, want)
