"""Importing clscale pins PoCL's workers as the tool does (python/clscale/
_affinity.py): POCL_AFFINITY=1 unless the caller set it (kept as given) or
the process may not run on every online core. Each case imports clscale in
a fresh interpreter: PoCL and the package read it once per process."""
import os
import subprocess
import sys

import pytest

PROBE = "import os, clscale; print(os.environ.get('POCL_AFFINITY', '-'))"


def _import_and_read(env, prefix=()):
    out = subprocess.run(list(prefix) + [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "POCL_AFFINITY"}
    env.update(extra)
    return env


def test_pinned_when_unset_on_every_core():
    if len(os.sched_getaffinity(0)) != os.cpu_count():
        pytest.skip("this process may not run on every online core")
    assert _import_and_read(_env()) == "1"


def test_the_callers_choice_is_kept():
    assert _import_and_read(_env(POCL_AFFINITY="0")) == "0"
    assert _import_and_read(_env(POCL_AFFINITY="1")) == "1"


def test_left_alone_on_part_of_the_cores():
    if os.cpu_count() < 2 or not os.path.exists("/usr/bin/taskset"):
        pytest.skip("needs two cores and taskset")
    assert _import_and_read(_env(), ("/usr/bin/taskset", "-c", "0")) == "-"
