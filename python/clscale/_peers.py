"""The installed peers' differences between versions, in one place (for
scikit-learn: _base.py): the package follows the version the user runs.

numpy: normalize_axis_index and AxisError moved in numpy 2 (the old
names are gone there). astropy: sigma_clip's working copy and unmasked
result kept float data in its own type (float32, float16, big-endian)
and converted integers to float32 in newer releases, where older ones
(5.x) made both float64; asked of the installed astropy once, on the
first call that needs it, by a clipping of three values. numpy 2
interpolates float32 data's quantiles at a Python number q in float32
(numpy 1 in float64, as the library). Also newer
astropy's fast clipping (an axis, named functions, no grow) keeps the
last bounds when an iteration clips every value left (all masked), where
older astropy went on to NaN bounds that clip nothing (the library's)."""
import functools
import importlib.util

import numpy as np

try:
    from numpy.lib.array_utils import normalize_axis_index  # numpy >= 2
except ImportError:  # numpy 1.x
    from numpy.core.multiarray import normalize_axis_index

AxisError = np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError

__all__ = ["AxisError", "normalize_axis_index", "clip_dtype", "astropy_keeps_last_bounds",
           "astropy_user_warning", "numpy_interpolates_float32"]


@functools.lru_cache(maxsize=None)
def numpy_interpolates_float32():
    """Whether the installed numpy interpolates float32 data's quantiles
    in float32 at a Python float or int q (numpy 2's weak promotion; numpy
    1 interpolates in float64 and returns float64): five values where the
    two roundings differ."""
    x = np.array([2.4392120838165283, 3.5738637447357178, 6.242035865783691, 0.499717652797699,
                  5.772739410400391], dtype=np.float32)
    got = np.nanquantile(x, 0.37)
    return got.dtype == np.float32 and got != np.float32(np.nanquantile(x.astype(np.float64), 0.37))


@functools.lru_cache(maxsize=None)
def _astropy_keeps_float32():
    """Whether the installed astropy's sigma_clip keeps float32 data's
    type in its working copy (True without astropy: its current
    releases' behaviour)."""
    if importlib.util.find_spec("astropy") is None:
        return True
    from astropy.stats import sigma_clip
    return sigma_clip(np.arange(3, dtype=np.float32), axis=0, masked=False).dtype == np.float32


def clip_dtype(dtype, masked_input=False):
    """The type of astropy's float working copy of data of `dtype` (its
    clipping with an axis or grow, and its unmasked result with a
    copy): float64 in older astropy and for masked input of the iterating
    path; else the data's own float type, float32 for integers."""
    dtype = np.dtype(dtype)
    if masked_input or not _astropy_keeps_float32():
        return np.dtype(np.float64)
    return dtype if dtype.kind == "f" else np.dtype(np.float32)


@functools.lru_cache(maxsize=None)
def astropy_keeps_last_bounds():
    """Whether the installed astropy's fast clipping keeps the bounds that
    clipped every value left (a mean centre and a zero MAD clip all five
    values here), rather than NaN bounds (True without astropy)."""
    if importlib.util.find_spec("astropy") is None:
        return True
    import warnings
    from astropy.stats import sigma_clip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, lo, _ = sigma_clip(np.array([0.0, 0.0, 0.0, 1.0, 1.0]), axis=0, cenfunc="mean", stdfunc="mad_std",
                              return_bounds=True)
    return bool(np.isfinite(lo))


@functools.lru_cache(maxsize=None)
def has_astropy():
    """Whether astropy is installed (nothing imported to know it)."""
    return importlib.util.find_spec("astropy") is not None


def astropy_user_warning():
    """astropy's AstropyUserWarning (a UserWarning), the class of the
    warning its sigma_clip gives for NaN or +-Inf in its input; None
    without astropy (clscale then gives none: NaN and +-Inf are its
    missing values)."""
    if not has_astropy():
        return None
    from astropy.utils.exceptions import AstropyUserWarning
    return AstropyUserWarning
