"""clscale.nanquantile, nanpercentile, nanmedian and sigma_clip against
numpy's and astropy's functions on the same arguments: quantiles and
medians bit for bit (float64 results; nanmedian in the data's dtype),
masks equal to astropy's, bounds within rounding of astropy's on the
float64 values. Hostile data: NaN, all-NaN and constant columns, +-Inf
(numpy counts them: those columns go to numpy), one row, short (one
kernel) and long (counting passes) columns, float32 far from zero, every
axis form, keepdims, more than 8 quantiles."""
import warnings

import numpy as np
import pytest

import clscale
from conftest import DTYPES, FP64, make_data, quiet, same

# numpy 2 has it in numpy.exceptions only (numpy >= 1.25 in both places)
AxisError = np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError

astropy_stats = pytest.importorskip("astropy.stats")
# newer astropy (8, not 5.2) clips float32 data and integers as float32 (5.2: as float64)
astropy_keeps_float32 = (astropy_stats.sigma_clip(np.arange(3, dtype=np.float32), axis=0, masked=False).dtype
                         == np.float32)


def hostile(shape, dtype, seed, offset=3.0):
    x = make_data(shape, np.float64, seed=seed, offset=offset, spread=5.0, all_nan_col=True)
    x[..., 2] = np.round(x[..., 2])  # ties
    return x.astype(dtype)


SHAPES = [pytest.param((60, 9), id="60x9"), pytest.param((1, 5), id="1x5"), pytest.param((300, 7), id="300x7"),
          pytest.param((4, 50, 6), id="4x50x6")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_nanquantile_equals_numpy(dtype, shape):
    x = hostile(shape, dtype, 1)
    for axis in [0, None, -1] + ([1, (0, 2)] if len(shape) == 3 else []):
        # a 2-D q only where numpy 1.24's nanquantile puts q's axes in front (its other axes
        # interleave them, unlike its quantile; clscale follows quantile's documented shape)
        qs = (0.5, [0.0, 0.25, 0.75, 1.0]) + ((np.array([[0.1, 0.9], [0.33, 0.5]]),) if axis in (0, None) else ())
        for q in qs:
            want = quiet(np.nanquantile, x, q, axis=axis)
            same(quiet(clscale.nanquantile, x, q, axis=axis), want)
        same(quiet(clscale.nanquantile, x, 0.3, axis=axis, keepdims=True),
             quiet(np.nanquantile, x, 0.3, axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", DTYPES)
def test_nanpercentile_many_quantiles_and_infinities(dtype):
    x = hostile((70, 8), dtype, 2)
    x[3, 0], x[5, 0], x[9, 4] = np.inf, -np.inf, np.inf  # numpy ranks them: numpy's columns
    x[:, 6] = np.inf
    q = np.linspace(0, 100, 13)  # more than the library's 8 per call
    same(quiet(clscale.nanpercentile, x, q, axis=0), quiet(np.nanpercentile, x, q, axis=0))
    same(quiet(clscale.nanpercentile, x, 42.0), quiet(np.nanpercentile, x, 42.0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_nanmedian_equals_numpy(dtype, shape):
    x = hostile(shape, dtype, 3, offset=1e4)  # float32 at 1e4: the mean of the middle two rounds
    for axis in [0, None, -1] + ([1, (0, 2)] if len(shape) == 3 else []):
        same(quiet(clscale.nanmedian, x, axis=axis), quiet(np.nanmedian, x, axis=axis))
        same(quiet(clscale.nanmedian, x, axis=axis, keepdims=True),
             quiet(np.nanmedian, x, axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows", [128, 129, 300, 1000, 65536, 65537])
def test_nanquantile_at_the_selections_lengths(dtype, rows):
    # the networks' last length and one past; the sort regime's selection
    # in one launch (ranks from a table by count, up to 65536 rows) and in
    # two (65537); ties, a constant, a single-value and an all-NaN column
    x = hostile((rows, 9), dtype, 4)
    x[:, 3] = 7.0
    x[1:, 4] = np.nan
    q = [0.0, 0.25, 0.5, 0.75, 1.0]
    same(quiet(clscale.nanquantile, x, q, axis=0), quiet(np.nanquantile, x, q, axis=0))
    same(quiet(clscale.nanmedian, x, axis=0), quiet(np.nanmedian, x, axis=0))


@pytest.mark.fp64
def test_integers_and_scalars():
    x = np.random.default_rng(4).integers(-50, 50, (33, 5))
    same(clscale.nanmedian(x, axis=0), np.nanmedian(x, axis=0))
    same(clscale.nanquantile(x, 0.37, axis=0), np.nanquantile(x, 0.37, axis=0))
    got, want = clscale.nanmedian(x), np.nanmedian(x)
    assert type(got) is type(want) and got == want


def test_all_nan_column_warns_as_numpy():
    x = make_data((20, 4), np.float32, seed=5, all_nan_col=True)
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        got = clscale.nanmedian(x, axis=0)
    assert np.isnan(got[-1]) and not np.isnan(got[:-1]).any()


def test_bad_arguments():
    x = make_data((10, 3), np.float32, seed=6)
    with pytest.raises(ValueError, match=r"range \[0, 1\]"):
        clscale.nanquantile(x, 1.5)
    with pytest.raises(ValueError, match=r"range \[0, 100\]"):
        clscale.nanpercentile(x, -1)
    with pytest.raises(AxisError):
        clscale.nanmedian(x, axis=2)
    with pytest.raises(ValueError, match="repeated"):
        clscale.nanmedian(x, axis=(0, 0))
    with pytest.raises(ValueError, match="cenfunc must be 'median', 'mean'.*or a callable"):
        clscale.sigma_clip(x, cenfunc="nanmean")  # a callable is taken (test_sigma_clip_grow_callables.py)
    with pytest.raises(ValueError, match="stdfunc must be 'std', 'mad_std'"):
        clscale.sigma_clip(x, stdfunc="var")
    with pytest.raises(ValueError, match="grow"):
        clscale.sigma_clip(x, grow=-1)
    with pytest.raises(ValueError, match="sigma_lower"):
        clscale.sigma_clip(x, sigma=0)
    with pytest.raises(ValueError, match="maxiters"):
        clscale.sigma_clip(x, maxiters=-2)


def astro(x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return astropy_stats.sigma_clip(x, **kw)


CLIPS = [pytest.param(dict(), id="defaults"), pytest.param(dict(sigma=2.5, maxiters=None), id="to-convergence"),
         pytest.param(dict(sigma=2, cenfunc="mean", stdfunc="mad_std", maxiters=3), id="mean-mad"),
         pytest.param(dict(sigma_lower=1.5, sigma_upper=2.0, maxiters=1), id="asymmetric")]


def outliers(shape, dtype, seed, offset=10.0):
    rng = np.random.default_rng(seed)
    x = rng.normal(offset, 2.0, shape)
    x[rng.random(shape) < 0.05] *= 8  # outliers
    x[rng.random(shape) < 0.05] = np.nan
    x[..., 1] = offset  # constant
    x[..., -1] = np.nan  # all missing
    x.flat[7] = np.inf
    x.flat[11] = -np.inf
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [pytest.param((60, 40), id="60x40"), pytest.param((200, 9), id="200x9"),
                                   pytest.param((5, 30, 8), id="5x30x8")])
@pytest.mark.parametrize("opts", CLIPS)
def test_sigma_clip_masks_equal_astropy(dtype, shape, opts):
    x = outliers(shape, dtype, 7)
    for axis in [0, None] + ([1, (0, 1)] if len(shape) == 3 else [1]):
        want, wlo, whi = astro(x, axis=axis, return_bounds=True, **opts)
        got, lo, hi = clscale.sigma_clip(x, axis=axis, return_bounds=True, **opts)
        assert isinstance(got, np.ma.MaskedArray)
        np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want), err_msg=f"axis {axis}")
        np.testing.assert_array_equal(got.data, x)
        # the bounds: astropy's on the float64 values (the float64 reference), float64 within
        # 1e-12, float32 within 1e-5 of max(1, |bound|) (DESIGN.md's promise; astropy's own
        # float32 arithmetic is further off far from zero)
        _, rlo, rhi = astro(x.astype(np.float64), axis=axis, return_bounds=True, **opts)
        eps = 1e-12 if dtype == np.float64 else 1e-5
        for g, w in ((lo, rlo), (hi, rhi)):
            g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
            assert g.shape == w.shape
            both = np.isnan(g) & np.isnan(w)
            np.testing.assert_allclose(np.where(both, 0, g), np.where(both, 0, w), rtol=eps, atol=eps)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sigma_clip_unmasked_copy_and_in_place(dtype):
    x = outliers((64, 12), dtype, 8)
    want = astro(x, axis=0, masked=False, maxiters=None)
    got = clscale.sigma_clip(x, axis=0, masked=False, maxiters=None)
    assert got.dtype == want.dtype  # float64, as astropy's copy
    np.testing.assert_array_equal(got, want)
    y = x.copy()
    res = clscale.sigma_clip(y, axis=0, masked=False, copy=False, maxiters=None)
    assert res is y
    np.testing.assert_array_equal(y, astro(x.copy(), axis=0, masked=False, copy=False, maxiters=None))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sigma_clip_masked_copy_shares_or_not(dtype):
    # the masked result's mask is the library's (a byte per value, out of the
    # devices); its data a copy of x, or x itself with copy=False, as astropy's
    x = outliers((5, 30, 8), dtype, 12)
    want = astro(x, axis=1, maxiters=None)
    for copy in (True, False):
        got = clscale.sigma_clip(x, axis=1, maxiters=None, copy=copy)
        assert np.shares_memory(got.data, x) is (not copy)
        assert got.mask.dtype == np.bool_ and got.mask.shape == x.shape
        np.testing.assert_array_equal(got.mask, np.ma.getmaskarray(want))
        np.testing.assert_array_equal(got.data, x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sigma_clip_masked_data_as_astropys_copy(dtype):
    # a C-contiguous input's copy is written by the devices beside the mask
    # (the library's CLS_CLIP_KEEP); other layouts are copied by numpy: the
    # same values, dtype and memory order as astropy's copy either way
    x = outliers((6, 40, 9), dtype, 13)
    for arr in (x, np.asfortranarray(x), x[:, ::2]):
        for axis in (1, (0, 2), None):
            want = astro(arr, axis=axis, maxiters=None)
            got = clscale.sigma_clip(arr, axis=axis, maxiters=None)
            assert got.data.dtype == arr.dtype and not np.shares_memory(got.data, arr)
            assert got.data.flags.c_contiguous == want.data.flags.c_contiguous
            assert got.data.flags.f_contiguous == want.data.flags.f_contiguous
            np.testing.assert_array_equal(got.mask, np.ma.getmaskarray(want), err_msg=f"axis {axis}")
            assert got.data.tobytes() == np.ascontiguousarray(arr).tobytes()


@pytest.mark.fp64
def test_sigma_clip_integers_and_scalar_bounds():
    x = np.random.default_rng(9).integers(0, 100, 500)
    x[::50] = 10000
    got, lo, hi = clscale.sigma_clip(x, return_bounds=True)
    want, wlo, whi = astro(x, return_bounds=True)
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
    assert isinstance(lo, float) and isinstance(hi, float)
    assert abs(lo - wlo) <= 1e-9 * abs(wlo) and abs(hi - whi) <= 1e-9 * abs(whi)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sigma_clip_flattened_unmasked_and_masked_input(dtype):
    # axis=None, masked=False: astropy returns the values kept, flattened, in the data's type
    x = outliers((40, 6), dtype, 10)
    got, want = clscale.sigma_clip(x, masked=False), astro(x, masked=False)
    same(got, want)
    # masked input: its masked values are left out, and stay masked
    mx = np.ma.MaskedArray(x, mask=np.abs(x - 10) > 5)
    got, want = clscale.sigma_clip(mx, axis=0), astro(mx, axis=0)
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
    np.testing.assert_array_equal(got.data, want.data)


STATS = [pytest.param(dict(), id="flat"), pytest.param(dict(axis=0), id="axis0"),
         pytest.param(dict(axis=1, std_ddof=1), id="axis1-ddof"),
         pytest.param(dict(axis=0, mask_value=10.0, sigma=2.5, maxiters=None), id="mask-value"),
         pytest.param(dict(axis=(0, 1), cenfunc="mean", stdfunc="mad_std"), id="mean-mad")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("opts", STATS)
def test_sigma_clipped_stats_equal_astropy(dtype, opts):
    x = outliers((5, 30, 8), dtype, 11)
    x[2, 4, 3] = 10.0  # a mask_value
    if "axis" not in opts:
        x = x[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = astropy_stats.sigma_clipped_stats(x, **opts)
        got = clscale.sigma_clipped_stats(x, **opts)
    # the median bit for bit; mean and std from the library's moments, within rounding
    # (astropy's float32 statistics: the flattened float32 case, and with an axis in
    # newer astropy; without float64 on the devices, rusticl: float32 moments, within the
    # float32 promise)
    f64 = np.asarray(want[0]).dtype == np.float64
    rtol = 1e-12 if dtype == np.float64 or (f64 and FP64) else 1e-6 if FP64 else 1e-5
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (k, g.shape, w.shape, g.dtype, w.dtype)
        if k == 1 and FP64:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.fp64
def test_sigma_clipped_stats_integers_long_columns_and_a_mask():
    # one library call (the clipping's own statistics): integers as float64 (astropy 5's;
    # newer astropy's are float32 statistics, as its float32 data's), columns of 300 rows
    # (the counting passes), a mask, mad_std to convergence
    rng = np.random.default_rng(13)
    xi = rng.integers(0, 50, (300, 6))
    xi[::37, 2] = 5000
    mask = rng.random(xi.shape) < 0.1
    for x, kw in ((xi, dict(axis=0)), (xi.astype(np.float32), dict(axis=0, mask=mask)),
                  (xi.astype(np.float64), dict(axis=1, stdfunc="mad_std", maxiters=None, std_ddof=1))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = astropy_stats.sigma_clipped_stats(x, **kw)
            got = clscale.sigma_clipped_stats(x, **kw)
        for k, (g, w) in enumerate(zip(got, want)):
            f64 = x.dtype == np.float64 or not astropy_keeps_float32
            assert np.asarray(g).dtype == np.asarray(w).dtype == (np.float64 if f64 else np.float32)
            if k == 1:
                np.testing.assert_array_equal(g, w)
            else:
                np.testing.assert_allclose(g, w, rtol=1e-12 if f64 else 1e-6, atol=0, equal_nan=True)


def test_sigma_clipped_stats_all_masked():
    x = np.ones((4, 3), np.float32)
    assert clscale.sigma_clipped_stats(x, mask=np.ones(x.shape, bool)) == (np.ma.masked,) * 3


def duplicate_rows(x2):
    """pandas' DataFrame(x2).duplicated().sum(): NaN equal to NaN, -0.0 to 0.0."""
    canon = np.where(np.isnan(x2), np.nan, x2 + 0.0)  # one NaN, -0.0 as 0.0
    keys = np.ascontiguousarray(canon).view(np.dtype((np.void, canon.dtype.itemsize * canon.shape[1])))
    return x2.shape[0] - np.unique(keys).size


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,scope", [((120, 7), "matrix"), ((3, 40, 5), "matrix"), ((3, 40, 5), "batch")],
                         ids=["2d", "3d-matrix", "3d-batch"])
def test_describe_equals_numpy(dtype, shape, scope):
    x = hostile(shape, dtype, 12)
    x[..., 3, :] = x[..., 1, :]  # duplicate rows (NaN equal to NaN)
    x[..., 7, :] = x[..., 1, :]
    x[..., 5, 0] = np.inf
    d = clscale.describe(x, sigma=2.5, scope=scope)
    groups = [x] if x.ndim == 2 else ([x.reshape(-1, shape[-1])] if scope == "batch" else list(x))
    for g, xg in enumerate(groups):
        at = (lambda k: d[k][g]) if x.ndim == 3 and scope == "matrix" else (lambda k: d[k])
        fin = np.where(np.isfinite(xg), xg, np.nan).astype(np.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            same(at("count"), np.isfinite(xg).sum(axis=0).astype(np.uint64))
            same(at("missing"), (~np.isfinite(xg)).sum(axis=0).astype(np.uint64))
            same(at("min"), np.nanmin(fin, axis=0))
            same(at("max"), np.nanmax(fin, axis=0))
            same(at("25%"), np.nanpercentile(fin, 25, axis=0))
            same(at("75%"), np.nanpercentile(fin, 75, axis=0))
            same(at("50%"), np.nanmedian(np.where(np.isfinite(xg), xg, np.nan), axis=0).astype(np.float64))
            mean, std = np.nanmean(fin, axis=0), np.nanstd(fin, axis=0)
            np.testing.assert_allclose(at("mean"), mean, rtol=1e-12 if dtype == np.float64 else 1e-6, atol=1e-12)
            np.testing.assert_allclose(at("std"), std, rtol=1e-9 if dtype == np.float64 else 1e-5, atol=1e-9)
            # outliers in the data's dtype, from the library's own mean and std
            m, t = at("mean").astype(dtype), (2.5 * at("std")).astype(dtype)
            same(at("outliers"), (np.isfinite(xg) & (np.abs(xg - m) > t)).sum(axis=0).astype(np.uint64))
        dup = at("duplicate_rows")
        assert dup == duplicate_rows(xg) and dup >= 2


def test_describe_bad_arguments():
    x = make_data((10, 3), np.float32, seed=13)
    with pytest.raises(ValueError, match="sigma"):
        clscale.describe(x, sigma=0)
    with pytest.raises(ValueError, match="scope"):
        clscale.describe(x, scope="rows")


def test_clean_without_counts_or_bounds_gives_the_same_mask_and_values():
    # clean(..., counts=False, bounds=False): sigma_clip without
    # return_bounds asks for neither (a million columns' 40 MB not made)
    from clscale import _clscale
    from clscale._context import context
    rng = np.random.default_rng(5)
    x = rng.normal(10, 2, (1, 7, 3001))
    x[0, rng.random((7, 3001)) < 0.05] = np.nan
    x[0, 3, ::17] *= 40
    outs, masks, res = [], [], []
    for counts, bounds in ((True, True), (False, False), (True, False), (False, True)):
        y, mask = np.empty_like(x), np.empty(x.shape, dtype=bool)
        with context() as ctx:
            r = _clscale.clean(ctx, x, y, mask, False, counts, bounds, scope=_clscale.SCOPE_MATRIX,
                               sigma=3.0, maxiters=5)
        outs.append(y)
        masks.append(mask)
        res.append(r)
    for y, mask, r, (counts, bounds) in zip(outs, masks, res, ((True, True), (False, False), (True, False),
                                                               (False, True))):
        assert np.array_equal(y, outs[0], equal_nan=True) and np.array_equal(mask, masks[0])
        assert r[3] == res[0][3]  # iterations
        for i in (0, 1, 2):
            assert (r[i] is None) == (not counts)
            if counts:
                assert np.array_equal(r[i], res[0][i], equal_nan=True)
        for i in (4, 5):
            assert (r[i] is None) == (not bounds)
            if bounds:
                assert np.array_equal(r[i], res[0][i], equal_nan=True)
    lo, hi = clscale.sigma_clip(x[0], sigma=3, axis=0, return_bounds=True)[1:]
    assert np.array_equal(lo, res[0][4][0], equal_nan=True) and np.array_equal(hi, res[0][5][0], equal_nan=True)
