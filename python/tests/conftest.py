"""The OpenCL implementation the tests run on, chosen before clscale is
imported (the ICD loader reads its environment once), as tests/common.c
does for the C tests: $CLSCALE_TEST_IMPL is "pocl" (the default: PoCL, two
pthread devices, float64 and float32) or "rusticl" (rusticl on llvmpipe,
float32 only: run with -m "not fp64"). A vendors folder naming just that
driver is written under $CLSCALE_TEST_TMP (else a temporary folder).
Shared helpers: seeded data with missing values, constant columns and
offsets, the float64 comparison, and the exact comparison with numpy."""
import os
import tempfile
import warnings

import numpy as np
import pytest

IMPL = os.environ.get("CLSCALE_TEST_IMPL", "pocl")
_LIBS = {"pocl": "libpocl.so.2", "rusticl": "libRusticlOpenCL.so.1"}
if IMPL not in _LIBS:
    raise RuntimeError(f"CLSCALE_TEST_IMPL={IMPL!r}: use pocl or rusticl")


def _vendors():
    base = os.environ.get("CLSCALE_TEST_TMP") or tempfile.gettempdir()
    d = os.path.join(base, f"vendors-py-{IMPL}-{os.getpid()}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "0.icd"), "w") as f:
        f.write(_LIBS[IMPL] + "\n")
    return d


os.environ["OCL_ICD_VENDORS"] = _vendors()
os.environ.pop("CLSCALE_DEVICES", None)
if IMPL == "pocl":
    os.environ.setdefault("POCL_DEVICES", "pthread pthread")
else:
    os.environ["RUSTICL_ENABLE"] = "llvmpipe"

FP64 = IMPL != "rusticl"


def pytest_configure(config):
    config.addinivalue_line("markers", "fp64: needs float64 on the devices (not on rusticl)")


def pytest_collection_modifyitems(config, items):
    if FP64:
        return
    skip = pytest.mark.skip(reason=f"{IMPL} has no float64")
    for item in items:
        if "fp64" in item.keywords:
            item.add_marker(skip)


# float32 parametrisations run everywhere, float64 ones carry the fp64 mark
DTYPES = [pytest.param(np.float64, marks=pytest.mark.fp64, id="f64"), pytest.param(np.float32, id="f32")]


def tol(dtype):
    """Absolute tolerance on outputs of order 1 against a float64 reference
    (DESIGN.md: float32 within ~1e-5 even at large offsets)."""
    return 1e-10 if dtype == np.float64 else 1e-5


def make_data(shape, dtype=np.float64, seed=0, offset=0.0, spread=10.0, nan=0.05, const=True,
              all_nan_col=False):
    """Random data (never zeros) of `shape` (2-D or 3-D): normal around
    `offset` with `spread`, a fraction `nan` missing, column 1 constant when
    there is one (and `const`), the last column all missing when
    `all_nan_col` and there are 3 or more columns."""
    rng = np.random.default_rng(seed)
    x = rng.normal(offset, spread, size=shape)
    cols = shape[-1]
    if const and cols > 1:
        x[..., 1] = offset + 3.25
    if nan:
        x[rng.random(shape) < nan] = np.nan
    if all_nan_col and cols >= 3:
        x[..., -1] = np.nan
    return x.astype(dtype)


def assert_close(actual, expected, atol, what=""):
    """Equal within atol * max(1, |expected|); NaN where NaN is expected."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    nan_a, nan_e = np.isnan(actual), np.isnan(expected)
    assert np.array_equal(nan_a, nan_e), f"{what}: missing values moved ({nan_a.sum()} vs {nan_e.sum()})"
    ok = ~nan_e
    err = np.abs(actual[ok] - expected[ok]) / np.maximum(1.0, np.abs(expected[ok]))
    if err.size:
        i = int(np.argmax(err))
        assert err[i] <= atol, (f"{what}: error {err[i]:.3g} > {atol:g} at flat index {i}: "
                                f"{actual[ok][i]!r} vs {expected[ok][i]!r}")


def quiet(fn, *args, **kw):
    """fn(*args, **kw) without its RuntimeWarnings (numpy's "All-NaN slice")."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kw)


def silenced(fn, *args, **kw):
    """fn(*args, **kw) without any warning (astropy's and numpy's alike)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def same(got, want):
    """Equal to numpy's result bit for bit, in its shape and dtype."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)
