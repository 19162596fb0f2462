"""SigmaClip(comm=...) over MPI ranks: each rank's rows clipped by the
bounds of every rank's rows together, as one process clips the whole
array (the library's cleaning with its combine hooks); clipped_ and
iterations_ those of all the rows on every rank; a failure on one rank
raises on every rank.

Collective: run under mpirun (python-mpi-n1..n4, suite mpi, with
CLSCALE_TEST_MPI=1); skipped in the plain pytest run."""
import os

import numpy as np
import pytest

import clscale
from conftest import assert_close, make_data

pytestmark = [pytest.mark.fp64,
              pytest.mark.skipif(os.environ.get("CLSCALE_TEST_MPI") != "1",
                                 reason="collective: runs under mpirun (meson test --suite mpi)")]

if os.environ.get("CLSCALE_TEST_MPI") == "1":
    from mpi4py import MPI
    COMM = MPI.COMM_WORLD
    RANK, SIZE = COMM.Get_rank(), COMM.Get_size()


def _cuts(rows, how):
    """Row boundaries of SIZE parts: "uneven" (rank 0 none when there are
    several ranks), "last-empty"."""
    if how == "uneven":
        w = np.arange(SIZE, dtype=float) ** 2
        w = w if w.sum() else np.ones(1)
        return np.concatenate([[0], np.round(np.cumsum(w) / w.sum() * rows)]).astype(int)
    c = np.linspace(0, rows, SIZE).astype(int)
    return np.concatenate([c, [rows]]) if SIZE > 1 else np.array([0, rows])


def _data(dtype, rows=401):
    """Outliers to clip in every column, NaN, ties, an all-missing column."""
    x = make_data((rows, 6), np.float64, seed=95, nan=0.05, all_nan_col=True)
    x[::37, 0] = 1e3
    x[::41, 2] = -500.0
    x[:, 3] = np.round(x[:, 3])
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("how", ["uneven", "last-empty"])
@pytest.mark.parametrize("kw", [dict(), dict(cenfunc="mean", stdfunc="std", maxiters=None),
                                dict(stdfunc="mad_std", sigma=2.5, mode="clamp")],
                         ids=["median-std", "mean-std-converge", "mad-clamp"])
def test_sigma_clip_over_ranks_equals_one_process(dtype, how, kw):
    x = _data(dtype)
    c = _cuts(x.shape[0], how)
    mine = x[c[RANK]:c[RANK + 1]]
    est = clscale.SigmaClip(**kw)
    y = est.fit_transform(mine, comm=COMM)
    one = clscale.SigmaClip(**kw)
    want = one.fit_transform(x)
    assert y.shape == mine.shape and y.dtype == x.dtype
    # the same values kept (means and variances merge in another order,
    # 1e-15 relative: no decision changes on this data); a clamped value is
    # its bound, which the library's passes over several processes and its
    # one-process regimes compute an ulp apart with mad_std
    rtol = 1e-14 if kw.get("mode") == "clamp" else 0.0
    assert_close(y, want[c[RANK]:c[RANK + 1]], rtol, "clipped values")
    assert np.array_equal(est.clipped_, one.clipped_)
    assert est.iterations_ == one.iterations_
    assert all(b == est.clipped_.tobytes() for b in COMM.allgather(est.clipped_.tobytes()))
    z = clscale.SigmaClip(**kw).transform(mine, comm=COMM)
    assert np.array_equal(z, y, equal_nan=True)


def test_sigma_clip_3d_scopes_over_ranks():
    x = make_data((4, 30, 3), seed=96, nan=0.1)
    x[:, ::7, 0] = 400.0
    c = _cuts(30, "uneven")
    rows = x[:, c[RANK]:c[RANK + 1]]
    y = clscale.SigmaClip(scope="batch").fit_transform(rows, comm=COMM)
    want = clscale.SigmaClip(scope="batch").fit_transform(x)
    assert np.array_equal(y, want[:, c[RANK]:c[RANK + 1]], equal_nan=True)
    # per matrix: each rank clips its own whole matrices
    m = np.linspace(0, 4, SIZE + 1).astype(int) if SIZE <= 4 else None
    mats = x[m[RANK]:m[RANK + 1]]
    if SIZE <= 4 and all(m[1:] > m[:-1]):
        y = clscale.SigmaClip(scope="matrix").fit_transform(mats, comm=COMM)
        assert np.array_equal(y, clscale.SigmaClip(scope="matrix").fit_transform(mats), equal_nan=True)


def test_sigma_clip_failures_reach_every_rank():
    x = _data(np.float64, rows=50)
    last = SIZE - 1
    if SIZE > 1:
        bad = x[:, :3] if RANK == last else x
        with pytest.raises(ValueError, match=f"rank {last} of {SIZE} .*3 columns"):
            clscale.SigmaClip().fit_transform(bad, comm=COMM)
        sigma = 2.0 if RANK == last else 3.0
        with pytest.raises(ValueError, match="different parameters"):
            clscale.SigmaClip(sigma=sigma).fit_transform(x, comm=COMM)
    with pytest.raises(ValueError, match=f"rank {last} of {SIZE}: Expected 2D"):
        clscale.SigmaClip().fit_transform(x[0] if RANK == last else x, comm=COMM)
    dev = "no-such-device" if RANK == last else None
    with pytest.raises(clscale.ClscaleError, match=f"rank {last} of {SIZE}: "):
        clscale.SigmaClip(devices=dev).fit_transform(x, comm=COMM)
    with pytest.raises(ValueError, match="none of the"):
        clscale.SigmaClip().fit_transform(x[:0], comm=COMM)
    # the ranks still agree after every failure: a clipping goes through
    assert clscale.SigmaClip().fit(x, comm=COMM).n_features_in_ == x.shape[1]
