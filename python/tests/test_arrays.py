"""Arrays: C-contiguous float32/float64 data reaches the devices without a
copy (copy=False and out= write into the caller's array); other input is
converted once by scikit-learn's rules and gives the same result."""
import numpy as np
import pytest

import clscale
from conftest import assert_close, make_data, tol

pytestmark = pytest.mark.fp64


def test_copy_false_writes_into_the_callers_array():
    x = make_data((200, 5), seed=11)
    want = clscale.MinMaxScaler().fit_transform(x.copy())
    est = clscale.MinMaxScaler(copy=False)
    y = est.fit_transform(x)
    assert y is x
    assert_close(x, want, 0.0, "in place")
    z = make_data((50, 5), seed=12)
    expect = est.transform(z)  # copy=None: the estimator's copy=False...
    assert expect is z
    w = make_data((50, 5), seed=12)
    assert est.transform(w, copy=True) is not w


def test_out_receives_the_result_and_input_stays():
    x = make_data((3, 100, 4), np.float32, seed=13)
    keep = x.copy()
    out = np.full_like(x, 7.0)
    est = clscale.StandardScaler()
    y = est.fit_transform(x, out=out)
    assert y is out
    assert np.array_equal(x, keep, equal_nan=True)
    out2 = np.empty_like(x)
    assert est.transform(x, out=out2) is out2
    # the fused pass makes its float32 params on the device: within an ulp
    assert_close(out2, out, 1e-6, "transform into out")
    back = np.empty_like(x)
    assert est.inverse_transform(out2, out=back) is back
    assert_close(back, x, tol(np.float32), "inverse into out")


def test_output_of_copy_true_is_a_new_array_of_the_inputs_dtype():
    for dt in (np.float32, np.float64):
        x = make_data((20, 3), dt, seed=14)
        y = clscale.DecimalScaler().fit_transform(x)
        assert y is not x and y.dtype == dt and not np.shares_memory(x, y)


@pytest.mark.parametrize("convert", [
    ("list", lambda x: x.tolist()),
    ("int64", lambda x: np.nan_to_num(x * 100).astype(np.int64)),
    ("fortran", np.asfortranarray),
    ("strided", lambda x: np.repeat(x, 2, axis=1)[:, ::2]),
    ("big-endian", lambda x: x.astype(">f8")),
], ids=lambda c: c[0])  # float16 and big-endian float32: test_float16_input.py
def test_other_inputs_are_converted_once_and_give_the_same_result(convert):
    name, f = convert
    x = make_data((64, 6), seed=15, spread=3.0)
    given = f(x)
    ref = np.asarray(given, dtype=np.float64)  # what scikit-learn makes of it
    for cls in (clscale.MinMaxScaler, clscale.StandardScaler, clscale.DecimalScaler):
        y = cls().fit_transform(given)
        assert y.flags.c_contiguous and y.dtype == np.float64, name
        assert_close(y, cls().fit_transform(np.ascontiguousarray(ref)), 0.0, f"{cls.__name__} on {name}")
    # copy=False on a converted input returns the converted array (a new one)
    y = clscale.MinMaxScaler(copy=False).fit_transform(given)
    assert y is not given


def test_read_only_input_is_read_only_for_the_library_too():
    x = make_data((30, 4), seed=16)
    x.flags.writeable = False
    est = clscale.MinMaxScaler().fit(x)  # reading is fine
    y = est.transform(x)
    assert y is not x
    with pytest.raises(ValueError, match="read-only"):
        est.transform(x, copy=False)


def test_one_row_and_one_column_shapes():
    for shape in [(1, 1), (1, 9), (9, 1), (1, 1, 1), (2, 1, 3)]:
        x = make_data(shape, seed=17, nan=0.0)
        y = clscale.MinMaxScaler().fit_transform(x)
        assert y.shape == shape
        # one value per column (per matrix): a constant column maps to min
        if shape[-2] == 1:
            assert np.all(y == 0.0)
