"""The scalers: MinMaxScaler, StandardScaler (scikit-learn's semantics and
attributes) and DecimalScaler. Each is a table entry over _base.Scaler: the
library's scaler, its parameters, and its attributes."""
import numbers

import numpy as np

from . import _clscale
from ._base import Scaler, group_shape, refuse_sample_weight, restate


def _columns(fitted):
    info = fitted.info
    return info, {k: group_shape(v, info) for k, v in fitted.columns().items()}


def _samples_seen(count):
    """scikit-learn's n_samples_seen_: an int when every feature saw the
    same number of values, else the per-feature counts."""
    count = count.astype(np.int64)
    return int(count.flat[0]) if np.all(count == count.flat[0]) else count


class MinMaxScaler(Scaler):
    """Scales each feature into `feature_range` (scikit-learn's
    MinMaxScaler), on every OpenCL device the `devices` selector names.

    y = (x - data_min_) / data_range_ * (max - min) + min; a constant
    feature maps to min; NaN and +-Inf are ignored by fit and kept by
    transform; `clip` clamps transformed values into `feature_range`.
    3-D input (batch x rows x cols) is fitted per matrix with
    scope="matrix" (attributes of shape (batch, cols)), or over all its rows
    with scope="batch".

    Attributes: data_min_, data_max_, data_range_, scale_, min_ (in the
    data's dtype), n_samples_seen_, n_features_in_, feature_names_in_.
    """

    _code = _clscale.MINMAX
    _fitted_attrs = ("data_min_", "data_max_", "data_range_", "scale_", "min_", "n_samples_seen_")

    def __init__(self, feature_range=(0, 1), *, copy=True, clip=False, scope="matrix", devices=None):
        self.feature_range = feature_range
        self.copy = copy
        self.clip = clip
        self.scope = scope
        self.devices = devices

    def _check_params(self):
        fr = self.feature_range
        ok = (isinstance(fr, (tuple, list)) and len(fr) == 2
              and all(isinstance(v, numbers.Real) and np.isfinite(v) for v in fr))
        if not ok:
            raise ValueError(f"feature_range must be a (min, max) pair of finite numbers, got {fr!r}")
        if not fr[0] < fr[1]:
            raise ValueError("Minimum of desired feature range must be smaller than maximum. "
                             f"Got {tuple(fr)}.")

    def _range(self):
        return float(self.feature_range[0]), float(self.feature_range[1])

    def _clip(self):
        return bool(self.clip)

    def _attributes(self, fitted):
        info, c = _columns(fitted)
        dt = np.dtype(info["dtype"])
        lo, hi = info["lo"], info["hi"]
        a = {"data_min_": c["min"].astype(dt), "data_max_": c["max"].astype(dt)}
        a["data_range_"] = a["data_max_"] - a["data_min_"]
        rng = np.where(a["data_range_"] < 10 * np.finfo(dt).eps, 1, a["data_range_"])
        a["scale_"] = ((hi - lo) / rng).astype(dt)
        a["min_"] = (lo - a["data_min_"] * a["scale_"]).astype(dt)
        a["n_samples_seen_"] = int(info["rows"])
        return a

    def _refit_count(self, summary):
        return summary["tiny_range"]

    def _apply_stats(self, fitted):
        # scikit-learn divides by 1 where the range is below 10 eps (zero
        # included), so that new values x map to lo + (x - min) * (hi - lo);
        # the library maps a zero range to lo: restate max as min + 1 there
        m = fitted.summary()
        if m["zero_range"] + m["tiny_range"] == 0:
            return fitted
        info = fitted.info
        c = fitted.columns()
        dt = np.dtype(info["dtype"])
        rng = c["max"].astype(dt) - c["min"].astype(dt)
        fix = (c["count"] > 0) & (rng < 10 * np.finfo(dt).eps) & (c["min"] + 1.0 != c["min"])
        if not fix.any():
            return fitted
        c["max"] = np.where(fix, c["min"] + 1.0, c["max"])
        c["absmax"] = np.where(fix, np.maximum(np.abs(c["min"]), np.abs(c["max"])), c["absmax"])
        return _clscale.Stats.from_state(info, c)

    def _file_stats(self):
        return restate(self._fitted, clip=bool(self.clip))

    @classmethod
    def _params_from_info(cls, info):
        lo, hi = info["lo"], info["hi"]
        if lo == 0 and hi == 0:
            hi = 1.0
        return {"feature_range": (lo, hi), "clip": bool(info["clip"])}


def _is_constant(var, mean, n):
    # scikit-learn's test for a feature indistinguishable from a constant:
    # the error bound of the two-pass variance (Chan, Golub and LeVeque)
    eps = np.finfo(np.float64).eps
    return var <= n * eps * var + (n * mean * eps) ** 2


class StandardScaler(Scaler):
    """Standardizes each feature to zero mean and unit variance
    (scikit-learn's StandardScaler), on every OpenCL device `devices` names.

    y = (x - mean_) / scale_, scale_ the population standard deviation, 1
    for a (near-)constant feature; with_mean=False leaves out the centring,
    with_std=False the scaling. NaN and +-Inf are ignored by fit and kept by
    transform. Moments are Welford's and Chan's (exact to float64 even for
    float32 data at large offsets). 3-D input: see MinMaxScaler's scope.

    Attributes: mean_, var_, scale_ (float64; None where disabled),
    n_samples_seen_ (an int, or per-feature counts when values were
    missing), n_features_in_, feature_names_in_.
    """

    _code = _clscale.ZSCORE
    _fitted_attrs = ("mean_", "var_", "scale_", "n_samples_seen_")

    def __init__(self, *, copy=True, with_mean=True, with_std=True, scope="matrix", devices=None):
        self.copy = copy
        self.with_mean = with_mean
        self.with_std = with_std
        self.scope = scope
        self.devices = devices

    # scikit-learn's sample_weight, by keyword: refused (unweighted
    # statistics only) with a message naming the peer. Not a parameter of
    # the signature, so that scikit-learn (has_fit_parameter: its checks,
    # its meta-estimators) knows that no weights are taken.
    def fit(self, X, y=None, comm=None, **fit_params):
        """Scaler.fit; sample_weight other than None is refused."""
        refuse_sample_weight(self, "fit", fit_params)
        return super().fit(X, y, comm=comm)

    def partial_fit(self, X, y=None, comm=None, **fit_params):
        """Scaler.partial_fit; sample_weight other than None is refused."""
        refuse_sample_weight(self, "partial_fit", fit_params)
        return super().partial_fit(X, y, comm=comm)

    def fit_transform(self, X, y=None, out=None, comm=None, **fit_params):
        """Scaler.fit_transform; sample_weight other than None is refused."""
        refuse_sample_weight(self, "fit_transform", fit_params)
        return super().fit_transform(X, y, out=out, comm=comm)

    def _moments(self, fitted):
        info, c = _columns(fitted)
        n = c["count"].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            var = c["m2"] / n
        scale = np.sqrt(var)
        scale = np.where(_is_constant(var, c["mean"], n), 1.0, scale)
        return info, c, var, scale

    def _attributes(self, fitted):
        info, c, var, scale = self._moments(fitted)
        # as scikit-learn: mean_ unless both are off, var_ and scale_ with_std
        return {"mean_": c["mean"] if self.with_mean or self.with_std else None,
                "var_": var if self.with_std else None,
                "scale_": scale if self.with_std else None,
                "n_samples_seen_": _samples_seen(c["count"])}

    def _fusable(self):
        return self.with_mean and self.with_std

    def _refit_count(self, summary):
        return summary["const_var_nonzero"]

    def _apply_stats(self, fitted):
        # the library divides by std (0 maps to 0) and always centres: give
        # it scikit-learn's scale_ (1 for constant features) and mean_, or 1
        # and 0 where with_std / with_mean are off, as the moments
        if self.with_mean and self.with_std and fitted.summary()["const_var"] == 0:
            return fitted
        info, c = fitted.info, fitted.columns()
        n = c["count"].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            var = c["m2"] / n
        const = (c["count"] > 0) & _is_constant(var, c["mean"], n)
        # std 1 is m2 = n; other columns keep their m2 bit for bit
        unit = const | (not self.with_std)
        c["m2"] = np.where(unit & (c["count"] > 0), n, c["m2"])
        if not self.with_mean:
            c["mean"] = np.zeros_like(var)
        return _clscale.Stats.from_state(info, c)

    def _file_stats(self):
        if not (self.with_mean and self.with_std):
            raise ValueError("the statistics file records a z-score with mean and std; "
                             "with_mean=False or with_std=False cannot be saved")
        return self._fitted

    @classmethod
    def _params_from_info(cls, info):
        return {}


class DecimalScaler(Scaler):
    """Decimal scaling: y = x / 10^j per feature, j the smallest integer
    with max |y| < 1 (0 for an all-zero feature), on every OpenCL device
    `devices` names. NaN and +-Inf are ignored by fit and kept.

    Attributes: exponent_ (j, int64), scale_ (10^j, the divisor), max_abs_,
    n_samples_seen_, n_features_in_, feature_names_in_.
    """

    _code = _clscale.DECIMAL
    _nan_for_empty = False  # no scikit-learn counterpart: an empty column stays as it is
    _fitted_attrs = ("exponent_", "scale_", "max_abs_", "n_samples_seen_")

    def __init__(self, *, copy=True, scope="matrix", devices=None):
        self.copy = copy
        self.scope = scope
        self.devices = devices

    def _attributes(self, fitted):
        info, c = _columns(fitted)
        _, m, _ = fitted.params()
        j = -np.rint(np.log10(group_shape(m, info))).astype(np.int64)
        return {"exponent_": j, "scale_": 10.0 ** j.astype(np.float64), "max_abs_": c["absmax"],
                "n_samples_seen_": _samples_seen(c["count"])}
