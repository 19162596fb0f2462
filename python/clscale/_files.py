"""Files larger than memory: the estimators' *_file methods.

A .npy file is scaled file to file by the library's streaming path
(cls_fit_transform): a fixed pool of buffers goes round reading ahead,
computing on every device and writing behind, so a file of any size costs
about 300 MB of memory and its data never passes through numpy. The output
is written to a temporary beside it and renamed only when everything
succeeded. Results equal the in-memory methods' (fit_transform_file may
read the file twice: see its docstring).

ScalerFiles serves every scaler (_base.Scaler and _robust's affine
scalers, through a few hooks); stream_clean() the cleaning estimators and
the fused clscale.Pipeline; via_memory() is the fallback for what the
library does not stream (most_frequent over more than a buffer).
"""
import os
import tempfile

import numpy as np
from sklearn.utils.validation import check_is_fitted

from . import _clscale
from ._context import check_selector, context

_DTYPES = {np.dtype("<f4"): _clscale.F32, np.dtype("<f8"): _clscale.F64}


def npy_layout(path):
    """(offset, dtype, shape) of the array in the .npy file `path`, read
    from its header alone: little-endian float32/float64, C order, 2-D or
    3-D. Anything else raises ValueError naming the file."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            elif version in ((2, 0), (3, 0)):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f"format version {version}")
        except ValueError as e:
            raise ValueError(f"{path}: not a .npy file ({e})") from None
        offset = f.tell()
    if dtype not in _DTYPES:
        raise ValueError(f"{path}: dtype {dtype.str}; little-endian float32 or float64 (<f4, <f8) is needed")
    if fortran and len(shape) > 1:
        raise ValueError(f"{path}: Fortran order; C order is needed")
    if len(shape) not in (2, 3) or 0 in shape:
        raise ValueError(f"{path}: shape {shape}; 2-D (rows x cols) or 3-D (batch x rows x cols) "
                         f"with no empty dimension is needed")
    return offset, dtype, shape


def _shape3(shape):
    return (1,) + tuple(shape) if len(shape) == 2 else tuple(shape)


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except FileNotFoundError:
        return False


def _check_paths(in_path, out_path):
    if _same_file(in_path, out_path):
        raise ValueError(f"{os.fspath(out_path)}: the output may not be the input file")


def _repaired(path, fitted):
    """`fitted` (the statistics of the .npy file `path`) with float32
    moments out of float32's range taken again in float64 from the file
    (_base.repair_moments, through a read-only mapping: only those
    columns are read)."""
    from ._base import moments_to_redo, repair_moments  # _base imports this module
    if moments_to_redo(fitted) is None:
        return fitted
    return repair_moments(np.load(os.fspath(path), mmap_mode="r"), fitted)


class ScalerFiles:
    """fit_file, transform_file, inverse_transform_file and
    fit_transform_file for the scalers (mixed into _base.Scaler and
    _robust._AffineScaler). The hooks below are _base.Scaler's; the affine
    scalers, whose statistics are restated for the library's z-score map,
    override them."""

    # ---- hooks ----

    def _file_pipeline(self):
        """stream_fit's pipeline keywords (scaler, lo, hi, clip, ...)."""
        lo, hi = self._range()
        return dict(scaler=self._code, lo=lo, hi=hi, clip=self._clip())

    def _install_file(self, fitted, dtype):
        """The fitted state from stream_fit's statistics of `dtype` data."""
        self._install(fitted)

    def _file_transform_args(self, info, inverse):
        """stream_file's keywords for a transform with _transform_stats()."""
        return dict(scaler=self._code, scope=info["scope"], lo=info["lo"], hi=info["hi"],
                    clip=self._clip() and not inverse, inverse=inverse)

    def _file_scope(self, shape):
        return self._scope_of(np.empty((1,) * len(shape)))

    def _file_features(self, path, shape, reset):
        n = shape[-1]
        if reset:
            self.n_features_in_ = n
            if "feature_names_in_" in self.__dict__:
                del self.feature_names_in_
        elif n != self.n_features_in_:
            raise ValueError(f"{os.fspath(path)} has {n} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input.")

    def fit_file(self, path):
        """Fits the statistics on the array stored in the .npy file `path`
        (one read of the file, through a fixed pool of buffers; NaN and
        +-Inf ignored), as fit() would on the array in memory."""
        self._reset()
        self._check_params()
        check_selector(self.devices)
        offset, dtype, shape = npy_layout(path)
        self._file_features(path, shape, reset=True)
        with context(self.devices) as ctx:
            fitted = _clscale.stream_fit(ctx, os.fspath(path), offset, _DTYPES[dtype], _shape3(shape),
                                         scope=self._file_scope(shape), **self._file_pipeline())
        self._install_file(_repaired(path, fitted), dtype)
        return self

    def transform_file(self, in_path, out_path):
        """Writes transform() of the array in the .npy file `in_path` to the
        .npy file `out_path` (replaced only when everything succeeded)."""
        return self._transform_file(in_path, out_path, inverse=False)

    def inverse_transform_file(self, in_path, out_path):
        """Writes inverse_transform() of the file `in_path` to `out_path`."""
        return self._transform_file(in_path, out_path, inverse=True)

    def _transform_file(self, in_path, out_path, inverse):
        check_is_fitted(self)
        check_selector(self.devices)
        _check_paths(in_path, out_path)
        _, _, shape = npy_layout(in_path)
        self._file_features(in_path, shape, reset=False)
        s = self._transform_stats()
        info = s.info
        if info["scope"] == _clscale.SCOPE_MATRIX and _shape3(shape)[0] != info["groups"]:
            raise ValueError(f"the statistics were fitted per matrix of {info['groups']} matrices; "
                             f"{os.fspath(in_path)} has {_shape3(shape)[0]}")
        with context(self.devices) as ctx:
            _clscale.stream_file(ctx, os.fspath(in_path), os.fspath(out_path), s,
                                 **self._file_transform_args(info, inverse))
        self._empty_to_nan(out_path)

    def fit_transform_file(self, in_path, out_path):
        """fit_file(in_path) then transform_file(in_path, out_path). Where
        the library's fused fit-and-scale computes this estimator's map, the
        file is read once when each statistics group (a matrix, or the
        whole array with scope="batch") fits one 64 MiB buffer, else twice;
        columns that scikit-learn maps otherwise than the library (near-
        constant ones) make it transform the file once more."""
        if not self._fusable():
            self.fit_file(in_path)
            self.transform_file(in_path, out_path)
            return self
        self._reset()
        self._check_params()
        check_selector(self.devices)
        _check_paths(in_path, out_path)
        _, _, shape = npy_layout(in_path)
        self._file_features(in_path, shape, reset=True)
        lo, hi = self._range()
        with context(self.devices) as ctx:
            fitted = _clscale.stream_file(ctx, os.fspath(in_path), os.fspath(out_path), None, scaler=self._code,
                                          scope=self._file_scope(shape), lo=lo, hi=hi, clip=self._clip())
        repaired = _repaired(in_path, fitted)
        self._install(repaired)
        if repaired is not fitted or self._refit_count(repaired.summary()):
            self.transform_file(in_path, out_path)
        else:
            self._empty_to_nan(out_path)
        return self

    def _empty_to_nan(self, out_path):
        # the columns with no finite value, NaN as in memory (_nan_empty),
        # through a mapping of the finished file
        if self._empty_columns() is None:
            return
        Y = np.load(os.fspath(out_path), mmap_mode="r+")
        self._nan_empty(Y)
        Y.flush()
        del Y


class DiscountFiles:
    """transform_file for Discount."""

    def transform_file(self, in_path, out_path):
        """Writes X * factors of the .npy file `in_path` to `out_path`
        (replaced only when everything succeeded), one read and one write
        of the file."""
        check_is_fitted(self)
        check_selector(self.devices)
        _check_paths(in_path, out_path)
        _, dtype, shape = npy_layout(in_path)
        if shape[-1] != self.n_features_in_:
            raise ValueError(f"{os.fspath(in_path)} has {shape[-1]} features, but Discount is expecting "
                             f"{self.n_features_in_} features as input.")
        with context(self.devices) as ctx:
            _clscale.stream_file(ctx, os.fspath(in_path), os.fspath(out_path), None,
                                 factors=self._factors[dtype], fitted=False)


# ---- cleaning: SimpleImputer, SigmaClip, the fused clscale.Pipeline ----

def stream_clean(devices, in_path, out_path, opts, scope, scaler=None):
    """Cleans the .npy file in_path into out_path with the library's
    streamed cleaning stage (cls_fit_transform with cls_pipeline.clean);
    `opts` are clean()'s keywords, `scope` the pipeline's, `scaler`
    (stream_file's scaler keywords) the scaler fused after it, if any.

    Returns (dtype, shape, (fitted, missing, clipped, fill, iterations)),
    cls_clean's outputs as clean() gives them; or (dtype, shape, None)
    when the library cannot stream it: most_frequent imputation of a file
    larger than one buffer (the library needs a column's values in
    memory), which the library refuses with CLS_E_UNSUPPORTED before
    any pass, out_path untouched; the caller then runs via_memory()."""
    _check_paths(in_path, out_path)
    _, dtype, shape = npy_layout(in_path)
    b, _, c = _shape3(shape)
    groups = b if scope == _clscale.SCOPE_MATRIX else 1
    try:
        with context(devices) as ctx:
            res = _clscale.stream_file(ctx, os.fspath(in_path), os.fspath(out_path), None, scope=scope,
                                       clean=opts, clean_shape=(groups, c),
                                       fitted=scaler is not None, **(scaler or {}))
    except _clscale.ClscaleError as e:
        if getattr(e, "status", None) != "CLS_E_UNSUPPORTED":
            raise
        return dtype, shape, None
    return dtype, shape, res


def temp_beside(path):
    """A new empty file in `path`'s folder (mode as a new file's), for
    writing there and renaming onto `path`."""
    folder = os.path.dirname(os.path.abspath(os.fspath(path)))
    fd, tmp = tempfile.mkstemp(prefix=".clscale-", suffix=".npy", dir=folder)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    return tmp


def via_memory(in_path, out_path, run):
    """What the library does not stream: the input mapped (np.load with
    mmap_mode="r"), run(X, Y) writing into a mapped temporary beside
    out_path, synced and renamed onto it when everything succeeded (on any
    failure the temporary is removed and out_path left as it was). Memory:
    the page cache and what the in-memory call allocates for itself."""
    X = np.load(os.fspath(in_path), mmap_mode="r")
    tmp = temp_beside(out_path)
    try:
        Y = np.lib.format.open_memmap(tmp, mode="w+", dtype=X.dtype, shape=X.shape)
        result = run(X, Y)
        Y.flush()
        del Y
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, os.fspath(out_path))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return result
