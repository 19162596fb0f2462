"""Fitted estimators survive pickling, and save()/clscale.load() use the
statistics file of `clscale normalize --stats-out` and `clscale apply`: a
file written by either side is read by the other with the same result."""
import os
import pickle
import subprocess

import numpy as np
import pytest

import clscale
from conftest import assert_close, make_data

pytestmark = pytest.mark.fp64

ESTIMATORS = [
    lambda: clscale.MinMaxScaler(feature_range=(-1, 2), clip=True),
    lambda: clscale.StandardScaler(),
    lambda: clscale.StandardScaler(with_mean=False),
    lambda: clscale.DecimalScaler(scope="batch"),
    lambda: clscale.Discount(np.linspace(0.5, 1.5, 5)),
]


@pytest.mark.parametrize("make", ESTIMATORS, ids=["minmax", "standard", "standard-no-mean", "decimal", "discount"])
def test_pickle_round_trip(make):
    x = make_data((2, 50, 5), seed=41, all_nan_col=True)
    est = make().fit(x)
    back = pickle.loads(pickle.dumps(est))
    new = make_data((2, 30, 5), seed=42, spread=20)
    assert_close(back.transform(new), est.transform(new), 0.0, "transform")
    assert_close(back.inverse_transform(new), est.inverse_transform(new), 0.0, "inverse")
    for k, v in vars(est).items():
        if k.endswith("_") and isinstance(v, np.ndarray):
            assert np.array_equal(getattr(back, k), v, equal_nan=True), k


def test_stats_pickle_keeps_every_value():
    s = clscale.StandardScaler().fit(make_data((3, 40, 4), seed=43, all_nan_col=True)).__dict__["_fitted"]
    t = pickle.loads(pickle.dumps(s))
    assert t.info == s.info
    for k, v in s.columns().items():
        assert np.array_equal(t.columns()[k], v, equal_nan=True), k


@pytest.mark.parametrize("make", ESTIMATORS[:2] + ESTIMATORS[3:4], ids=["minmax", "standard", "decimal"])
def test_save_load_round_trip(make, tmp_path):
    x = make_data((3, 40, 4), seed=44)
    est = make().fit(x)
    est.save(tmp_path / "s.bin")
    back = clscale.load(str(tmp_path / "s.bin"))
    assert type(back) is type(est)
    assert back.get_params() == est.get_params()
    assert back.n_features_in_ == 4
    new = make_data((3, 20, 4), seed=45, spread=30)
    assert_close(back.transform(new), est.transform(new), 0.0, "transform")


def test_what_the_file_cannot_record_is_refused(tmp_path):
    est = clscale.StandardScaler(with_std=False).fit(make_data((10, 3), seed=46))
    with pytest.raises(ValueError, match="cannot be saved"):
        est.save(tmp_path / "s.bin")
    assert not (tmp_path / "s.bin").exists()


TOOL = os.environ.get("CLS_TOOL")
needs_tool = pytest.mark.skipif(not TOOL or not os.access(TOOL, os.X_OK),
                                reason="the clscale tool is not built (CLS_TOOL unset)")


def run_tool(*args):
    r = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r


@needs_tool
def test_a_file_saved_in_python_drives_clscale_apply(tmp_path):
    # no constant feature: for new values there scikit-learn divides by 1
    # where the library (and so `clscale apply`) maps to the range's low end
    x = make_data((2, 60, 5), seed=47, const=False)
    est = clscale.MinMaxScaler(feature_range=(-1, 1), clip=True).fit(x)
    est.save(tmp_path / "s.bin")
    new = make_data((2, 25, 5), seed=48, spread=20, const=False)
    np.save(tmp_path / "in.npy", new)
    run_tool("apply", "--stats", tmp_path / "s.bin", tmp_path / "in.npy", tmp_path / "out.npy")
    assert_close(np.load(tmp_path / "out.npy"), est.transform(new), 1e-12, "apply vs transform")
    run_tool("apply", "--inverse", "--stats", tmp_path / "s.bin", tmp_path / "in.npy", tmp_path / "inv.npy")
    assert_close(np.load(tmp_path / "inv.npy"), est.inverse_transform(new), 1e-12, "apply --inverse")


@needs_tool
@pytest.mark.parametrize("method,cls", [("minmax", clscale.MinMaxScaler), ("zscore", clscale.StandardScaler),
                                        ("decimal", clscale.DecimalScaler)])
def test_a_file_from_clscale_normalize_loads_as_the_fitted_estimator(tmp_path, method, cls):
    x = make_data((3, 50, 4), seed=49, const=False)
    np.save(tmp_path / "x.npy", x)
    extra = ["--range", "-2,3"] if method == "minmax" else []
    run_tool("normalize", "--method", method, *extra, "--scope", "batch", "--stats-out", tmp_path / "s.bin",
             tmp_path / "x.npy", tmp_path / "y.npy")
    est = clscale.load(tmp_path / "s.bin")
    assert type(est) is cls and est.scope == "batch"
    if method == "minmax":
        assert est.feature_range == (-2.0, 3.0)
    assert_close(est.transform(x), np.load(tmp_path / "y.npy"), 1e-12, "transform vs the tool")
    ref = cls(**({"feature_range": (-2, 3)} if method == "minmax" else {}), scope="batch").fit(x)
    assert_close(est.transform(x), ref.transform(x), 1e-12, "vs a fit in Python")


@needs_tool
@pytest.mark.parametrize("method", ["robust", "maxabs"])
def test_a_file_of_a_scaler_load_cannot_make_is_named(tmp_path, method):
    # every scaler of the library's table has a name in Python: the file's
    # Stats shows it, and clscale.load refuses it by that name
    x = make_data((1, 40, 3), seed=50, const=False)
    np.save(tmp_path / "x.npy", x)
    run_tool("normalize", "--method", method, "--scope", "batch", "--stats-out", tmp_path / "s.bin",
             tmp_path / "x.npy", tmp_path / "y.npy")
    from clscale import _clscale
    assert repr(_clscale.load_stats(str(tmp_path / "s.bin"))).startswith(f"<clscale Stats {method} ")
    with pytest.raises(ValueError, match=f"statistics of the {method} scaler"):
        clscale.load(tmp_path / "s.bin")
