"""numpy's full signatures of nanquantile, nanpercentile and nanmedian:
out=, overwrite_input=, method= and keepdims=, by keyword and in numpy's
positional order, against numpy itself (bit for bit, same dtype and
shape). Hostile data: NaN, an all-NaN first slice (numpy's result dtype
comes from it), +-Inf, one value, odd sizes; integer q and integer
data (numpy's dtype rules)."""
import numpy as np
import pytest

import clscale
from conftest import DTYPES, quiet, same

METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
           "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint", "nearest"]


def data(shape, dtype, seed, first_all_nan=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(5.0, 3.0, shape)
    x[rng.random(shape) < 0.15] = np.nan
    if x.ndim == 2 and shape[1] > 2:
        x[:, 2] = 7.5  # constant
    if first_all_nan:
        x[:, 0] = np.nan  # the first slice of axis 0
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (7, 5), (33, 3), (5, 4, 3)], ids=str)
def test_out_is_written_and_returned(dtype, shape):
    x = data(shape, dtype, 1)
    for axis in (0, -1, None):
        want = quiet(np.nanquantile, x, [0.2, 0.5], axis=axis)
        out = np.full(want.shape, -1.0, dtype=want.dtype)
        got = quiet(clscale.nanquantile, x, [0.2, 0.5], axis=axis, out=out)
        assert got is out
        same(out, want)
        # keepdims: out has the kept shape, as numpy's
        want = quiet(np.nanpercentile, x, 40, axis=axis, keepdims=True)
        out = np.empty_like(want)
        assert quiet(clscale.nanpercentile, x, 40, axis=axis, keepdims=True, out=out) is out
        same(out, want)
        want = quiet(np.nanmedian, x, axis=axis)
        out = np.empty(np.shape(want), dtype=np.asarray(want).dtype)
        assert quiet(clscale.nanmedian, x, axis=axis, out=out) is out
        same(out, want)


@pytest.mark.fp64
def test_out_of_another_dtype_casts_as_numpy():
    x = data((41, 6), np.float64, 2)
    want, got = np.empty(6, np.float32), np.empty(6, np.float32)
    quiet(np.nanquantile, x, 0.37, axis=0, out=want)
    quiet(clscale.nanquantile, x, 0.37, axis=0, out=got)
    same(got, want)


def test_out_of_a_wrong_shape_is_refused():
    x = data((9, 4), np.float32, 3)
    with pytest.raises(ValueError, match="shape"):
        clscale.nanquantile(x, 0.5, axis=0, out=np.empty(3))
    with pytest.raises(ValueError, match="shape"):
        clscale.nanmedian(x, axis=0, out=np.empty((1, 4)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpys_positional_order(dtype):
    x = data((13, 5), dtype, 4)
    same(quiet(clscale.nanquantile, x, 0.3, 0, None, False, "linear", True),
         quiet(np.nanquantile, x, 0.3, 0, None, False, "linear", True))
    same(quiet(clscale.nanpercentile, x, [10, 90], 1, None, True, "linear", False),
         quiet(np.nanpercentile, x, [10, 90], 1, None, True, "linear", False))
    same(quiet(clscale.nanmedian, x, 0, None, False, True), quiet(np.nanmedian, x, 0, None, False, True))


@pytest.mark.parametrize("dtype", DTYPES)
def test_overwrite_input_gives_numpys_result_and_leaves_the_data(dtype):
    x = data((31, 7), dtype, 5)
    before = x.copy()
    same(quiet(clscale.nanquantile, x, 0.8, axis=0, overwrite_input=True), quiet(np.nanquantile, before, 0.8, axis=0))
    same(quiet(clscale.nanmedian, x, axis=1, overwrite_input=True), quiet(np.nanmedian, before, axis=1))
    np.testing.assert_array_equal(x, before)  # allowed to change it, never does


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", METHODS)
def test_every_numpy_method(dtype, method):
    x = data((23, 5), dtype, 6)
    for axis in (0, None):
        for q in (0.0, 0.33, [0.1, 0.5, 1.0]):
            same(quiet(clscale.nanquantile, x, q, axis=axis, method=method),
                 quiet(np.nanquantile, x, q, axis=axis, method=method))
        same(quiet(clscale.nanpercentile, x, 62.5, axis=axis, method=method),
             quiet(np.nanpercentile, x, 62.5, axis=axis, method=method))


def test_unknown_method_names_the_supported_ones():
    x = data((5, 2), np.float32, 7)
    with pytest.raises(ValueError, match="linear.*'cubic'|'cubic'"):
        clscale.nanquantile(x, 0.5, method="cubic")
    with pytest.raises(ValueError, match="inverted_cdf"):
        clscale.nanpercentile(x, 50, method="cubic")


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpys_result_dtype(dtype):
    # an integer q takes an element (the data's dtype), a float q interpolates
    # (numpy 1.x: float64 for float32 data); an all-NaN first slice keeps the
    # data's dtype for the whole result; a float32 q is numpy's arithmetic
    for first_all_nan in (False, True):
        x = data((17, 4), dtype, 8, first_all_nan=first_all_nan)
        for q in (0, 1, [0, 1], 0.5, [0.25, 0.75], np.float32(0.3)):
            for axis in (0, None):
                same(quiet(clscale.nanquantile, x, q, axis=axis), quiet(np.nanquantile, x, q, axis=axis))
        for q in (50, [0, 100], 12.5):
            same(quiet(clscale.nanpercentile, x, q, axis=0), quiet(np.nanpercentile, x, q, axis=0))


@pytest.mark.fp64
def test_integer_data_and_integer_q():
    x = np.random.default_rng(9).integers(-10**6, 10**6, (19, 3))
    for q in (0, 1, [1, 0], 0.5):
        same(clscale.nanquantile(x, q, axis=0), np.nanquantile(x, q, axis=0))
    same(clscale.nanpercentile(x, [0, 100], axis=None), np.nanpercentile(x, [0, 100], axis=None))


def test_infinities_with_integer_q():
    # the columns holding +-Inf are numpy's: an integer q takes the element
    # (Inf) where interpolating at 1.0 would give Inf - Inf
    x = data((11, 3), np.float32, 10)
    x[0, 1], x[1, 1] = np.inf, -np.inf
    for q in (0, 1, [0, 1]):
        same(quiet(clscale.nanquantile, x, q, axis=0), quiet(np.nanquantile, x, q, axis=0))


@pytest.mark.parametrize("fn", ["nanquantile", "nanpercentile", "nanmedian"])
def test_signature_is_numpys_with_keyword_only_extras(fn):
    # numpy's parameters in numpy's order and kinds, then keyword-only
    # extras: devices= (every clscale call's), weights= (numpy 2's, given
    # to numpy's own function), interpolation= (numpy's old name of method,
    # which numpy 2.4 removed; given to numpy's own function, which
    # refuses it there as numpy does)
    import inspect
    ours = inspect.signature(getattr(clscale, fn)).parameters
    theirs = inspect.signature(getattr(np, fn)).parameters
    extra = [n for n in ours if n not in theirs]
    assert [n for n in ours if n in theirs] == list(theirs)
    assert all(ours[n].kind == theirs[n].kind for n in theirs)
    assert "devices" in extra and set(extra) <= {"devices", "weights", "interpolation"}
    assert all(ours[n].kind == inspect.Parameter.KEYWORD_ONLY for n in extra)


@pytest.mark.parametrize("dtype", DTYPES)
def test_deprecated_interpolation_is_numpys(dtype):
    # numpy's old name of method: numpy's result, its DeprecationWarning,
    # and its TypeError when both are given; where numpy has no such
    # parameter any more (2.4), numpy's TypeError for it
    import inspect
    x = data((15, 4), dtype, 11)
    for fn, q in ((clscale.nanquantile, 0.3), (clscale.nanpercentile, [30, 70])):
        peer = getattr(np, fn.__name__)
        if "interpolation" not in inspect.signature(peer).parameters:
            with pytest.raises(TypeError, match="interpolation"):
                fn(x, q, axis=0, interpolation="nearest")
            continue
        for how in ("nearest", "lower", "midpoint", "linear"):
            with pytest.warns(DeprecationWarning, match="interpolation"):
                got = quiet(fn, x, q, axis=0, interpolation=how)
            with pytest.warns(DeprecationWarning):
                want = quiet(peer, x, q, axis=0, interpolation=how)
            same(got, want)
        with pytest.raises(TypeError, match="method.*interpolation"):
            fn(x, q, method="lower", interpolation="nearest")
