"""clscale for numpy and scikit-learn: feature scaling and discounting of
large float arrays on every OpenCL device of the machine at once.

    >>> import numpy as np, clscale
    >>> x = np.random.default_rng(0).uniform(-5, 5, (1000, 8))
    >>> y = clscale.MinMaxScaler().fit_transform(x)

Estimators (scikit-learn transformers, usable in Pipeline and
ColumnTransformer): MinMaxScaler, StandardScaler, DecimalScaler, Discount,
and for cleaning SimpleImputer, SigmaClip, Detrend and Flatten (light
curves along the rows). Functions with numpy's and
astropy's signatures, exact on the devices: nanquantile, nanpercentile,
nanmedian, sigma_clip and sigma_clipped_stats; describe(), the data
summary of `clscale describe` for an array in memory. Light curves:
savgol_filter and uniform_filter1d with scipy's signatures, flatten
(lightkurve's) and bin, for a whole batch along an axis. `make_pipeline()` and
`Pipeline` are scikit-learn's, except that a leading SimpleImputer (mean or
constant) and a clscale scaler after it are fitted in one pass on the
devices.
C-contiguous float32/float64 arrays go to the devices without a copy; the
GIL is released while they work. `device_fit_transform()` and `device_transform()` scale pyopencl
arrays where they are, on their own OpenCL context and queue. `devices()`
lists the devices; `load()`
reads a statistics file written by `save()` or `clscale normalize
--stats-out`. A new output array reuses the memory of an output that is no
longer referenced (`set_output_cache()` bounds or turns that off). Device, driver and file failures raise ClscaleError (a
RuntimeError carrying the library's message); bad arguments ValueError.
"""
from ._affinity import pin_pocl as _pin_pocl

_pin_pocl()  # before the extension makes the first OpenCL call

from ._clscale import ClscaleError, Stats  # noqa: E402
from ._clscale import version as _library_version
from ._base import load
from ._clean import SigmaClip, SimpleImputer
from ._context import devices
from ._device import device_fit_transform, device_transform
from ._discount import Discount
from ._functions import describe, nanmedian, nanpercentile, nanquantile, sigma_clip, sigma_clipped_stats
from ._output import set_output_cache
from ._lightcurves import Detrend, Flatten, bin, flatten, savgol_filter, uniform_filter1d
from ._pipeline import Pipeline, make_pipeline
from ._robust import MaxAbsScaler, RobustScaler
from ._scalers import DecimalScaler, MinMaxScaler, StandardScaler

__version__ = _library_version()

__all__ = ["ClscaleError", "DecimalScaler", "Detrend", "Discount", "Flatten", "MaxAbsScaler", "MinMaxScaler", "Pipeline",
           "RobustScaler", "SigmaClip", "SimpleImputer",
           "StandardScaler", "Stats", "bin", "describe", "device_fit_transform", "device_transform", "devices", "load",
           "flatten", "make_pipeline",
           "nanmedian", "nanpercentile", "nanquantile", "savgol_filter", "set_output_cache", "sigma_clip",
           "sigma_clipped_stats", "uniform_filter1d", "__version__"]
