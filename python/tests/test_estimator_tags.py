"""scikit-learn's estimator tags of every clscale estimator, read the way
the installed scikit-learn reads them (get_tags from 1.6, the _more_tags
dicts before): NaN allowed (scikit-learn's scalers and imputers take it;
fit ignores it, transform keeps or fills it) and float32 preserved; the
Tags-object path (scikit-learn >= 1.6) also against a stand-in base where
the installed scikit-learn is older. And SigmaClip's checks that fail by
design, named."""
import types

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.utils.estimator_checks import check_estimator

import clscale
from clscale._base import NanTags

ESTIMATORS = [clscale.MinMaxScaler(), clscale.StandardScaler(), clscale.DecimalScaler(), clscale.RobustScaler(),
              clscale.MaxAbsScaler(), clscale.Discount(), clscale.SimpleImputer(),
              clscale.SimpleImputer(strategy="median"), clscale.SigmaClip(), clscale.Detrend(), clscale.Flatten()]


def tags_of(est):
    """{"allow_nan": ..., "preserves_dtype": [names]} as the installed
    scikit-learn sees them."""
    get_tags = getattr(sklearn.utils, "get_tags", None)
    if get_tags is not None:  # scikit-learn >= 1.6
        t = get_tags(est)
        return {"allow_nan": t.input_tags.allow_nan,
                "preserves_dtype": [np.dtype(d).name for d in t.transformer_tags.preserves_dtype]}
    from sklearn.utils._tags import _safe_tags  # scikit-learn < 1.6: the dicts merged along the MRO
    return {"allow_nan": _safe_tags(est, "allow_nan"),
            "preserves_dtype": [np.dtype(d).name for d in _safe_tags(est, "preserves_dtype")]}


@pytest.mark.parametrize("est", ESTIMATORS, ids=repr)
def test_nan_allowed_and_float32_preserved(est):
    t = tags_of(est)
    assert t["allow_nan"] is True
    assert t["preserves_dtype"] == ["float64", "float32"]


@pytest.mark.fp64
@pytest.mark.parametrize("est", [clscale.MinMaxScaler(), clscale.StandardScaler(), clscale.RobustScaler(),
                                 clscale.MaxAbsScaler(), clscale.SimpleImputer()], ids=repr)
def test_nan_is_taken_and_kept_or_filled(est):
    # what the tag promises: NaN in, no error; a scaler keeps it where it was,
    # an imputer fills it; an all-NaN and a single-value column included
    x = np.random.default_rng(3).normal(4.0, 2.0, (9, 4))
    x[[0, 5], 0] = np.nan
    x[:, 2] = np.nan
    x[:, 3] = 1.5
    y = clone(est).fit(x).transform(x)
    if isinstance(est, clscale.SimpleImputer):
        assert not np.isnan(y[:, [0, 1, 3]]).any() and np.isnan(y[:, 2]).all()
    else:
        np.testing.assert_array_equal(np.isnan(y), np.isnan(x))


def test_tags_objects_of_newer_scikit_learn():
    # scikit-learn >= 1.6 builds a Tags object and lets each class change
    # it; a stand-in base gives NanTags the object it gets there
    class Base:
        def __sklearn_tags__(self):
            return types.SimpleNamespace(input_tags=types.SimpleNamespace(allow_nan=False),
                                         transformer_tags=types.SimpleNamespace(preserves_dtype=["float64"]))

    class Est(NanTags, Base):
        pass
    t = Est().__sklearn_tags__()
    assert t.input_tags.allow_nan is True
    assert t.transformer_tags.preserves_dtype == ["float64", "float32"]


@pytest.mark.fp64
@pytest.mark.skipif(hasattr(sklearn.utils, "get_tags"), reason="the check names below are scikit-learn 1.2's")
def test_sigma_clip_fails_only_the_checks_of_a_stateless_transformer():
    # astropy's SigmaClip keeps no state: transform clips whatever it is
    # given, fitted or not, with any number of columns
    failed = set()
    for est, check in check_estimator(clscale.SigmaClip(), generate_only=True):
        try:
            check(est)
        except Exception:  # noqa: BLE001 - any failure counts
            failed.add(getattr(check, "func", check).__name__)
    assert failed == {"check_transformer_general", "check_transformers_unfitted", "check_dict_unchanged"}


@pytest.mark.fp64
@pytest.mark.skipif(hasattr(sklearn.utils, "get_tags"), reason="the check names below are scikit-learn 1.2's")
@pytest.mark.parametrize("est", [clscale.Detrend(window_length=3, polyorder=1),
                                 clscale.Flatten(window_length=3, polyorder=1)], ids=repr)
def test_light_curve_estimators_fail_only_the_checks_of_a_time_filter(est):
    # stateless as SigmaClip (transform unfitted, any number of columns),
    # and the rows are the time axis: a filter along them depends on
    # their order and on the rows around each (no sample-order or subset
    # invariance; one row is shorter than the interp edge's window)
    failed = set()
    for e, check in check_estimator(est, generate_only=True):
        try:
            check(e)
        except Exception:  # noqa: BLE001 - any failure counts
            failed.add(getattr(check, "func", check).__name__)
    allowed = {"check_transformer_general", "check_transformers_unfitted", "check_methods_sample_order_invariance",
               "check_methods_subset_invariance", "check_fit2d_1sample"}
    assert {"check_methods_sample_order_invariance", "check_methods_subset_invariance"} <= failed <= allowed
