"""clscale.make_pipeline / Pipeline: a SimpleImputer (mean, constant) and
a clscale scaler fused into one library call, against scikit-learn's
make_pipeline(SimpleImputer, scaler) and clscale's steps one after the
other; the step-by-step fallback for every other pipeline; clone,
get_params, set_params, pickling; the steps' errors."""
import pickle
import warnings

import numpy as np
import pytest
from sklearn import preprocessing as skp
from sklearn.base import clone
from sklearn.impute import SimpleImputer as SkImputer
from sklearn.pipeline import make_pipeline as sk_make_pipeline

import clscale
from conftest import DTYPES, tol

# newer scikit-learn (1.9, not 1.2) drops an all-missing column with strategy="constant" too
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # its warning that it drops one
    SK_DROPS_CONSTANT = SkImputer(strategy="constant", fill_value=0.0).fit_transform([[np.nan, 1.0]]).shape[1] == 1

SENT = -9999.0


def data(rows=150, cols=6, seed=0, dtype=np.float64, sentinel=None, batch=None):
    """Normal data around 4 (spread 3) with 8% missing, column 1 constant,
    the last column all missing; missing is NaN or `sentinel`."""
    r = np.random.default_rng(seed)
    shape = (rows, cols) if batch is None else (batch, rows, cols)
    x = r.normal(4.0, 3.0, shape)
    x[..., 1] = -2.5
    x[r.random(shape) < 0.08] = np.nan
    x[..., -1] = np.nan
    if sentinel is not None:
        x[np.isnan(x)] = sentinel
    return x.astype(dtype)


SCALERS = {  # clscale scaler, scikit-learn's
    "standard": (clscale.StandardScaler, skp.StandardScaler, {}),
    "minmax": (clscale.MinMaxScaler, skp.MinMaxScaler, {}),
    "minmax-clip": (clscale.MinMaxScaler, skp.MinMaxScaler, {"feature_range": (-1.0, 2.0), "clip": True}),
    "maxabs": (clscale.MaxAbsScaler, skp.MaxAbsScaler, {}),
}
ATTRS = {"standard": ("mean_", "var_", "scale_", "n_samples_seen_"),
         "minmax": ("data_min_", "data_max_", "data_range_", "scale_", "min_", "n_samples_seen_"),
         "maxabs": ("max_abs_", "scale_", "n_samples_seen_")}


def no_step_by_step(monkeypatch):
    """The imputer's own call fails: only the fused path can succeed."""
    def fail(*a, **k):
        raise AssertionError("SimpleImputer ran on its own: the pipeline was not fused")
    monkeypatch.setattr(clscale.SimpleImputer, "_clean", fail)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(SCALERS))
@pytest.mark.parametrize("strategy,missing", [("mean", np.nan), ("constant", SENT), ("mean", SENT)])
def test_fused_matches_scikit_learn(dtype, name, strategy, missing, monkeypatch):
    cl, sk, kw = SCALERS[name]
    sent = None if missing is np.nan else SENT
    x, x2 = data(dtype=dtype, sentinel=sent), data(seed=1, dtype=dtype, sentinel=sent)
    imp = dict(strategy=strategy, missing_values=missing, fill_value=1.75)
    pipe = clscale.make_pipeline(clscale.SimpleImputer(**imp), cl(**kw))
    no_step_by_step(monkeypatch)
    y = pipe.fit_transform(x)
    monkeypatch.undo()
    assert pipe.fused_ and y.dtype == dtype and y.shape == x.shape
    # scikit-learn drops the all-missing column a mean leaves empty; clscale keeps it as NaN
    # (a constant fills it; newer scikit-learn drops it then too: compared without it)
    keep = slice(None) if strategy == "constant" and not SK_DROPS_CONSTANT else slice(0, -1)
    if strategy == "mean":
        assert np.isnan(y[:, -1]).all()
    else:
        assert pipe[0].statistics_[-1] == 1.75 and np.isfinite(y[:, -1]).all()
    ref = sk_make_pipeline(SkImputer(**imp), sk(**kw)).fit(x[:, keep].astype(np.float64))
    t = tol(dtype)
    np.testing.assert_allclose(y[:, keep], ref.transform(x[:, keep].astype(np.float64)), rtol=0, atol=t)
    # (newer scikit-learn, 1.9, keeps a constant's statistics_ as objects)
    np.testing.assert_allclose(pipe[0].statistics_[keep], np.asarray(ref[0].statistics_, np.float64), rtol=t)
    for a in ATTRS[name.split("-")[0]]:
        got = np.asarray(getattr(pipe[1], a), np.float64)
        np.testing.assert_allclose(got[keep] if got.ndim else got, np.asarray(getattr(ref[1], a), np.float64),
                                   rtol=t, err_msg=a)
    # transform, inverse_transform, pickling and the scaler alone, as fitted step by step
    want2 = ref.transform(x2[:, keep].astype(np.float64))
    np.testing.assert_allclose(pipe.transform(x2)[:, keep], want2, rtol=0, atol=t)
    back = pickle.loads(pickle.dumps(pipe))
    np.testing.assert_allclose(back.transform(x2)[:, keep], want2, rtol=0, atol=t)
    z = pipe[1].transform(pipe[0].transform(x2))
    np.testing.assert_allclose(z[:, keep], want2, rtol=0, atol=t)
    if not kw.get("clip"):
        inv = pipe.inverse_transform(y) if hasattr(pipe, "inverse_transform") else pipe[1].inverse_transform(y)
        np.testing.assert_allclose(inv[:, keep], ref[0].transform(x[:, keep].astype(np.float64)),
                                   rtol=0, atol=1e3 * t)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scaler", [clscale.StandardScaler, clscale.MinMaxScaler, clscale.DecimalScaler,
                                    clscale.MaxAbsScaler])
def test_fused_equals_clscale_steps(dtype, scaler):
    """3-D per matrix and one row, fused against the two clscale calls."""
    for x in (data(rows=40, batch=3, dtype=dtype, seed=4), data(rows=1, dtype=dtype, seed=5)):
        x[..., 0, 2] = np.inf  # +-Inf are missing as NaN is
        steps = (clscale.SimpleImputer(strategy="mean"), scaler())
        want = clone(steps[1]).fit_transform(clone(steps[0]).fit_transform(x))
        pipe = clscale.make_pipeline(*steps)
        y = pipe.fit_transform(x)
        assert pipe.fused_
        np.testing.assert_allclose(y, want, rtol=0, atol=tol(dtype), equal_nan=True)
        alone = clone(steps[0]).fit(x)
        np.testing.assert_allclose(pipe[0].statistics_, alone.statistics_, rtol=tol(dtype), equal_nan=True)
        assert pipe.fit(x).fused_
        np.testing.assert_allclose(pipe.transform(x), want, rtol=0, atol=tol(dtype), equal_nan=True)


@pytest.mark.fp64
def test_fusing_scalers_are_the_library_tables(monkeypatch):
    """Which scalers fuse with the imputer is the library's answer at import
    (_clscale.FUSES, from its scalers' table: those needing no exact
    quantiles), not a list of Python's: emptied, nothing fuses; a subclass
    of a fusing estimator runs step by step."""
    lib = clscale._clscale
    assert lib.FUSES == frozenset(lib.SCALERS[n] for n in ("minmax", "zscore", "decimal", "maxabs"))
    x = data()[:, :-1]
    want = sk_make_pipeline(SkImputer(), skp.StandardScaler()).fit_transform(x)

    class Mine(clscale.StandardScaler):
        pass
    pipe = clscale.make_pipeline(clscale.SimpleImputer(), Mine())
    np.testing.assert_allclose(pipe.fit_transform(x), want, rtol=0, atol=1e-12)
    assert not pipe.fused_
    pipe = clscale.make_pipeline(clscale.SimpleImputer(), clscale.StandardScaler())
    pipe.fit(x)
    assert pipe.fused_
    monkeypatch.setattr(lib, "FUSES", frozenset())
    np.testing.assert_allclose(pipe.fit_transform(x), want, rtol=0, atol=1e-12)
    assert not pipe.fused_


@pytest.mark.fp64
@pytest.mark.parametrize("steps", [
    lambda: (clscale.SimpleImputer(strategy="median"), clscale.StandardScaler()),
    lambda: (clscale.SimpleImputer(), clscale.RobustScaler()),
    lambda: (clscale.SimpleImputer(), skp.StandardScaler()),
    lambda: (clscale.SimpleImputer(), clscale.StandardScaler(with_mean=False)),
    lambda: (clscale.SimpleImputer(), clscale.StandardScaler(), clscale.MinMaxScaler()),
    lambda: (clscale.SigmaClip(maxiters=2), clscale.SimpleImputer(), clscale.StandardScaler()),
], ids=["median", "robust", "sklearn-step", "no-mean", "three-steps", "sigmaclip"])
def test_fallback_is_step_by_step(steps):
    x = data()[:, :-1]
    pipe = clscale.make_pipeline(*steps())
    y = pipe.fit_transform(x)
    assert not pipe.fused_
    want = sk_make_pipeline(*[clone(s) for s in steps()]).fit_transform(x)
    np.testing.assert_allclose(y, want, rtol=0, atol=1e-12, equal_nan=True)


@pytest.mark.fp64
def test_clone_params_and_search():
    pipe = clscale.Pipeline([("imp", clscale.SimpleImputer()), ("sc", clscale.StandardScaler())])
    p = pipe.get_params()
    assert p["imp__strategy"] == "mean" and "sc__with_mean" in p and p["memory"] is None
    c = clone(pipe).set_params(imp__strategy="constant", imp__fill_value=0.5, sc=clscale.MinMaxScaler())
    assert type(c) is clscale.Pipeline and c.named_steps["imp"].fill_value == 0.5
    x = data()[:, :-1]
    y = c.fit_transform(x)
    assert c.fused_ and not hasattr(pipe[1], "mean_")  # the clone was fitted, not the original
    want = sk_make_pipeline(SkImputer(strategy="constant", fill_value=0.5), skp.MinMaxScaler()).fit_transform(x)
    np.testing.assert_allclose(y, want, atol=1e-12)
    c.set_params(imp__strategy="median")
    assert not c.fit(x).fused_
    assert type(c[:1]) is clscale.Pipeline
    from sklearn.model_selection import GridSearchCV
    from sklearn.linear_model import LinearRegression
    full = clscale.make_pipeline(clscale.SimpleImputer(), clscale.StandardScaler(), LinearRegression())
    g = GridSearchCV(full, {"simpleimputer__strategy": ["mean", "median"]}, cv=2).fit(x[:, 1:], x[:, 0] > 4)
    assert g.best_params_["simpleimputer__strategy"] in ("mean", "median")


@pytest.mark.fp64
@pytest.mark.parametrize("steps,x", [
    ((clscale.SimpleImputer(strategy="constant", fill_value=np.inf), clscale.StandardScaler()), None),
    ((clscale.SimpleImputer(), clscale.MinMaxScaler(feature_range=(2, 1))), None),
    ((clscale.SimpleImputer(), clscale.StandardScaler(devices=3)), None),
    ((clscale.SimpleImputer(), clscale.MaxAbsScaler()), np.arange(1.0, 6.0)),
    ((clscale.SimpleImputer(), clscale.MaxAbsScaler()), np.ones((2, 0))),
], ids=["fill", "range", "devices", "1-D", "empty"])
def test_errors_as_the_steps(steps, x):
    x = data() if x is None else x
    with pytest.raises(ValueError) as alone:
        clone(steps[1]).fit_transform(clone(steps[0]).fit_transform(x))
    with pytest.raises(ValueError) as fused:
        clscale.make_pipeline(*steps).fit_transform(x)
    assert str(fused.value) == str(alone.value)
    pipe = clscale.make_pipeline(clscale.SimpleImputer(), clscale.StandardScaler()).fit(data())
    with pytest.raises(ValueError, match="features"):
        pipe.transform(data(cols=4))


@pytest.mark.parametrize("dtype", DTYPES)
def test_in_place_only_when_both_steps_may(dtype):
    x = data(dtype=dtype)[:, :-1]
    x[:, 3] = 7.0 + 1e-15 * (np.arange(x.shape[0]) % 2)  # 7 and its next float64: scale 1, redone in place
    want = sk_make_pipeline(SkImputer(), skp.StandardScaler()).fit_transform(x.astype(np.float64))
    a = x.copy()
    y = clscale.make_pipeline(clscale.SimpleImputer(copy=False), clscale.StandardScaler()).fit_transform(a)
    assert y is not a and np.array_equal(a, x, equal_nan=True)
    b = x.copy()
    pipe = clscale.make_pipeline(clscale.SimpleImputer(copy=False), clscale.StandardScaler(copy=False))
    y = pipe.fit_transform(b)
    assert pipe.fused_ and y is b
    np.testing.assert_allclose(y, want, rtol=0, atol=tol(dtype))
