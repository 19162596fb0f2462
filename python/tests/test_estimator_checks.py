"""scikit-learn's own estimator checks (check_estimator), every one, for
every estimator but SigmaClip; none is skipped for fit/transform behaviour. Checks that
scikit-learn itself skips for lack of pandas are reported as skipped."""
import numpy as np
import pytest
from unittest import SkipTest

import sklearn.utils.estimator_checks as sklearn_checks
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import clscale
from conftest import assert_close, make_data

pytestmark = pytest.mark.fp64

ESTIMATORS = [clscale.MinMaxScaler(), clscale.MinMaxScaler(feature_range=(-1, 1), clip=True),
              clscale.StandardScaler(), clscale.StandardScaler(with_mean=False), clscale.DecimalScaler(),
              clscale.Discount(), clscale.Discount(2.5), clscale.RobustScaler(),
              clscale.RobustScaler(quantile_range=(10, 90), unit_variance=True), clscale.MaxAbsScaler()]
# SimpleImputer: check_estimator's checks (its allow_nan tag, clscale._base.NanTags,
# lets them see NaN taken); not the feature-name checks below, as it has no
# get_feature_names_out. SigmaClip is left out: stateless as astropy's
# SigmaClip, it transforms unfitted and any number of features, which three
# checks refuse (test_estimator_tags.py names them).
IMPUTERS = [clscale.SimpleImputer(), clscale.SimpleImputer(strategy="median"),
            clscale.SimpleImputer(strategy="most_frequent"), clscale.SimpleImputer(strategy="constant", fill_value=0)]


@parametrize_with_checks(ESTIMATORS + IMPUTERS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# Checks scikit-learn 1.2 runs on its own estimators (sklearn/tests/
# test_common.py) but not through check_estimator; the pandas ones skip
# themselves when pandas is not installed (Debian's python3-sklearn does not
# pull it in).
EXTRA = [sklearn_checks.check_n_features_in_after_fitting,
         sklearn_checks.check_estimators_partial_fit_n_features,
         sklearn_checks.check_transformer_get_feature_names_out,
         sklearn_checks.check_get_feature_names_out_error,
         sklearn_checks.check_set_output_transform,
         sklearn_checks.check_dataframe_column_names_consistency,
         sklearn_checks.check_transformer_get_feature_names_out_pandas,
         sklearn_checks.check_set_output_transform_pandas]


@pytest.mark.parametrize("check", EXTRA, ids=lambda c: c.__name__)
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_sklearn_common_checks(estimator, check):
    try:
        check(type(estimator).__name__, clone(estimator))
    except SkipTest as e:
        pytest.skip(str(e))


def test_pipeline_and_column_transformer():
    x = make_data((80, 6), seed=51, nan=0.0)
    pipe = Pipeline([("scale", clscale.StandardScaler()), ("minmax", clscale.MinMaxScaler()),
                     ("discount", clscale.Discount(np.full(6, 0.5)))])
    y = pipe.fit_transform(x)
    assert y.shape == x.shape and np.nanmax(y) <= 0.5 + 1e-12
    assert list(pipe.get_feature_names_out()) == [f"x{i}" for i in range(6)]
    ct = ColumnTransformer([("mm", clscale.MinMaxScaler(), [0, 1, 2]), ("z", clscale.StandardScaler(), [3, 4, 5])])
    z = ct.fit_transform(x)
    assert_close(z[:, :3], clscale.MinMaxScaler().fit_transform(x[:, :3]), 0.0, "column transformer")
    assert_close(z[:, 3:], clscale.StandardScaler().fit_transform(x[:, 3:].copy()), 0.0, "column transformer")
