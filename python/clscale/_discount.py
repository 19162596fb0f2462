"""Discount: y = x * factors, with numpy's broadcasting, on the devices."""
import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._base import Estimator, keeps_float16, output_for
from ._context import check_selector, context
from ._files import DiscountFiles


class Discount(DiscountFiles, Estimator):
    """Multiplies X by `factors`, broadcast against X with numpy's rules
    (shapes (cols,), (rows, cols), (batch, rows, cols), (1, rows, 1), ...,
    or a scalar), on every OpenCL device `devices` names: the discount
    product cv[d][i][k] = multBy[i][k] * discount[d][i][k] of problem 2.

    Factors must be finite; they are used in the data's dtype. NaN and
    +-Inf in X stay missing (NaN * factor). fit learns nothing but checks
    the factors and the number of features; inverse_transform multiplies
    by 1 / factors (rounded once; every factor must be non-zero).

    Attributes: factors_ (the checked factors, float64), n_features_in_,
    feature_names_in_.
    """

    def __init__(self, factors=1.0, *, copy=True, devices=None):
        self.factors = factors
        self.copy = copy
        self.devices = devices

    def fit(self, X, y=None):
        """Checks the factors against X's features."""
        check_selector(self.devices)
        f = np.asarray(self.factors)
        if f.dtype == object or np.iscomplexobj(f) or not (np.issubdtype(f.dtype, np.number)
                                                             or f.dtype == bool):
            raise ValueError(f"factors must be real numbers, got an array of {f.dtype}")
        f = f.astype(np.float64)
        if f.ndim > 3 or 0 in f.shape:
            raise ValueError(f"factors must have 0 to 3 non-empty dimensions, got shape {f.shape}")
        if not np.all(np.isfinite(f)):
            raise ValueError("factors must be finite (NaN or +-Inf found)")
        X = self._validate(X, reset=True)
        if f.ndim and f.shape[-1] not in (1, X.shape[-1]):
            raise ValueError(f"factors of shape {f.shape} do not broadcast against "
                             f"{X.shape[-1]} features")
        self.factors_ = f
        # both dtypes now, so that transform changes nothing on the estimator
        self._factors = {np.dtype(np.float64): np.ascontiguousarray(f),
                         np.dtype(np.float32): np.ascontiguousarray(f, dtype=np.float32)}
        with np.errstate(divide="ignore"):
            inv = 1.0 / f
        self._inverse = ({np.dtype(np.float64): np.ascontiguousarray(inv),
                          np.dtype(np.float32): np.ascontiguousarray(inv, dtype=np.float32)}
                         if np.all(f != 0) else None)
        return self

    def partial_fit(self, X, y=None):
        """As fit: a discount has nothing to accumulate."""
        if not hasattr(self, "factors_"):
            return self.fit(X, y)
        self._validate(X, reset=False)
        return self

    def _run(self, X, Y, factors):
        f = factors[X.dtype]
        with context(self.devices) as ctx:
            ctx.transform(X, Y, factors=f)

    @keeps_float16
    def transform(self, X, copy=None, out=None):
        """X * factors (copy=False: into X; out=: into out)."""
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        Y = output_for(X, self.copy if copy is None else copy, out)
        self._run(X, Y, self._factors)
        return Y

    @keeps_float16
    def fit_transform(self, X, y=None, out=None):
        return self.fit(X).transform(X, out=out)

    @keeps_float16
    def inverse_transform(self, X, copy=None, out=None):
        """X * (1 / factors)."""
        check_is_fitted(self)
        if self._inverse is None:
            raise ValueError("a factor is 0: the discount cannot be undone")
        X = self._validate(X, reset=False)
        Y = output_for(X, self.copy if copy is None else copy, out)
        self._run(X, Y, self._inverse)
        return Y
