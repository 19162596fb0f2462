"""sigma_clip and sigma_clipped_stats with astropy's grow and with callable
cenfunc/stdfunc, against astropy itself: masks equal, bounds within
rounding (bit for bit where both call the same callables), the same
result types and shapes. Also astropy's maxiters=0 (until nothing
changes). Hostile data: outliers next to each other (grown masks meet),
NaN and +-Inf, a constant and an all-NaN column, masked input, integer,
float32 and big-endian data, Quantities, one row, empty and all-masked
data."""

import numpy as np
import pytest

import clscale
from conftest import DTYPES, silenced

astropy_stats = pytest.importorskip("astropy.stats")
pytest.importorskip("scipy.ndimage", reason="astropy's grow (and clscale's) dilates with scipy.ndimage")


def data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(10.0, 2.0, shape)
    x[rng.random(shape) < 0.04] *= 7  # outliers
    x[..., 2:4, 1] = 80.0  # two neighbours: their grown masks overlap
    if shape[-1] > 4:
        x[..., 3] = 10.0  # constant
        x[..., 4] = np.nan  # all missing
    x.flat[5] = np.nan
    x.flat[9] = np.inf
    return x.astype(dtype)


def same_clip(got, want, rtol):
    g, glo, ghi = got
    w, wlo, whi = want
    assert type(g) is type(w), (type(g), type(w))
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
    if isinstance(w, np.ma.MaskedArray):
        np.testing.assert_array_equal(np.ma.getmaskarray(g), np.ma.getmaskarray(w))
        np.testing.assert_array_equal(g.data, w.data)
    else:
        np.testing.assert_array_equal(g, w)
    assert np.shape(glo) == np.shape(wlo) and np.shape(ghi) == np.shape(whi)
    np.testing.assert_allclose(glo, wlo, rtol=rtol, equal_nan=True)
    np.testing.assert_allclose(ghi, whi, rtol=rtol, equal_nan=True)


GROWS = [pytest.param(1, id="grow1"), pytest.param(1.5, id="grow1.5"), pytest.param(True, id="grow-true"),
         pytest.param(2.3, id="grow2.3")]
AXES = [pytest.param(None, id="flat"), pytest.param(0, id="axis0"), pytest.param(-1, id="axis-1"),
        pytest.param((0, 1), id="axes01")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("grow", GROWS)
@pytest.mark.parametrize("axis", AXES)
def test_grow_equals_astropy(dtype, grow, axis):
    # the named functions: each iteration's bounds from the devices
    x = data((23, 9), dtype, 1)
    for kw in (dict(), dict(cenfunc="mean", stdfunc="mad_std", maxiters=None, sigma=2.0)):
        for masked in (True, False):
            same_clip(silenced(clscale.sigma_clip, x, grow=grow, axis=axis, masked=masked, return_bounds=True, **kw),
                      silenced(astropy_stats.sigma_clip, x, grow=grow, axis=axis, masked=masked, return_bounds=True,
                            **kw), 1e-12)


@pytest.mark.parametrize("axis", [pytest.param(None, id="flat"), pytest.param(1, id="axis1"),
                                  pytest.param((1, 2), id="axes12"), pytest.param(0, id="axis0")])
def test_grow_on_a_cube_stays_in_the_clipped_axes(axis):
    x = data((3, 21, 7), np.float64, 2)
    same_clip(silenced(clscale.sigma_clip, x, grow=1.5, axis=axis, sigma=2.5, return_bounds=True),
              silenced(astropy_stats.sigma_clip, x, grow=1.5, axis=axis, sigma=2.5, return_bounds=True), 1e-12)


def test_grow_kernel():
    from clscale._clip_loop import grow_kernel
    # 1: a cross; 1.5: with the diagonals; nothing along an axis not clipped
    np.testing.assert_array_equal(grow_kernel(1, 2, (0, 1)), [[0, 1, 0], [1, 1, 1], [0, 1, 0]])
    assert grow_kernel(1.5, 2, (0, 1)).all()
    np.testing.assert_array_equal(grow_kernel(2, 2, (0,)), [[1], [1], [1], [1], [1]])


CALLABLES = [pytest.param(dict(cenfunc=np.nanmean), id="nanmean"),
             pytest.param(dict(stdfunc=np.nanstd, cenfunc="mean"), id="mean-nanstd"),
             pytest.param(dict(cenfunc=np.nanmedian, stdfunc=lambda a, axis=None: np.nanstd(a, axis=axis, ddof=1)),
                          id="ddof1"),
             pytest.param(dict(cenfunc=np.nanmean, stdfunc="mad_std", maxiters=0), id="mad-maxiters0")]


@pytest.mark.parametrize("dtype", DTYPES + [pytest.param(">f8", id="big-endian"),
                                            pytest.param(np.int32, id="i32")])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("kw", CALLABLES)
def test_callables_equal_astropy(dtype, axis, kw):
    x = data((31, 6), np.float64, 3)
    x = np.nan_to_num(x * 10, posinf=1e4).astype(dtype) if dtype == np.int32 else x.astype(dtype)
    for masked in (True, False):
        same_clip(silenced(clscale.sigma_clip, x, axis=axis, masked=masked, return_bounds=True, sigma=2, **kw),
                  silenced(astropy_stats.sigma_clip, x, axis=axis, masked=masked, return_bounds=True, sigma=2, **kw),
                  1e-6 if "mad_std" in kw.values() else 0)


@pytest.mark.parametrize("kw", [pytest.param(dict(grow=1, axis=1), id="grow"),
                                pytest.param(dict(cenfunc=np.nanmean, axis=0), id="callable-axis"),
                                pytest.param(dict(stdfunc=np.nanstd), id="callable-flat")])
def test_masked_input_copy_and_in_place(kw):
    rng = np.random.default_rng(4)
    base = np.ma.MaskedArray(data((17, 6), np.float64, 4), mask=rng.random((17, 6)) < 0.1)
    for copy in (True, False):
        got, want = base.copy(), base.copy()
        g = silenced(clscale.sigma_clip, got, copy=copy, **kw)
        w = silenced(astropy_stats.sigma_clip, want, copy=copy, **kw)
        np.testing.assert_array_equal(np.ma.getmaskarray(g), np.ma.getmaskarray(w))
        assert np.shares_memory(g.data, got.data) == np.shares_memory(w.data, want.data)


def test_quantity_keeps_its_unit():
    u = pytest.importorskip("astropy.units")
    q = data((15, 5), np.float64, 5) * u.adu
    # astropy 5.2 fails a Quantity with grow and axis=None: an axis here
    for kw in (dict(grow=1, axis=0), dict(cenfunc=np.nanmean)):
        g, glo, ghi = silenced(clscale.sigma_clip, q, return_bounds=True, **kw)
        w, wlo, whi = silenced(astropy_stats.sigma_clip, q, return_bounds=True, **kw)
        np.testing.assert_array_equal(np.ma.getmaskarray(g), np.ma.getmaskarray(w))
        assert glo.unit == u.adu and ghi.unit == u.adu
        np.testing.assert_allclose(glo.value, wlo.value, rtol=1e-12, equal_nan=True)


def test_shapes_of_one_empty_and_all_masked():
    for x in (np.array([3.0]), np.array([[1.0, 2.0, 50.0]]), np.full((4, 1), 7.0)):
        for kw in (dict(grow=1), dict(cenfunc=np.nanmean), dict(grow=1, axis=0)):
            for masked in (True, False):
                same_clip(silenced(clscale.sigma_clip, x, masked=masked, return_bounds=True, **kw),
                          silenced(astropy_stats.sigma_clip, x, masked=masked, return_bounds=True, **kw), 1e-12)
    empty = np.empty((0, 3))
    g = clscale.sigma_clip(empty, grow=1, masked=False)
    assert g.shape == (0, 3)
    allmasked = np.ma.MaskedArray(np.ones(4), mask=True)
    np.testing.assert_array_equal(clscale.sigma_clip(allmasked, cenfunc=np.nanmean, masked=False),
                                  astropy_stats.sigma_clip(allmasked, cenfunc=np.nanmean, masked=False))


@pytest.mark.fp64
@pytest.mark.parametrize("kw", [pytest.param(dict(grow=1), id="grow-flat"),
                                pytest.param(dict(grow=1.5, axis=0), id="grow-axis"),
                                pytest.param(dict(cenfunc=np.nanmean, stdfunc=np.nanstd), id="callables-flat"),
                                pytest.param(dict(cenfunc=np.nanmedian, axis=1), id="callable-axis")])
def test_sigma_clipped_stats_equal_astropy(kw):
    x = data((40, 7), np.float64, 6)
    got = silenced(clscale.sigma_clipped_stats, x, sigma=2.5, **kw)
    want = silenced(astropy_stats.sigma_clipped_stats, x, sigma=2.5, **kw)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-12, equal_nan=True)


@pytest.mark.fp64
@pytest.mark.parametrize("axis", AXES)
def test_maxiters_zero_iterates_until_nothing_changes(axis):
    # astropy's `maxiters or np.inf`: 0 is no limit, on the devices' path too
    x = data((40, 6), np.float64, 7)
    x[:8, 0] = [1e3, 500, 200, 100, 60, 40, 30, 25]  # clipped one after another
    for masked in (True, False):
        same_clip(silenced(clscale.sigma_clip, x, axis=axis, masked=masked, maxiters=0, sigma=2, return_bounds=True),
                  silenced(astropy_stats.sigma_clip, x, axis=axis, masked=masked, maxiters=0, sigma=2,
                        return_bounds=True), 1e-12)


def test_bad_arguments_name_what_is_taken():
    x = data((10, 3), np.float32, 8)
    with pytest.raises(ValueError, match="or a callable"):
        clscale.sigma_clip(x, cenfunc="mode")
    with pytest.raises(ValueError, match="grow must be False or a radius"):
        clscale.sigma_clip(x, grow=-0.5)
    with pytest.raises(ValueError, match="grow"):
        clscale.sigma_clip(x, grow="wide")
