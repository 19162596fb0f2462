"""The *_file methods: .npy files scaled file to file by the library's
streaming path equal the in-memory methods and scikit-learn; one pass and
two (a small buffer forces the statistics pass); bad files raise before
anything is written, and a failure leaves an existing output as it was."""
import os

import numpy as np
import pytest
import sklearn.preprocessing as skp

import clscale
from conftest import DTYPES, assert_close, make_data, tol


def data(shape, dtype, seed):
    x = make_data(shape, dtype, seed=seed, offset=3.0, spread=5.0, all_nan_col=True)
    x[..., -1].flat[0] = np.inf  # a column with no finite value keeps no +-Inf (scikit-learn: NaN)
    return x


def close(actual, expected, atol, what):
    """assert_close where equal infinities also count as equal."""
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    both = np.isinf(actual) & (actual == expected)
    assert_close(np.where(both, 0.0, actual), np.where(both, 0.0, expected), atol, what)


def save(tmp_path, name, x):
    p = tmp_path / name
    np.save(p, x)
    return p


ESTIMATORS = [
    pytest.param(lambda: clscale.MinMaxScaler(feature_range=(-1, 2)), id="minmax"),
    pytest.param(lambda: clscale.StandardScaler(), id="zscore"),
    pytest.param(lambda: clscale.StandardScaler(with_mean=False), id="zscore-nomean"),
    pytest.param(lambda: clscale.DecimalScaler(), id="decimal"),
]
SHAPES = [(301, 5), (4, 37, 6), (1, 3)]


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("shape", SHAPES, ids=["2d", "3d", "1row"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_fit_transform_file_equals_in_memory(tmp_path, make, shape, dtype):
    x = data(shape, dtype, seed=3)
    src = save(tmp_path, "in.npy", x)
    out = tmp_path / "out.npy"
    est = make().fit_transform_file(src, out)
    ref = make()
    expected = ref.fit_transform(x)
    y = np.load(out)
    assert y.dtype == dtype and y.shape == x.shape
    close(y, expected, tol(dtype), "fit_transform_file")
    assert est.n_features_in_ == shape[-1]
    for a in est._fitted_attrs:
        got, want = getattr(est, a), getattr(ref, a)
        if want is None:
            assert got is None
        else:
            assert_close(got, want, 1e-12 if dtype == np.float64 else 1e-6, a)


@pytest.mark.fp64
def test_minmax_file_matches_sklearn(tmp_path):
    x = data((500, 7), np.float64, seed=4)
    new = data((200, 7), np.float64, seed=5) * 3
    src, src_new = save(tmp_path, "in.npy", x), save(tmp_path, "new.npy", new)
    est = clscale.MinMaxScaler().fit_file(src)
    est.transform_file(src_new, tmp_path / "y.npy")
    with np.errstate(all="ignore"):
        ref = skp.MinMaxScaler().fit(np.where(np.isinf(x), np.nan, x))
        expected = ref.transform(np.where(np.isinf(new), np.nan, new))
    y = np.load(tmp_path / "y.npy")
    finite = np.isfinite(new)
    expected = np.where(finite | np.isnan(expected), expected, new)  # the library keeps +-Inf of other columns
    close(y, expected, 1e-12, "transform_file of new data")


@pytest.mark.parametrize("dtype", DTYPES)
def test_two_passes_when_a_matrix_exceeds_the_buffer(tmp_path, monkeypatch, dtype):
    x = data((3, 4000, 9), dtype, seed=6)  # 3 matrices of 144 kB (f32) or 288 kB, buffer 64 kB
    src = save(tmp_path, "in.npy", x)
    monkeypatch.setenv("CLSCALE_STREAM_BUFFER", str(64 * 1024))
    est = clscale.StandardScaler().fit_transform_file(src, tmp_path / "out.npy")
    expected = clscale.StandardScaler().fit_transform(x)
    close(np.load(tmp_path / "out.npy"), expected, tol(dtype), "two passes")
    assert_close(est.mean_, np.nanmean(np.where(np.isinf(x), np.nan, x).astype(np.float64), axis=1),
                 1e-12 if dtype == np.float64 else 1e-6, "mean_")


@pytest.mark.parametrize("dtype", DTYPES)
def test_inverse_transform_file_round_trips(tmp_path, dtype):
    x = data((3, 50, 4), dtype, seed=7)
    src = save(tmp_path, "in.npy", x)
    est = clscale.MinMaxScaler().fit_transform_file(src, tmp_path / "y.npy")
    est.inverse_transform_file(tmp_path / "y.npy", tmp_path / "back.npy")
    back = np.load(tmp_path / "back.npy")
    keep = ~np.isnan(np.load(tmp_path / "y.npy"))
    assert_close(np.where(keep, back, np.nan), np.where(keep, x, np.nan), 1e-9 if dtype == np.float64 else 1e-4,
                 "round trip")


@pytest.mark.parametrize("dtype", DTYPES)
def test_discount_transform_file(tmp_path, dtype):
    x = data((5, 40, 3), dtype, seed=8)
    f = np.random.default_rng(9).uniform(0.5, 1.5, (40, 3))
    src = save(tmp_path, "in.npy", x)
    clscale.Discount(f).fit(x[:1]).transform_file(src, tmp_path / "cv.npy")
    y = np.load(tmp_path / "cv.npy")
    assert y.dtype == dtype
    close(y, x.astype(np.float64) * f.astype(dtype), tol(dtype), "discount")


def test_bad_files_raise_before_anything_is_written(tmp_path):
    out = tmp_path / "out.npy"
    out.write_bytes(b"old output")
    good = save(tmp_path, "good.npy", data((20, 4), np.float32, seed=10))
    bad = {
        "text.npy": None,
        "fortran.npy": np.asfortranarray(data((20, 4), np.float32, seed=11)),
        "bigendian.npy": data((20, 4), np.float32, seed=12).astype(">f4"),
        "ints.npy": np.arange(1, 81, dtype=np.int32).reshape(20, 4),
        "onedim.npy": np.linspace(1, 2, 9),
    }
    for name, arr in bad.items():
        p = tmp_path / name
        if arr is None:
            p.write_text("not an array")
        else:
            np.save(p, arr)
        with pytest.raises(ValueError, match=name):
            clscale.MinMaxScaler().fit_transform_file(p, out)
    est = clscale.MinMaxScaler().fit_file(good)
    wide = save(tmp_path, "wide.npy", data((20, 5), np.float32, seed=13))
    with pytest.raises(ValueError, match="5 features"):
        est.transform_file(wide, out)
    with pytest.raises(ValueError, match="may not be the input"):
        est.transform_file(good, good)
    with pytest.raises(FileNotFoundError):
        est.transform_file(tmp_path / "missing.npy", out)
    assert out.read_bytes() == b"old output"


def test_a_truncated_input_fails_and_leaves_the_output(tmp_path):
    x = data((4, 300, 5), np.float32, seed=14)
    src = save(tmp_path, "in.npy", x)
    size = os.path.getsize(src)
    with open(src, "r+b") as f:
        f.truncate(size - 1000)
    out = tmp_path / "out.npy"
    out.write_bytes(b"old output")
    with pytest.raises(clscale.ClscaleError, match="in.npy"):
        clscale.MinMaxScaler().fit_transform_file(src, out)
    assert out.read_bytes() == b"old output"
    assert sorted(os.listdir(tmp_path)) == ["in.npy", "out.npy"]
