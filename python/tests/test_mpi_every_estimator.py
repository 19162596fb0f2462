"""Every estimator with comm= over 1 to 4 MPI ranks (the rows split
evenly, unevenly with rank 0 empty, or the last rank empty) against one
process's call on the whole array: the fitted statistics are the same bits
on every rank and one process's bit for bit but for means and variances
over several ranks (every_estimator.py says why and how close); each
rank's transform and fit_transform are its rows of one process's.

Collective: run under mpirun (the meson tests python-mpi-n1..n4, suite
mpi, CLSCALE_TEST_MPI=1); every rank runs every test in the same order.
Skipped in the plain pytest run."""
import os

import numpy as np
import pytest

from conftest import DTYPES
from every_estimator import ESTIMATORS, assert_same, data

pytestmark = pytest.mark.skipif(os.environ.get("CLSCALE_TEST_MPI") != "1",
                                reason="collective: runs under mpirun (meson test --suite mpi)")

if os.environ.get("CLSCALE_TEST_MPI") == "1":
    from mpi4py import MPI
    COMM = MPI.COMM_WORLD
    RANK, SIZE = COMM.Get_rank(), COMM.Get_size()


# one rank: one split (the three are the same)
HOWS = ["even", "uneven", "last-empty"] if os.environ.get("CLSCALE_TEST_MPI") == "1" and SIZE > 1 else ["even"]


def _cuts(rows, how):
    """Row boundaries of SIZE parts: "even", "uneven" (rank 0 empty when
    there are several ranks, the rest uneven), "last-empty"."""
    if how == "even":
        return np.linspace(0, rows, SIZE + 1).astype(int)
    if how == "uneven":
        w = np.arange(SIZE, dtype=float) ** 2  # 0, 1, 4, 9: rank 0 empty
        w = w if w.sum() else np.ones(1)
        return np.concatenate([[0], np.round(np.cumsum(w) / w.sum() * rows)]).astype(int)
    c = np.linspace(0, rows, SIZE).astype(int)  # SIZE - 1 parts, the last rank none
    return np.concatenate([c, [rows]]) if SIZE > 1 else np.array([0, rows])


def _same_on_every_rank(value, what):
    mine = np.asarray(value).tobytes()
    assert all(b == mine for b in COMM.allgather(mine)), f"{what}: the ranks hold different bits"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("name", list(ESTIMATORS), ids=list(ESTIMATORS))
def test_comm_equals_one_process(name, how, dtype):
    make, attrs, moments, inverse = ESTIMATORS[name]
    x = data(dtype)
    c = _cuts(x.shape[0], how)
    mine = x[c[RANK]:c[RANK + 1]]
    parts = int(np.count_nonzero(np.diff(c)))  # ranks that hold rows
    one = make()
    want = one.fit_transform(x)[c[RANK]:c[RANK + 1]]
    if name != "SigmaClip":
        est = make().fit(mine, comm=COMM)
        assert est.n_features_in_ == x.shape[1]
        for a in attrs:
            assert_same(getattr(est, a), getattr(one, a), a, moments, parts, dtype)
            _same_on_every_rank(getattr(est, a), a)
        if mine.shape[0]:
            assert_same(est.transform(mine), one.transform(x)[c[RANK]:c[RANK + 1]], "transform", moments, parts,
                        dtype)
            if inverse:
                assert_same(est.inverse_transform(est.transform(mine)),
                            one.inverse_transform(one.transform(x))[c[RANK]:c[RANK + 1]], "inverse_transform",
                            moments, parts, dtype)
    est = make()
    y = est.fit_transform(mine, comm=COMM)
    assert y.shape == mine.shape and y.dtype == x.dtype
    assert_same(y, want, "fit_transform", moments, parts, dtype)
    if name == "SigmaClip":
        assert np.array_equal(est.clipped_, one.clipped_) and est.iterations_ == one.iterations_
        _same_on_every_rank(est.clipped_, "clipped_")
