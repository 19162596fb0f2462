"""Pipeline and make_pipeline: scikit-learn's Pipeline, whose fit and
fit_transform run a leading SimpleImputer (mean or constant) and the
clscale scaler right after it, where the library's table says its scaler
fuses with a cleaning stage (_clscale.FUSES: MinMaxScaler, StandardScaler,
DecimalScaler, MaxAbsScaler), as one library call, the imputation fused
into the scaler's pass on the devices (cls_fit_transform with
cls_pipeline.clean). Both steps
end up fitted as if they had been fitted one after the other. Any other
pipeline runs step by step, as scikit-learn's does. fit_transform_file
does the same from file to file (the streamed cleaning stage,
_files.stream_clean), step by step through temporaries when not fused."""
import os

import numpy as np
from sklearn import pipeline as _skp

from . import _clscale, _dask
from ._base import SCOPES, Scaler, as_data, keeps_float16, moments_to_redo, output_for, repair_moments
from ._clean import SimpleImputer
from ._context import check_selector, context
from ._files import _check_paths, npy_layout, stream_clean, temp_beside


def _fused_scaler(sc):
    """The library's scaler code that the estimator `sc` fits fused behind
    a cleaning stage, or None. The property is the library's (its table,
    _clscale.FUSES); the estimator says which scaler it fits (Scaler's
    _code; an affine scaler's _file_pipeline, when it can take fused
    statistics: _install_fused), and only the package's own classes (a
    subclass may change what a step computes)."""
    if not type(sc).__module__.startswith(__package__ + "."):
        return None
    if isinstance(sc, Scaler):
        code = sc._code
    elif hasattr(sc, "_install_fused") and hasattr(sc, "_file_pipeline"):
        code = sc._file_pipeline()["scaler"]
    else:
        return None
    return code if code in _clscale.FUSES else None


def _default_output(est):
    return getattr(est, "_sklearn_output_config", {}).get("transform", "default") == "default"


class Pipeline(_skp.Pipeline):
    """scikit-learn's Pipeline (same parameters, methods and attributes)
    that fuses a leading clscale.SimpleImputer(strategy="mean" or
    "constant") and the clscale scaler directly after it, as the only two
    steps, into one pass on the devices in fit and fit_transform.

    Fused when: exactly these two steps; the imputer's strategy is mean or
    constant (any missing_values); the scaler is one whose statistics fuse
    with the cleaning (the library's table: MinMaxScaler, StandardScaler
    with with_mean and with_std, DecimalScaler, MaxAbsScaler);
    for 3-D data both steps have the same scope; both name the same
    devices (or one names none); no memory, no fit parameters, no
    set_output, not a dask array. After a fit, `fused_` says whether it
    was fused. Everything else, and transform / inverse_transform, runs
    step by step.
    """

    def _fused_steps(self, X, fit_params):
        if fit_params or self.memory is not None or len(self.steps) != 2 or _dask.is_dask(X):
            return None
        imp, sc = self.steps[0][1], self.steps[1][1]
        if type(imp) is not SimpleImputer or _fused_scaler(sc) is None:
            return None
        if imp.strategy not in ("mean", "constant") or (isinstance(sc, Scaler) and not sc._fusable()):
            return None
        if not all(_default_output(e) for e in (self, imp, sc)):
            return None
        if imp.scope not in SCOPES or sc.scope not in SCOPES:
            return None  # step by step: the step says what is wrong
        if imp.scope != sc.scope and np.ndim(X) == 3:
            return None
        if imp.devices is not None and sc.devices is not None and imp.devices != sc.devices:
            return None
        return imp, sc

    def _fit_fused(self, X, steps):
        """Both steps fitted on X in one library call; returns the output."""
        imp, sc = steps
        if hasattr(self, "_parameter_constraints"):  # scikit-learn >= 1.3
            self._validate_params()
        self._validate_steps()
        # the checks in the order the steps make them
        X = as_data(X, imp)
        devices = check_selector(imp.devices)
        clean = imp._opts()
        if isinstance(sc, Scaler):
            sc._reset()
            sc._check_params()
            code, (lo, hi), clip = sc._code, sc._range(), sc._clip()
        else:
            sc._reset()
            code, lo, hi, clip = _fused_scaler(sc), 0.0, 0.0, False
        check_selector(sc.devices)
        X = sc._validate(X, reset=True)
        Y = output_for(X, imp.copy or sc.copy, None)
        with context(sc.devices if sc.devices is not None else devices) as ctx:
            fitted, fill, _ = ctx.fit_transform(X, Y, scaler=code, scope=sc._scope_of(X), lo=lo, hi=hi,
                                                clip=clip, clean=clean)
        imp.statistics_ = fill[0] if X.ndim == 2 else fill
        imp.n_features_in_ = X.shape[-1]
        if isinstance(sc, Scaler) and moments_to_redo(fitted) is not None and Y is not X:
            # float32 moments out of float32's range (values past ~1e19 or
            # below ~1e-15): the steps one after the other, each taking
            # them in float64 (the fused kernel's map of the imputed values
            # is not the host's there)
            self.fused_ = False
            return _skp.Pipeline.fit_transform(self, X)
        if isinstance(sc, Scaler):
            # in place: taken again from the imputed values through the
            # params applied to them in Y (exact for values past ~1e19,
            # which the kernel leaves as they are)
            applied = fitted
            if moments_to_redo(applied) is not None:
                fitted = repair_moments(Y, applied, applied=applied.params())
            sc._install(fitted)
            if fitted is not applied or sc._refit_count(fitted.summary()):
                sc._refit_columns(X, Y, applied, x_intact=False)
            sc._nan_empty(Y)
        else:
            sc._install_fused(fitted, X, Y)
        self.fused_ = True
        return Y

    def fit(self, X, y=None, **fit_params):
        """scikit-learn's Pipeline.fit; the imputer and scaler in one pass
        when they fuse (the class's doc)."""
        steps = self._fused_steps(X, fit_params)
        if steps is None:
            self.fused_ = False
            return super().fit(X, y, **fit_params)
        self._fit_fused(X, steps)
        return self

    @keeps_float16
    def fit_transform(self, X, y=None, **fit_params):
        """scikit-learn's Pipeline.fit_transform; the imputer and scaler in
        one pass when they fuse (the class's doc)."""
        steps = self._fused_steps(X, fit_params)
        if steps is None:
            self.fused_ = False
            return super().fit_transform(X, y, **fit_params)
        return self._fit_fused(X, steps)

    def fit_transform_file(self, in_path, out_path):
        """fit_transform() of the array in the .npy file `in_path`, written
        to the .npy file `out_path` (replaced only when everything
        succeeded; never the input); returns the pipeline. When the steps
        fuse (the class's doc), one streamed library call imputes and
        scales: one pass when each statistics group fits one stream buffer,
        else the cleaning's passes over the file; columns the scaler maps
        otherwise than scikit-learn (near-constant ones) are then redone in
        the finished file, as fit_transform redoes them. Otherwise each
        step's fit_transform_file runs in turn through temporaries beside
        out_path. `fused_` says which ran."""
        _check_paths(in_path, out_path)
        _, _, shape = npy_layout(in_path)
        steps = self._fused_steps(np.empty((1,) * len(shape)), {})
        if steps is None or not self._fit_fused_file(in_path, out_path, shape, steps):
            self.fused_ = False
            self._file_step_by_step(in_path, out_path)
        return self

    def _fit_fused_file(self, in_path, out_path, shape, steps):
        """The fused steps from file to file; False when the result must be
        made step by step instead."""
        imp, sc = steps
        if hasattr(self, "_parameter_constraints"):  # scikit-learn >= 1.3
            self._validate_params()
        self._validate_steps()
        devices = check_selector(imp.devices)
        clean = imp._opts()
        sc._reset()
        sc._check_params()
        check_selector(sc.devices)
        sc._file_features(in_path, shape, reset=True)
        if isinstance(sc, Scaler):
            lo, hi = sc._range()
            kw = dict(scaler=sc._code, lo=lo, hi=hi, clip=sc._clip())
        else:
            kw = sc._file_pipeline()
        dtype, shape, res = stream_clean(sc.devices if sc.devices is not None else devices, in_path, out_path,
                                         clean, sc._file_scope(shape), scaler=kw)
        if res is None:
            return False
        fitted, fill = res[0], res[3]
        if isinstance(sc, Scaler) and moments_to_redo(fitted) is not None:
            return False  # float32 moments out of float32's range: as in memory, step by step
        if isinstance(sc, Scaler):
            sc._install(fitted)
            if sc._refit_count(fitted.summary()):
                # the composed map on those columns alone, through a mapping of the finished file
                Y = np.load(os.fspath(out_path), mmap_mode="r+")
                sc._refit_columns(None, Y, fitted, x_intact=False)
                Y.flush()
                del Y
        else:
            sc._install_file(fitted, dtype)
        sc._empty_to_nan(out_path)
        imp.statistics_ = fill[0] if len(shape) == 2 else fill
        imp.n_features_in_ = shape[-1]
        self.fused_ = True
        return True

    def _file_step_by_step(self, in_path, out_path):
        todo = [est for _, est in self.steps if est is not None and est != "passthrough"]
        for est in todo:
            if not hasattr(est, "fit_transform_file"):
                raise ValueError(f"{type(est).__name__} has no fit_transform_file: a pipeline runs from file "
                                 f"to file only when every step does")
        if not todo:
            raise ValueError("the pipeline has no step to run")
        temps, src = [], in_path
        try:
            for i, est in enumerate(todo):
                dst = out_path if i == len(todo) - 1 else temp_beside(out_path)
                if dst is not out_path:
                    temps.append(dst)
                est.fit_transform_file(src, dst)
                src = dst
        finally:
            for t in temps:
                try:
                    os.unlink(t)
                except OSError:
                    pass


def make_pipeline(*steps, memory=None, verbose=False):
    """scikit-learn's make_pipeline, giving a clscale.Pipeline (steps named
    after their classes, lowercase)."""
    return Pipeline(_skp._name_estimators(steps), memory=memory, verbose=verbose)
