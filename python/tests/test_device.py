"""pyopencl arrays scaled where they are (clscale.device_fit_transform,
device_transform), against scikit-learn and numpy in float64: out of
place with the input unchanged, in place in a slice of a larger array
with the elements around it untouched, per matrix, the inverse, and bad
input refused with ValueError."""
import numpy as np
import pytest

from conftest import DTYPES, make_data, tol

cl = pytest.importorskip("pyopencl")
cla = pytest.importorskip("pyopencl.array")
sk = pytest.importorskip("sklearn.preprocessing")

import clscale  # noqa: E402  (after conftest chose the implementation)


@pytest.fixture(scope="module")
def queue():
    dev = cl.get_platforms()[0].get_devices()[0]
    return cl.CommandQueue(cl.Context([dev]))


def same_nan(a, b, t):
    assert a.shape == b.shape
    assert np.array_equal(np.isnan(a), np.isnan(b))
    m = ~np.isnan(b)
    assert np.max(np.abs(a[m] - b[m]), initial=0.0) <= t * max(1.0, np.max(np.abs(b[m]), initial=0.0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_minmax_out_of_place_matches_sklearn(queue, dtype):
    xh = make_data((1003, 7), dtype, seed=1)
    x = cla.to_device(queue, xh)
    y, stats = clscale.device_fit_transform(x, "minmax", feature_range=(-1.0, 2.0))
    want = sk.MinMaxScaler(feature_range=(-1.0, 2.0)).fit_transform(xh.astype(np.float64))
    same_nan(y.get(), want, tol(dtype))
    assert np.array_equal(x.get(), xh, equal_nan=True)  # the input is unchanged
    assert stats.info["groups"] == 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_zscore_in_place_in_a_slice_leaves_the_rest(queue, dtype):
    big_h = make_data((600, 5), dtype, seed=2, offset=100.0)
    big = cla.to_device(queue, big_h)
    part = big[100:497]  # a view at an offset into the same buffer
    assert part.offset > 0
    y, _ = clscale.device_fit_transform(part, "zscore", out=part)
    assert y is part
    got = big.get()
    want = sk.StandardScaler().fit_transform(big_h[100:497].astype(np.float64))
    same_nan(got[100:497], want, 10 * tol(dtype))
    assert np.array_equal(got[:100], big_h[:100], equal_nan=True)
    assert np.array_equal(got[497:], big_h[497:], equal_nan=True)


@pytest.mark.fp64
def test_per_matrix_and_the_inverse(queue):
    xh = make_data((3, 200, 4), np.float64, seed=3, const=False)
    x = cla.to_device(queue, xh)
    y, stats = clscale.device_fit_transform(x, "minmax", scope="matrix")
    lo = np.nanmin(xh, axis=1, keepdims=True)
    hi = np.nanmax(xh, axis=1, keepdims=True)
    same_nan(y.get(), (xh - lo) / (hi - lo), 1e-12)
    assert stats.info["groups"] == 3
    back = clscale.device_transform(y, stats, inverse=True)
    same_nan(back.get(), xh, 1e-12)


def test_bad_input_is_a_value_error(queue):
    xh = make_data((50, 4), np.float32, seed=4)
    x = cla.to_device(queue, xh)
    with pytest.raises(ValueError, match="pyopencl"):
        clscale.device_fit_transform(xh, "minmax")  # a numpy array
    with pytest.raises(ValueError, match="float32 or float64"):
        clscale.device_fit_transform(cla.to_device(queue, np.arange(1, 9, dtype=np.int32)), "minmax")
    with pytest.raises(ValueError, match="scaler"):
        clscale.device_fit_transform(x, "nosuch")
    with pytest.raises(clscale.ClscaleError, match="quantiles"):
        clscale.device_fit_transform(x, "robust")
    with pytest.raises(ValueError, match="shape"):
        clscale.device_fit_transform(x, "minmax", out=cla.empty(queue, (49, 4), np.float32))
    other = cl.CommandQueue(cl.Context([queue.device]))
    with pytest.raises(ValueError, match="context"):
        clscale.device_fit_transform(x, "minmax", out=cla.empty(other, (50, 4), np.float32))
    assert np.array_equal(x.get(), xh, equal_nan=True)  # nothing was written
