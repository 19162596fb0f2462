"""numpy's own cases for nanmedian, nanpercentile and nanquantile (learnt
from numpy's lib/tests/test_nanfunctions.py, written anew), run on clscale
and on numpy side by side: every result equal to numpy's bit for bit, in
numpy's dtype and shape, and the same warnings and errors. 4-D data with
scattered NaN, +-Inf, all-NaN and empty arrays, 0-d data and 0-d out."""
import warnings

import numpy as np
import pytest

import clscale
from conftest import quiet, same

# numpy 2 has it in numpy.exceptions only (numpy >= 1.25 in both places)
AxisError = np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError

pytestmark = pytest.mark.fp64  # float64 data, as numpy's cases

FNS = [pytest.param((clscale.nanmedian, np.nanmedian, ()), id="nanmedian"),
       pytest.param((clscale.nanpercentile, np.nanpercentile, (90,)), id="nanpercentile"),
       pytest.param((clscale.nanquantile, np.nanquantile, ([0.1, 0.5],)), id="nanquantile")]


def ones_with_nan(seed, shape=(3, 5, 7, 11), count=200):
    rng = np.random.default_rng(seed)
    d = np.ones(shape)
    d[tuple(rng.integers(0, n, count) for n in shape)] = np.nan
    return d


def rows_with_nan(seed):
    """Rows of different lengths once NaN is left out (numpy's _ndat)."""
    rng = np.random.default_rng(seed)
    d = rng.normal(0.0, 1.0, (6, 9))
    for i, k in enumerate([0, 1, 3, 5, 8, 2]):
        d[i, rng.choice(9, k, replace=False)] = np.nan
    return d


@pytest.mark.parametrize("fns", FNS)
def test_data_not_changed(fns):
    ours, _, q = fns
    d = rows_with_nan(1)
    before = d.copy()
    ours(d, *q)
    ours(d, *q, axis=1)
    np.testing.assert_array_equal(d, before)


@pytest.mark.parametrize("fns", FNS)
@pytest.mark.parametrize("axis", [None, (0, 1), (0, 3), (1,), (0, 1, 2, 3), (0, 1, 3), 2, -1],
                         ids=lambda a: str(a).replace(" ", ""))
def test_keepdims_on_four_dimensions(fns, axis):
    ours, theirs, q = fns
    d = ones_with_nan(2)
    d[0, 0, 0, :] = np.nan  # an all-NaN slice for every axis set holding 3
    d[1, 2] = np.arange(11.0)
    for keepdims in (False, True):
        same(quiet(ours, d, *q, axis=axis, keepdims=keepdims), quiet(theirs, d, *q, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("fns", FNS)
@pytest.mark.parametrize("axis", [None, 1, (1,), (0, 1), (-3, -1)], ids=str)
def test_keepdims_into_out(fns, axis):
    ours, theirs, q = fns
    d = ones_with_nan(3)
    want = quiet(theirs, d, *q, axis=axis, keepdims=True)
    out = np.empty(np.shape(want))
    got = quiet(ours, d, *q, axis=axis, keepdims=True, out=out)
    assert got is out
    same(out, want)


@pytest.mark.parametrize("fns", FNS)
def test_out_of_one_and_no_dimension(fns):
    ours, theirs, q = fns
    rng = np.random.default_rng(4)
    nan_mat = np.insert(rng.random((3, 3)), [0, 2], np.nan, axis=1)
    for axis in (1, None, (0, 1)):
        want = quiet(theirs, nan_mat, *q, axis=axis)
        out = np.zeros(np.shape(want))
        assert ours(nan_mat, *q, axis=axis, out=out) is out
        same(out, want)


@pytest.mark.parametrize("size", [5, 20, 51, 200, 1000])
def test_median_of_short_and_long_rows(size):
    # numpy has two code paths either side of 400 values; the library has
    # one kernel for short columns and counting passes for long ones
    rng = np.random.default_rng(size)
    d = rng.normal(size=(4, size))
    d.ravel()[rng.integers(0, d.size, d.size // 5)] = np.nan
    d[:, 0] = 1.0
    same(clscale.nanmedian(d, axis=-1), np.nanmedian(d, axis=-1))
    same(clscale.nanpercentile(d, [5, 50, 95], axis=-1), np.nanpercentile(d, [5, 50, 95], axis=-1))


def test_rows_of_different_lengths():
    d = rows_with_nan(5)
    same(clscale.nanmedian(d, axis=1), np.nanmedian(d, axis=1))
    same(clscale.nanpercentile(d, 28, axis=1), np.nanpercentile(d, 28, axis=1))
    same(clscale.nanpercentile(d, (28, 98), axis=1), np.nanpercentile(d, (28, 98), axis=1))


@pytest.mark.parametrize("dtype", list(np.typecodes["AllFloat"]))
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("fns", FNS)
def test_all_nan_keeps_the_dtype_and_warns(fns, axis, dtype):
    ours, theirs, _ = fns
    q = () if theirs is np.nanmedian else (60,) if theirs is np.nanpercentile else (1,)
    mat = np.full((3, 3), np.nan).astype(dtype)
    try:
        quiet(theirs, mat, *q, axis=axis)
    except TypeError:
        # numpy 2 takes no complex quantiles (numpy 1 does): clscale neither
        with pytest.raises(TypeError):
            ours(mat, *q, axis=axis)
        return
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        got = ours(mat, *q, axis=axis)
    same(got, quiet(theirs, mat, *q, axis=axis))
    scalar = np.array(np.nan).astype(dtype)
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        got = ours(scalar, *q)
    same(got, quiet(theirs, scalar, *q))


def _all_nan_warnings(f, *args, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f(*args, **kw)
    return [x for x in w if issubclass(x.category, RuntimeWarning) and "All-NaN slice" in str(x.message)]


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2)])
@pytest.mark.parametrize("fns", FNS)
def test_one_warning_per_all_nan_slice(fns, axis):
    # numpy reduces slice by slice and warns for each all-NaN one; the
    # +-Inf columns (numpy's results, NaN from Inf - Inf) do not warn
    ours, theirs, q = fns
    d = np.ones((4, 5, 3))
    d[:, 1] = np.nan
    d[2, :, 0] = np.nan
    d[1, 3] = [np.inf, np.nan, -np.inf]
    d[3, 4] = [np.inf, -np.inf, np.nan]
    d[:, 2, 2] = [np.inf, -np.inf, np.nan, np.nan]
    for x in (d, np.full((3, 3), np.nan), d[0, :, :1]):
        if isinstance(axis, tuple) and x.ndim < 3:
            continue
        want = _all_nan_warnings(theirs, x, *q, axis=axis)
        got = _all_nan_warnings(ours, x, *q, axis=axis)
        assert len(got) == len(want), (x.shape, axis)
    assert len(_all_nan_warnings(theirs, np.full((3, 3), np.nan), *q, axis=0)) == 3


@pytest.mark.parametrize("fns", FNS)
def test_empty(fns):
    ours, theirs, q = fns
    mat = np.zeros((0, 3))
    for axis in (0, None):
        with pytest.warns(RuntimeWarning):
            got = ours(mat, *q, axis=axis)
        same(got, quiet(theirs, mat, *q, axis=axis))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same(ours(mat, *q, axis=1), theirs(mat, *q, axis=1))


def test_scalars():
    assert clscale.nanmedian(0.0) == 0.0
    same(clscale.nanpercentile(0.0, 100), np.nanpercentile(0.0, 100))
    r = clscale.nanpercentile(np.arange(6), 50, axis=0)
    assert r == 2.5 and np.isscalar(r)
    same(clscale.nanquantile(np.arange(8) * 0.5, [0, 1, 0.5]), np.nanquantile(np.arange(8) * 0.5, [0, 1, 0.5]))


@pytest.mark.parametrize("fns", FNS)
def test_bad_axes(fns):
    ours, _, q = fns
    d = np.ones((3, 5, 7, 11))
    for axis in (-5, (0, -5), 4, (0, 4)):
        with pytest.raises(AxisError):
            ours(d, *q, axis=axis)
    with pytest.raises(ValueError):
        ours(d, *q, axis=(1, 1))


@pytest.mark.parametrize("inf", [np.inf, -np.inf])
def test_infinities(inf):
    # numpy ranks +-Inf with the other values; the columns holding one are
    # numpy's in clscale
    cases = [np.array([[inf, np.nan], [np.nan, np.nan]]), np.array([[np.nan, np.nan, inf], [np.nan, np.nan, inf]]),
             np.array([[inf, inf], [inf, inf]]),
             np.array([[inf, 7, -inf, -9], [-10, np.nan, np.nan, 5], [4, np.nan, np.nan, inf]], dtype=np.float32)]
    cases += [np.array([[np.nan] * i + [inf] * j] * 2) for i in range(0, 10, 3) for j in range(1, 10, 4)]
    for a in cases:
        for axis in (None, 0, 1):
            same(quiet(clscale.nanmedian, a, axis=axis), quiet(np.nanmedian, a, axis=axis))
            same(quiet(clscale.nanquantile, a, [0.2, 0.5], axis=axis), quiet(np.nanquantile, a, [0.2, 0.5], axis=axis))


def test_many_percentiles_and_their_shapes():
    perc = [50, 100]
    nan_mat = np.full((4, 3), np.nan)
    large = np.ones((3, 4, 5))
    large[:, 0:2:4, :] = 0
    large[:, :, 3:] *= 2
    for axis in (None, 0, 1):
        for keepdims in (False, True):
            same(quiet(clscale.nanpercentile, nan_mat, perc, axis=axis, keepdims=keepdims),
                 quiet(np.nanpercentile, nan_mat, perc, axis=axis, keepdims=keepdims))
            same(clscale.nanpercentile(large, perc, axis=axis, keepdims=keepdims),
                 np.nanpercentile(large, perc, axis=axis, keepdims=keepdims))
    assert clscale.nanpercentile(np.ones((3, 4, 5, 6)), perc, axis=(1, 2)).shape == (2, 3, 6)


def test_quantile_and_percentile_agree():
    ar = np.arange(24).reshape(2, 3, 4).astype(float)
    ar[0][1] = np.nan
    for axis in (None, 0, 1):
        same(clscale.nanquantile(ar, 0.5, axis=axis), np.nanpercentile(ar, 50, axis=axis))
        same(clscale.nanquantile(ar, [0.25, 0.5, 0.75], axis=axis), np.nanpercentile(ar, [25, 50, 75], axis=axis))


def test_q_not_changed():
    p0 = np.array([0, 0.75, 0.25, 0.5, 1.0])
    p = p0.copy()
    for method in ("midpoint", "linear"):
        clscale.nanquantile(np.arange(100.0), p, method=method)
        np.testing.assert_array_equal(p, p0)
        lst = p0.tolist()
        clscale.nanquantile(np.arange(100.0), lst, method=method)
        assert lst == p0.tolist()
