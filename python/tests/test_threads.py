"""The GIL is released while the library works, and two threads calling at
once get two contexts and run at once, each result right."""
import sys
import threading

import numpy as np
import pytest

import clscale
from clscale._context import context
from clscale import _clscale
from conftest import assert_close, make_data

pytestmark = pytest.mark.fp64


def test_the_gil_is_released_during_a_library_call():
    # With a 10 s switch interval a thread holding the GIL keeps it for the
    # whole call; the main thread, woken by `started`, can run during the
    # call only if the call released the GIL.
    x = make_data((400, 20000), seed=61, nan=0.0)  # 64 MB: tens of milliseconds
    y = np.empty_like(x)
    started, state = threading.Event(), {"done": False}

    def work():
        with context(None) as ctx:
            started.set()
            ctx.fit_transform(x, y, scaler=_clscale.MINMAX)
        state["done"] = True

    old = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    try:
        t = threading.Thread(target=work)
        t.start()
        started.wait()
        ran_during_call = not state["done"]
        t.join()
    finally:
        sys.setswitchinterval(old)
    assert ran_during_call, "the main thread could not run while the library worked: GIL held"


def test_two_threads_run_two_calls_at_once_with_right_results():
    xs = [make_data((200, 50), seed=62 + i, offset=i * 100.0) for i in range(2)]
    outs, errors = [None, None], []
    barrier = threading.Barrier(2)

    def work(i):
        try:
            barrier.wait()
            est = clscale.StandardScaler()
            for _ in range(5):
                outs[i] = est.fit_transform(xs[i])
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i in range(2):
        assert_close(outs[i], clscale.StandardScaler().fit_transform(xs[i]), 0.0, f"thread {i}")


def test_one_thread_reuses_one_context():
    from clscale import _context
    clscale.MinMaxScaler().fit(make_data((10, 3), seed=64))
    with context(None) as a:
        pass
    with context(None) as b:
        pass
    assert a is b
    assert len(_context._pools[None]) >= 1
