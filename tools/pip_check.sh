#!/bin/sh
# The Python package as a pip user gets it: `pip install .` (build
# isolation, no system packages) into a venv of the package index's
# releases (numpy, scikit-learn, astropy: tools/pip_check_requirements.txt
# beside pyproject.toml's dependencies), then the README's Python example
# as printed and the package's own test suite (python/tests: the peers'
# suites, check_estimator, the tags, numpy's signatures, ...; without
# test_bench.py, which tests the benchmark, and what needs dask, mpi4py or
# the build tree, which skips) in that venv. CI runs it (.ci/run); it needs
# the package index.
#
# The venv is kept between runs outside the clone, in $CLSCALE_PIP_CACHE
# (default ~/.cache/clscale-pip-check), keyed by the requirements, the
# interpreter and the ISO week: a new week (or new requirements) makes it
# afresh with the index's releases of the day, in between only clscale is
# reinstalled (pip's own download cache sits beside it). One run at a time
# uses the cache (flock).
#
# usage: sh tools/pip_check.sh SCRATCH     exit 0 passed, 1 failed, 77 skipped
# (77: the package index cannot be reached; nothing was tested)
# The tests' kernel caches: $CLSCALE_CACHE_DIR and $POCL_CACHE_DIR when set
# (CI passes the plain build's), else folders in SCRATCH;
# $PIP_CHECK_PYTEST_ARGS: more pytest arguments (e.g. --durations=10).
set -u
cd "$(dirname "$0")/.."
t0=$(date +%s)
elapsed() { echo "$(($(date +%s) - t0)) s"; }
scratch=${1:?usage: pip_check.sh SCRATCH}
rm -rf "$scratch"
mkdir -p "$scratch"
scratch=$(cd "$scratch" && pwd)   # absolute: the example runs in a folder of its own

cache=${CLSCALE_PIP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clscale-pip-check}
mkdir -p "$cache" || { echo "pip check: cannot make $cache" >&2; exit 1; }
cache=$(cd "$cache" && pwd)
exec 9>"$cache/lock"
flock 9 || { echo "pip check: cannot lock $cache/lock" >&2; exit 1; }
key=$( (cat tools/pip_check_requirements.txt; sed -n '/^dependencies/p' pyproject.toml
        /usr/bin/python3 -VV; date -u +%G-W%V) | sha256sum | cut -c1-16)
venv="$cache/venv-$key"
export PIP_CACHE_DIR="$cache/pip"
for old in "$cache"/venv-*; do   # last week's venvs and those of other requirements
    [ "$old" = "$venv" ] || rm -rf "$old"
done

# the index reachable at all: a skip, not a failure, without it
if ! timeout 60 /usr/bin/python3 -m pip download -q --no-deps -d "$scratch/probe" pip >/dev/null 2>&1; then
    echo "pip check: SKIP: the package index cannot be reached"
    exit 77
fi
if [ -f "$venv/.complete" ]; then
    echo "pip check: the cached venv $venv, pip install . again (build isolation)"
    install="--force-reinstall --no-deps ."
    fresh=0
else
    rm -rf "$venv"
    if ! /usr/bin/python3 -m venv "$venv"; then
        echo "pip check: cannot make a venv (python3-venv)" >&2
        exit 1
    fi
    echo "pip check: a fresh venv, pip install . and the requirements (build isolation)"
    install=". -r tools/pip_check_requirements.txt"
    fresh=1
fi
# shellcheck disable=SC2086 # $install is words
if ! "$venv/bin/pip" install -q $install >"$scratch/install.log" 2>&1; then
    tail -40 "$scratch/install.log" >&2
    [ "$fresh" = 1 ] && rm -rf "$venv"   # half made: made afresh next time
    echo "pip check: pip install failed" >&2
    exit 1
fi
touch "$venv/.complete"
echo "pip check: installed after $(elapsed)"
"$venv/bin/python" -c 'import numpy, sklearn, astropy
print("pip check: numpy", numpy.__version__, "scikit-learn", sklearn.__version__, "astropy", astropy.__version__)'
mkdir -p "$scratch/run" "$scratch/tmp"
python3 tools/extract_example.py README.md "$scratch/run/example.py" python || exit 1
# the example runs in a folder of its own (it writes files), on PoCL
if ! (cd "$scratch/run" && OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd "$venv/bin/python" example.py); then
    echo "pip check: the README's Python example failed with the index's releases" >&2
    exit 1
fi
echo "pip check: the README's Python example ran ($(elapsed))"
# the tests from a folder of their own too: `import clscale` is the
# installed package, not the clone's python/clscale (which has no extension)
tests=$(cd python/tests && pwd)
# shellcheck disable=SC2086 # $PIP_CHECK_PYTEST_ARGS is words
if ! (cd "$scratch/run" && env CLSCALE_TEST_IMPL=pocl CLSCALE_TEST_TMP="$scratch/tmp" \
          CLSCALE_CACHE_DIR="${CLSCALE_CACHE_DIR:-$scratch/kcache}" \
          POCL_CACHE_DIR="${POCL_CACHE_DIR:-$scratch/pocl-cache}" PYTHONDONTWRITEBYTECODE=1 \
          "$venv/bin/python" -m pytest -q -p no:cacheprovider -rs ${PIP_CHECK_PYTEST_ARGS:-} \
          --ignore="$tests/test_bench.py" "$tests"); then
    echo "pip check: the package's tests failed with the index's releases" >&2
    exit 1
fi
echo "pip check: the package's tests passed with the index's releases ($(elapsed) in all)"
