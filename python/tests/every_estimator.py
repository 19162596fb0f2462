"""Every estimator that fits over a dask array and over MPI ranks, as the
scale-out tests take them (test_dask_every_estimator.py,
test_mpi_every_estimator.py), and their comparison with the in-memory,
one-process call.

The same bits wherever the library's statistics do not depend on how the
rows are split: counts, min, max, max |x| (exact in any order), exact
quantiles (the counting passes summed over the parts through the combine
hook), the clipping (its passes combined the same way), and every
statistic of an array in one part (a NaN's payload aside). Means and
variances over several parts (StandardScaler, SimpleImputer's mean) are
the parts' moments merged by
Chan's formulas, another order of additions than the devices' over the
whole array: within 1e-12 relative in float64, and 1e-5 in float32, where
the devices accumulate a whole array's float32 moments with less precision
than the merge of the parts' float64 moments (DESIGN.md's float32 bound),
and outputs of order 1 within conftest.tol. SimpleImputer's float32
means go through the cleaning's combine hook even in one part, which
merges the moments in float64 where the call without a hook keeps the
devices' float32 sums: the same bound.

Detrend and Flatten (windows along the rows, nothing fitted) and Discount
(nothing fitted) are not here: they neither merge statistics nor take
comm=."""
import numpy as np

import clscale
from conftest import make_data, tol

ROWS, COLS = 311, 7
_RANGE = ("data_min_", "data_max_", "scale_", "min_")
MOMENTS, MOMENTS_F32 = 1, 2

# name -> (make the estimator, its fitted attributes, where its statistics
# are not the same bits (MOMENTS: over several parts; MOMENTS_F32: also in
# float32 in one part), whether it has inverse_transform). SigmaClip fits
# nothing: its fit_transform clips.
ESTIMATORS = {
    "MinMaxScaler": (lambda: clscale.MinMaxScaler(), _RANGE, 0, True),
    "MinMaxScaler-clip": (lambda: clscale.MinMaxScaler(feature_range=(-1, 2), clip=True), _RANGE, 0, True),
    "StandardScaler": (lambda: clscale.StandardScaler(), ("mean_", "var_", "scale_"), MOMENTS, True),
    "MaxAbsScaler": (lambda: clscale.MaxAbsScaler(), ("max_abs_", "scale_"), 0, True),
    "RobustScaler": (lambda: clscale.RobustScaler(quantile_range=(10.0, 90.0)), ("center_", "scale_"), 0, True),
    "DecimalScaler": (lambda: clscale.DecimalScaler(), ("exponent_", "scale_", "max_abs_"), 0, True),
    "SimpleImputer-mean": (lambda: clscale.SimpleImputer(strategy="mean"), ("statistics_",), MOMENTS_F32, False),
    "SimpleImputer-median": (lambda: clscale.SimpleImputer(strategy="median"), ("statistics_",), 0, False),
    "SimpleImputer-constant": (lambda: clscale.SimpleImputer(strategy="constant", fill_value=-7.0),
                               ("statistics_",), 0, False),
    "SigmaClip": (lambda: clscale.SigmaClip(sigma=2.5, maxiters=None), (), 0, False),
}


def data(dtype, rows=ROWS, cols=COLS, seed=44):
    """rows x cols: NaN, +-Inf, a constant column, ties, far values, an
    all-missing column."""
    x = make_data((rows, cols), np.float64, seed=seed, offset=50.0, spread=3.0, all_nan_col=True)
    x[:, 2] = np.round(x[:, 2])  # ties
    x[7, 0], x[8, 0] = np.inf, -np.inf
    x[::41, 3] = 400.0  # far from the rest: clipped
    return x.astype(dtype)


def assert_same(got, want, what, moments, parts, dtype):
    """got is want bit for bit, or (moments: over several parts, or
    MOMENTS_F32 in float32) within the bound above."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, \
        f"{what}: {got.dtype}{got.shape} != {want.dtype}{want.shape}"
    missing = np.isnan(want)
    assert np.array_equal(np.isnan(got), missing), f"{what}: NaN elsewhere\n{got}\n{want}"
    got, want = got[~missing], want[~missing]  # a NaN's payload is not compared
    if not (moments and (parts > 1 or (moments == MOMENTS_F32 and dtype == np.float32))):
        assert got.tobytes() == want.tobytes(), f"{what}: not the same bits\n{got}\n{want}"
        return
    # relative on statistics, absolute on outputs of order 1 (tol)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(got, want, rtol=rtol, atol=tol(dtype), err_msg=what)
