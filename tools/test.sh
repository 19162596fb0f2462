#!/bin/sh
# The test suite on a fresh Debian 12 machine: set up, build, then run every
# test on PoCL, rusticl, Oclgrind and all three at once (arguments go to
# `meson test`, e.g. --suite pocl; the Python package's pytest runs are
# meson tests too, suite python), then the README's Python example with the
# package installed in .venv.
# Every step runs even when one before it failed; the failed steps are listed
# at the end and the exit status is 1 if any failed.
set -u
cd "$(dirname "$0")/.."

failed=""
step() {
    name=$1
    shift
    echo "== $name"
    "$@" || failed="$failed
  $name (exit $?)"
}

step "set up and build (tools/setup.sh)" sh tools/setup.sh
step "meson test $*" meson test -C build --print-errorlogs "$@"

readme_python() {
    awk '/^```python$/ {on = 1; next} /^```$/ {on = 0} on' README.md > build/readme-example.py &&
        OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd .venv/bin/python build/readme-example.py
}
step "the README's Python example" readme_python

if [ -n "$failed" ]; then
    echo "clscale tests: these steps failed:$failed" >&2
    exit 1
fi
echo "clscale tests: every step passed"
