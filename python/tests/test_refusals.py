"""What clscale does not take from its peers' signatures is refused with a
TypeError (the class scikit-learn's check_array and Python give) whose
message names the way on: sparse input on every estimator (and the
scikit-learn estimator that keeps it sparse, where there is one), and
sample_weight on StandardScaler, the one clscale estimator whose
scikit-learn peer takes it (None, the peers' default, is taken; by
keyword only, as scikit-learn's checks and meta-estimators see no
sample_weight parameter). The
peers' own suites find these through test_peer_suites.py; this file pins
the messages and every way in."""
import numpy as np
import pytest

import clscale
from conftest import make_data

pytestmark = pytest.mark.fp64

sparse = pytest.importorskip("scipy.sparse")

PEERS = {"StandardScaler": r"sklearn\.preprocessing\.StandardScaler\(with_mean=False\)",
         "MaxAbsScaler": r"sklearn\.preprocessing\.MaxAbsScaler",
         "RobustScaler": r"sklearn\.preprocessing\.RobustScaler\(with_centering=False\)",
         "SimpleImputer": r"sklearn\.impute\.SimpleImputer"}
ESTIMATORS = [clscale.MinMaxScaler, clscale.StandardScaler, clscale.MaxAbsScaler, clscale.RobustScaler,
              clscale.DecimalScaler, clscale.SimpleImputer, clscale.SigmaClip]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_input_is_refused_naming_the_way_on(cls, fmt):
    x = make_data((30, 4), seed=31, nan=0.0)
    s = sparse.random(30, 4, density=0.5, format=fmt, random_state=0)
    name = cls.__name__
    want = rf"clscale\.{name} takes dense arrays only, got a sparse {type(s).__name__}: convert it with X\.toarray\(\)"
    if name in PEERS:
        want += ", or keep it sparse with " + PEERS[name]
    for call in ("fit", "fit_transform"):
        with pytest.raises(TypeError, match=want + ("$" if name not in PEERS else "")):
            getattr(cls(), call)(s)
    est = cls().fit(x)
    with pytest.raises(TypeError, match=want):
        est.transform(s)
    # dense data still goes through, and the same data densified is taken
    assert est.transform(s.toarray()).shape == (30, 4)


def test_sample_weight_is_refused_by_standard_scaler_naming_the_peer():
    x = make_data((25, 3), seed=32)
    want = (r"^clscale\.StandardScaler fits unweighted statistics and does not take sample_weight: leave it out, "
            r"or use sklearn\.preprocessing\.StandardScaler for weighted ones$")
    w = np.ones(25)
    for call in (lambda e: e.fit(x, sample_weight=w), lambda e: e.partial_fit(x, sample_weight=w),
                 lambda e: e.fit_transform(x, sample_weight=w), lambda e: e.fit(x, None, sample_weight=[1.0] * 25)):
        est = clscale.StandardScaler()
        with pytest.raises(TypeError, match=want):
            call(est)
        assert not hasattr(est, "mean_")  # refused before anything was fitted
    # not in the signature: scikit-learn's has_fit_parameter (its checks,
    # its meta-estimators' routing) sees that no weights are taken
    from sklearn.utils.validation import has_fit_parameter
    assert not has_fit_parameter(clscale.StandardScaler(), "sample_weight")
    with pytest.raises(TypeError, match=r"^StandardScaler\.fit\(\) got an unexpected keyword argument 'weights'$"):
        clscale.StandardScaler().fit(x, weights=w)
    # None is scikit-learn's default: taken, the same fit as without it
    a = clscale.StandardScaler().fit(x, sample_weight=None)
    b = clscale.StandardScaler().fit(x)
    np.testing.assert_array_equal(a.mean_, b.mean_)
    np.testing.assert_array_equal(a.var_, b.var_)
    np.testing.assert_array_equal(clscale.StandardScaler().fit_transform(x, sample_weight=None),
                                  clscale.StandardScaler().fit_transform(x))
    c = clscale.StandardScaler().partial_fit(x[:10], sample_weight=None).partial_fit(x[10:])
    np.testing.assert_allclose(c.mean_, b.mean_, rtol=1e-12)
