#!/bin/sh
# The Python package as a pip user gets it: `pip install .` in a fresh venv
# (build isolation, no system packages), so numpy and scikit-learn are
# today's releases from the package index, then the README's Python example
# as printed. CI runs it (.ci/run); it needs the package index.
#
# usage: sh tools/pip_check.sh SCRATCH     exit 0 passed, 1 failed, 77 skipped
# (77: the package index cannot be reached; nothing was tested)
set -u
cd "$(dirname "$0")/.."
scratch=${1:?usage: pip_check.sh SCRATCH}
rm -rf "$scratch"
mkdir -p "$scratch"
scratch=$(cd "$scratch" && pwd)   # absolute: the example runs in a folder of its own
venv="$scratch/venv"

if ! /usr/bin/python3 -m venv "$venv"; then
    echo "pip check: cannot make a venv (python3-venv)" >&2
    exit 1
fi
# the index reachable at all: a skip, not a failure, without it
if ! timeout 60 "$venv/bin/pip" download -q --no-deps -d "$scratch/probe" pip >/dev/null 2>&1; then
    echo "pip check: SKIP: the package index cannot be reached"
    exit 77
fi
echo "pip check: pip install . (build isolation)"
if ! "$venv/bin/pip" install -q . >"$scratch/install.log" 2>&1; then
    tail -40 "$scratch/install.log" >&2
    echo "pip check: pip install . failed" >&2
    exit 1
fi
"$venv/bin/python" -c 'import numpy, sklearn; print("pip check: numpy", numpy.__version__, "scikit-learn", sklearn.__version__)'
mkdir -p "$scratch/run"
python3 tools/extract_example.py README.md "$scratch/run/example.py" python || exit 1
# the example runs in a folder of its own (it writes files), on PoCL
if ! (cd "$scratch/run" && OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd "$venv/bin/python" example.py); then
    echo "pip check: the README's Python example failed with the index's releases" >&2
    exit 1
fi
echo "pip check: the README's Python example ran"
