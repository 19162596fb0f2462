"""The peers' version differences (clscale/_peers.py), each way whatever
version is installed: the switch is set both ways and the result compared
with what that version of the peer gives (astropy 5.2 / numpy 1.24 as
Debian 12 has them; astropy 8 / numpy 2.4 from the package index), and the
switch itself with the installed peer."""
import numpy as np
import pytest

import clscale
from clscale import _functions, _peers
from conftest import quiet, same

pytestmark = pytest.mark.fp64  # astropy's float64 bounds, numpy's float64 interpolation


@pytest.fixture(params=[True, False], ids=["newer", "older"])
def astropy_newer(request, monkeypatch):
    monkeypatch.setattr(_peers, "_astropy_keeps_float32", lambda: request.param)
    monkeypatch.setattr(_functions, "astropy_keeps_last_bounds", lambda: request.param)
    return request.param


def test_switches_follow_the_installed_peers():
    x = np.array([2.5, 3.5, 6.25, 0.5, 5.75], np.float32)
    # numpy 2 gives float32 quantiles of float32 data at a Python float, interpolated in float32
    assert _peers.numpy_interpolates_float32() == (np.nanquantile(x, 0.3).dtype == np.float32)
    astropy_stats = pytest.importorskip("astropy.stats")
    got = astropy_stats.sigma_clip(np.arange(3, dtype=np.float32), axis=0, masked=False)
    assert _peers.clip_dtype(np.float32) == got.dtype
    _, lo, _ = astropy_stats.sigma_clip(np.array([0.0, 0, 0, 1, 1]), axis=0, cenfunc="mean", stdfunc="mad_std",
                                        return_bounds=True)
    assert _peers.astropy_keeps_last_bounds() == bool(np.isfinite(lo))
    assert _peers.normalize_axis_index(-1, 3) == 2
    with pytest.raises(_peers.AxisError):
        _peers.normalize_axis_index(3, 3)


@pytest.mark.parametrize("grow", [False, 1.5], ids=["fast", "grow"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
def test_unmasked_result_type(astropy_newer, dtype, grow):
    rng = np.random.default_rng(3)
    x = rng.normal(100, 5, (40, 6))
    x[::9, 2] = 400
    x = x.astype(dtype)
    masked = quiet(clscale.sigma_clip, x, axis=0, grow=grow)
    got = quiet(clscale.sigma_clip, x, axis=0, grow=grow, masked=False)
    # newer astropy: the data's float type, integers as float32; older: float64
    want_type = np.float64 if not astropy_newer or dtype == np.float64 else np.float32
    assert got.dtype == want_type
    want = np.where(np.ma.getmaskarray(masked), np.nan, x.astype(want_type))
    np.testing.assert_array_equal(got, want)
    assert np.ma.getmaskarray(masked)[::9, 2].all()
    # the statistics with an axis: in the values' type
    stats = quiet(clscale.sigma_clipped_stats, x, axis=0, grow=grow)
    assert all(np.asarray(s).dtype == want_type for s in stats)
    rtol = 1e-12 if want_type == np.float64 else 1e-6
    np.testing.assert_allclose(stats[0], np.nanmean(want, axis=0, dtype=np.float64), rtol=rtol)


def test_a_column_clipped_whole(astropy_newer):
    # a mean centre and a zero MAD: the first bounds (0.4, 0.4) clip all of column 0
    x = np.array([[0.0, 5], [0, 6], [0, 5], [1, 6], [1, 5], [0, 5.5]])
    kw = dict(axis=0, cenfunc="mean", stdfunc="mad_std", maxiters=None)
    got, lo, hi = quiet(clscale.sigma_clip, x, return_bounds=True, **kw)
    unmasked = quiet(clscale.sigma_clip, x, masked=False, **kw)
    mask = np.ma.getmaskarray(got)
    assert not mask[:, 1].any() and np.isfinite([lo[1], hi[1]]).all()
    if astropy_newer:  # its last bounds kept, every value masked
        assert mask[:, 0].all() and np.isnan(unmasked[:, 0]).all()
        np.testing.assert_allclose([lo[0], hi[0]], [1 / 3, 1 / 3], rtol=1e-12)
    else:  # NaN bounds, which clip nothing
        assert not mask[:, 0].any() and np.isnan([lo[0], hi[0]]).all()
        np.testing.assert_array_equal(unmasked[:, 0], x[:, 0])
    mean, med, std = quiet(clscale.sigma_clipped_stats, x, **kw)
    assert np.isnan(mean[0]) == astropy_newer and np.isfinite(mean[1])
    astropy_stats = pytest.importorskip("astropy.stats")
    if astropy_newer == _peers.astropy_keeps_last_bounds():
        want, wlo, whi = quiet(astropy_stats.sigma_clip, x, return_bounds=True, **kw)
        np.testing.assert_array_equal(mask, np.ma.getmaskarray(want))
        np.testing.assert_allclose(lo, wlo, rtol=1e-12, equal_nan=True)
        np.testing.assert_allclose(hi, whi, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("float32_lerp", [True, False], ids=["numpy2", "numpy1"])
def test_float32_quantiles(monkeypatch, float32_lerp):
    monkeypatch.setattr(_functions, "numpy_interpolates_float32", lambda: float32_lerp)
    rng = np.random.default_rng(5)
    x = rng.normal(5, 2, (57, 4)).astype(np.float32)
    x[3, 1] = np.nan
    got = quiet(clscale.nanquantile, x, 0.37, axis=0)
    if float32_lerp:  # numpy's own float32 interpolation
        same(got, quiet(np.nanquantile, x, 0.37, axis=0))
    else:  # numpy 1's: float64 interpolation, in the dtype the installed numpy gives
        want = quiet(np.nanquantile, x.astype(np.float64), 0.37, axis=0)
        same(got, want.astype(quiet(np.nanquantile, x, 0.37, axis=0).dtype))
