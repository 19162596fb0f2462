"""FITS-ready input for sigma_clip and sigma_clipped_stats: big-endian
float32/float64 (the byte order of FITS files) and float16 arrays are
clipped as astropy clips them (they were refused with "data must be
float32, float64 or integer"), results in astropy's types; an astropy
Quantity keeps its unit; a FITS file written by astropy.io.fits is read
and clipped without the user converting it."""
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import clscale
from conftest import silenced

astropy_stats = pytest.importorskip("astropy.stats")
u = pytest.importorskip("astropy.units")

DTYPES = [">f8", ">f4", "<f2", ">f2"]
KWS = [dict(), dict(cenfunc="mean", stdfunc="mad_std", sigma=2.5, maxiters=None)]


def data(dtype, shape=(40, 6), seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(100, 5, size=shape)
    x.flat[::7] += rng.choice([-1, 1], size=x.flat[::7].shape) * rng.uniform(60, 200, size=x.flat[::7].shape)
    x[3, 2] = np.nan
    return x.astype(dtype)


def as_clipped(x):
    """The values clscale clips x as: float16 as float32 (astropy's own
    flattened float16 clipping takes the std in float16, which overflows
    past 256: no value clipped)."""
    return x.astype(np.float32) if x.dtype.itemsize == 2 else x


@pytest.mark.fp64
@pytest.mark.parametrize("kw", KWS)
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("dtype", DTYPES)
def test_sigma_clip_like_astropy(dtype, axis, kw):
    x = data(dtype)
    for masked in (True, False):
        got = silenced(clscale.sigma_clip, x, axis=axis, masked=masked, **kw)
        assert got.dtype == silenced(astropy_stats.sigma_clip, x, axis=axis, masked=masked, **kw).dtype
        ref = silenced(astropy_stats.sigma_clip, as_clipped(x), axis=axis, masked=masked, **kw)
        got = got.astype(ref.dtype)
        assert got.shape == ref.shape
        if masked:
            assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(ref))
            assert_array_equal(got.data, ref.data)
        else:
            assert_array_equal(got, ref)
    assert_array_equal(x, data(dtype))  # the data unchanged


@pytest.mark.fp64
@pytest.mark.parametrize("kw", KWS)
@pytest.mark.parametrize("axis", [None, 0])
@pytest.mark.parametrize("dtype", DTYPES)
def test_sigma_clipped_stats_like_astropy(dtype, axis, kw):
    x = data(dtype, seed=1)
    types = [np.asarray(r).dtype for r in silenced(astropy_stats.sigma_clipped_stats, x, axis=axis, **kw)]
    ref = silenced(astropy_stats.sigma_clipped_stats, as_clipped(x), axis=axis, **kw)
    got = silenced(clscale.sigma_clipped_stats, x, axis=axis, **kw)
    rtol = 1e-3 if np.dtype(dtype).itemsize == 2 else 1e-6
    for g, r, t in zip(got, ref, types):
        assert_allclose(g, r, rtol=rtol)
        assert np.asarray(g).dtype == t


@pytest.mark.fp64
@pytest.mark.parametrize("axis", [None, 0])
def test_quantity_keeps_its_unit(axis):
    x = data(np.float64, seed=2) * u.adu
    ref = silenced(astropy_stats.sigma_clipped_stats, x, axis=axis)
    got = silenced(clscale.sigma_clipped_stats, x, axis=axis)
    for g, r in zip(got, ref):
        assert isinstance(g, u.Quantity) and g.unit == u.adu
        assert_allclose(g.value, r.value, rtol=1e-9)
    y, lo, hi = silenced(clscale.sigma_clip, x, axis=axis, masked=False, return_bounds=True)
    yr, lor, hir = silenced(astropy_stats.sigma_clip, x, axis=axis, masked=False, return_bounds=True)
    assert isinstance(y, u.Quantity) and y.unit == u.adu
    assert_array_equal(y.value, yr.value)
    assert lo.unit == u.adu and hi.unit == u.adu
    assert_allclose([lo.value, hi.value], [lor.value, hir.value], rtol=1e-9)
    # masked: a masked array of the Quantity (astropy's with an axis is a
    # Quantity without the mask)
    m = silenced(clscale.sigma_clip, x, axis=axis)
    ref = silenced(astropy_stats.sigma_clip, x.value, axis=axis)
    assert_array_equal(np.ma.getmaskarray(m), np.ma.getmaskarray(ref))
    assert np.ma.getdata(m).unit == u.adu


@pytest.mark.fp64
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fits_file_clipped(tmp_path, dtype):
    fits = pytest.importorskip("astropy.io.fits")
    path = tmp_path / "image.fits"
    fits.PrimaryHDU(data(dtype, shape=(64, 48), seed=3)).writeto(path)
    with fits.open(path) as hdul:
        img = hdul[0].data
        assert not img.dtype.isnative  # FITS is big-endian
        ref = silenced(astropy_stats.sigma_clip, img, sigma=3, maxiters=5)
        got = silenced(clscale.sigma_clip, img, sigma=3, maxiters=5)
        assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(ref))
        ref_stats = silenced(astropy_stats.sigma_clipped_stats, img, sigma=3)
        got_stats = silenced(clscale.sigma_clipped_stats, img, sigma=3)
        assert_allclose(got_stats, ref_stats, rtol=1e-6)
        ref_rows = silenced(astropy_stats.sigma_clipped_stats, img, sigma=3, axis=1)
        got_rows = silenced(clscale.sigma_clipped_stats, img, sigma=3, axis=1)
        assert_allclose(got_rows, ref_rows, rtol=1e-6)
