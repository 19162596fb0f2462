"""Errors: bad arguments and shapes are ValueError, device and file
failures ClscaleError (a RuntimeError) carrying the library's message; the
caller's arrays are untouched on every error, and no input reaches the
library in a form that could crash the interpreter."""
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import clscale
from clscale import _clscale
from conftest import make_data

pytestmark = pytest.mark.fp64


def fitted(cls=clscale.MinMaxScaler, shape=(40, 4)):
    return cls().fit(make_data(shape, seed=21))


def test_wrong_number_of_features_at_transform():
    est = fitted()
    x = make_data((10, 5), seed=22)
    keep = x.copy()
    with pytest.raises(ValueError, match="X has 5 features, but MinMaxScaler is expecting 4"):
        est.transform(x, copy=False)
    assert np.array_equal(x, keep, equal_nan=True)


def test_non_finite_and_non_numeric_factors():
    x = make_data((10, 3), seed=23)
    for f in ([1.0, np.nan, 2.0], [np.inf, 1.0, 1.0], np.array(["a", "b", "c"]),
              np.array([1 + 1j, 1, 1]), [[[[1.0]]]], np.ones((0, 3))):
        with pytest.raises(ValueError):
            clscale.Discount(f).fit(x)
    with pytest.raises(ValueError, match="do not broadcast"):
        clscale.Discount(np.ones(4)).fit(x)
    est = clscale.Discount(np.ones((10, 3))).fit(x)
    with pytest.raises(ValueError, match="broadcast"):  # the library's check: 7 rows, factors for 10
        est.transform(make_data((7, 3), seed=24))
    with pytest.raises(ValueError, match="cannot be undone"):
        clscale.Discount([1.0, 0.0, 2.0]).fit(x).inverse_transform(x)


def test_object_and_complex_and_sparse_inputs():
    est = clscale.StandardScaler()
    with pytest.raises(ValueError):
        est.fit(np.array([["a", "b"], ["c", "d"]], dtype=object))
    with pytest.raises(ValueError, match="[Cc]omplex"):
        est.fit(np.ones((3, 2), dtype=complex))
    scipy_sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(TypeError, match="[Ss]parse"):  # scikit-learn 1.9 capitalises it
        est.fit(scipy_sparse.random(10, 3, density=0.5, format="csr"))


def test_bad_shapes():
    est = clscale.MinMaxScaler()
    for bad in (np.ones(5), np.ones((2, 2, 2, 2)), np.ones((0, 3)), np.ones((3, 0)), np.ones((2, 0, 3))):
        with pytest.raises(ValueError):
            est.fit(bad)
    per_matrix = clscale.MinMaxScaler(scope="matrix").fit(make_data((3, 10, 4), seed=25))
    with pytest.raises(ValueError, match="3 matrices; X has 2"):
        per_matrix.transform(make_data((2, 10, 4), seed=26))
    with pytest.raises(ValueError, match="3 matrices; X has 1"):
        per_matrix.transform(make_data((10, 4), seed=26))


def test_bad_out_leaves_everything_untouched():
    est = fitted()
    x = make_data((10, 4), seed=27)
    keep = x.copy()
    ro = np.zeros_like(x)
    ro.flags.writeable = False
    cases = [(ro, "read-only"), (np.zeros((10, 5)), "shape"), (np.zeros((10, 4), np.float32), "dtype"),
             (np.zeros((4, 10)).T, "C-contiguous"), ([[0.0] * 4] * 10, "ndarray")]
    for out, msg in cases:
        before = np.array(out, copy=True)
        with pytest.raises(ValueError, match=msg):
            est.transform(x, out=out)
        assert np.array_equal(np.asarray(out), before)
    # an out overlapping the input without being it: the library refuses
    buf = np.zeros(10 * 4 + 4)
    buf[:40] = x.ravel()
    xin, out = buf[:40].reshape(10, 4), buf[4:].reshape(10, 4)
    snapshot = buf.copy()
    with pytest.raises(ValueError, match="overlap"):
        est.transform(xin, out=out)
    assert np.array_equal(buf, snapshot, equal_nan=True)
    assert np.array_equal(x, keep, equal_nan=True)


def test_bad_parameters():
    x = make_data((10, 3), seed=28)
    for fr in [(1, 0), (0, 0), (0, np.inf), (0,), "ab"]:
        with pytest.raises(ValueError):
            clscale.MinMaxScaler(feature_range=fr).fit(x)
    with pytest.raises(ValueError, match="scope"):
        clscale.StandardScaler(scope="rows").fit(make_data((2, 5, 3), seed=28))
    with pytest.raises(ValueError, match="devices"):
        clscale.MinMaxScaler(devices=3).fit(x)


def test_not_fitted():
    for est in (clscale.MinMaxScaler(), clscale.StandardScaler(), clscale.DecimalScaler(), clscale.Discount()):
        with pytest.raises(NotFittedError):
            est.transform(np.ones((2, 2)))


def test_a_selector_that_matches_nothing_is_a_clscale_error_listing_devices():
    x = make_data((10, 3), seed=29)
    with pytest.raises(clscale.ClscaleError) as e:
        clscale.MinMaxScaler(devices="no-such-device").fit(x)
    assert isinstance(e.value, RuntimeError)
    assert e.value.status == "CLS_E_NO_DEVICE" and e.value.code == 3
    assert "no-such-device" in str(e.value) and "pthread" in str(e.value)  # names what exists
    with pytest.raises(clscale.ClscaleError):
        clscale.devices("no-such-device")


def test_file_errors_are_clscale_errors(tmp_path):
    with pytest.raises(clscale.ClscaleError, match="cannot open") as e:
        clscale.load(tmp_path / "missing.bin")
    assert e.value.status == "CLS_E_IO"
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"CLSSTATS" + b"\0" * 20)
    with pytest.raises(clscale.ClscaleError) as e:
        clscale.load(bad)
    assert e.value.status == "CLS_E_FORMAT" and str(bad) in str(e.value)
    with pytest.raises(clscale.ClscaleError, match="cannot save"):
        fitted().save(tmp_path / "no" / "such" / "dir" / "s.bin")


def test_the_extension_refuses_what_the_library_cannot_take():
    # the compiled layer checks everything itself, whatever the Python layer does
    with _ctx() as ctx:
        good = np.ones((4, 3))
        for x in (None, [[1.0]], np.ones((4, 3), np.int32), np.ones((4, 3)).T, np.ones((4, 3))[:, ::2],
                  np.ones(3), np.ones((1, 1, 1, 1)), np.ones((4, 3)).astype(">f8"), np.ones((0, 3))):
            with pytest.raises(ValueError):
                ctx.fit(x, scaler=_clscale.MINMAX)
        ro = np.ones((4, 3))
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            ctx.transform(good, ro, factors=np.ones(3))
        with pytest.raises(ValueError, match="float32"):
            ctx.transform(good, np.empty_like(good), factors=np.ones(3, np.float32))
        with pytest.raises(ValueError):
            ctx.fit(good, scaler=9)
        with pytest.raises(ValueError):
            ctx.transform(good, np.empty_like(good), stats="not stats", scaler=_clscale.MINMAX)
        with pytest.raises(ValueError, match="needs fitted statistics"):  # the library's own message
            ctx.transform(good, np.empty_like(good), scaler=_clscale.MINMAX)
        s = ctx.fit(good, scaler=_clscale.MINMAX)
        with pytest.raises(ValueError, match="do not fit"):
            ctx.transform(np.ones((4, 5)), np.ones((4, 5)), s, scaler=_clscale.MINMAX)


def _ctx():
    from clscale._context import context
    return context(None)


def test_stats_state_is_checked_not_trusted():
    s = fitted().__dict__["_fitted"]
    info, cols = s.info, s.columns()
    bad_cols = dict(cols, min=cols["max"] + 1)
    with pytest.raises(ValueError, match="inconsistent"):
        clscale.Stats.from_state(info, bad_cols)
    with pytest.raises(ValueError):
        clscale.Stats.from_state(dict(info, scaler=7), cols)
    with pytest.raises(ValueError):
        clscale.Stats.from_state(dict(info, cols=99), cols)
    with pytest.raises(ValueError):
        clscale.Stats.from_state({"scaler": 1}, cols)
    with pytest.raises(ValueError):
        clscale.Stats.from_state(dict(info, dtype="int8"), cols)
    with pytest.raises(ValueError, match="differ"):
        s.merged(clscale.StandardScaler().fit(make_data((40, 4), seed=21)).__dict__["_fitted"])
