"""The compiled Stats object: its one-pass summary (split over two threads
for large statistics) against numpy, its params against the scalers'
formulas, and merging."""
import numpy as np
import pytest

from clscale import Stats, _clscale

pytestmark = pytest.mark.fp64


def state(groups, cols, scaler=_clscale.ZSCORE, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    n = (groups, cols)
    count = rng.integers(0, 5, size=n).astype(np.uint64) + 3
    lo = rng.normal(size=n) * 10
    hi = lo + rng.uniform(0.1, 5, size=n)
    mean = (lo + hi) / 2
    m2 = rng.uniform(0.01, 10, size=n) * count
    cols_ = {"count": count, "missing": np.full(n, 2, np.uint64), "min": lo, "max": hi, "mean": mean, "m2": m2,
             "absmax": np.maximum(np.abs(lo), np.abs(hi))}
    info = {"scaler": scaler, "scope": _clscale.SCOPE_MATRIX, "lo": -1.0, "hi": 2.0, "clip": False,
            "dtype": dtype, "groups": groups, "cols": cols, "rows": 10, "has_moments": True}
    return info, cols_


def test_summary_counts_match_numpy_across_the_threads_split():
    groups, cols = 3, 100003  # 300009 columns: split over two threads
    info, c = state(groups, cols)
    idx = np.random.default_rng(1).choice(groups * cols, size=40, replace=False)
    flat = {k: v.reshape(-1) for k, v in c.items()}
    empty, zero, tiny, const = idx[:10], idx[10:20], idx[20:30], idx[30:40]
    flat["count"][empty] = 0
    flat["max"][zero] = flat["min"][zero]
    flat["max"][tiny] = np.nextafter(flat["min"][tiny], np.inf)  # one ulp: below 10 eps where |min| < 4
    flat["m2"][const] = 0.0
    flat["mean"][const] = flat["min"][const]
    flat["count"][idx[0]] = 0
    s = Stats.from_state(info, c)
    m = s.summary()
    cnt, mn, mx = flat["count"], flat["min"], flat["max"]
    live = cnt > 0
    want_tiny = live & (mx > mn) & (mx - mn < 10 * np.finfo(np.float64).eps)
    n = cnt.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = flat["m2"] / n
        want_const = live & (var <= n * np.finfo(float).eps * var + (n * flat["mean"] * np.finfo(float).eps) ** 2)
    assert m["columns"] == groups * cols
    assert m["empty"] == int((~live).sum()) == 10
    assert m["zero_range"] == int((live & (mx == mn)).sum())
    assert m["tiny_range"] == int(want_tiny.sum()) > 0
    assert m["const_var"] == int(want_const.sum()) >= 10
    assert m["count_min"] == 0 and m["count_max"] == int(cnt.max())
    assert s.summary() == m  # computed once, kept


def test_params_follow_the_scalers_formulas():
    info, c = state(2, 7, scaler=_clscale.MINMAX)
    shift, scale, offset = Stats.from_state(info, c).params()
    assert np.allclose(shift, c["min"]) and np.allclose(offset, -1.0)
    assert np.allclose(scale, 3.0 / (c["max"] - c["min"]))
    inv = Stats.from_state(info, c).params(inverse=True)
    assert np.allclose(inv[1] * scale, 1.0)
    info, c = state(2, 7, scaler=_clscale.ZSCORE)
    shift, scale, offset = Stats.from_state(info, c).params()
    assert np.allclose(shift, c["mean"]) and np.allclose(scale, 1 / np.sqrt(c["m2"] / c["count"]))


def test_merged_is_new_and_adds_counts():
    info, c = state(1, 5)
    a = Stats.from_state(info, c)
    b = a.merged(a)
    assert b is not a and b.info["rows"] == 20 and a.info["rows"] == 10
    assert np.array_equal(b.columns()["count"], 2 * c["count"])
    assert np.allclose(b.columns()["m2"], 2 * c["m2"])
    assert "zscore" in repr(b)


def test_columns_of_some_fields_equal_those_of_all():
    # columns(fields): the empty columns of a wide fit read the counts alone
    info, c = state(2, 1001)
    s = _clscale.Stats.from_state(info, c)
    every = s.columns()
    assert sorted(every) == sorted(c)
    for k in every:
        assert np.array_equal(every[k], c[k]) and every[k].dtype == c[k].dtype
    assert list(s.columns("count")) == ["count"]
    assert np.array_equal(s.columns("count")["count"], c["count"])
    some = s.columns(("missing", "absmax"))
    assert sorted(some) == ["absmax", "missing"]
    assert np.array_equal(some["absmax"], c["absmax"]) and np.array_equal(some["missing"], c["missing"])
    with pytest.raises(ValueError, match="unknown field"):
        s.columns("median")
    with pytest.raises(ValueError, match="unknown field"):
        s.columns(["count", 3])
